"""Pulumi program entry (`main:` in Pulumi.yaml). `python -m infra` is the command line, not this file."""

from eks_karpenter import build_platform, read_stack_config

build_platform(read_stack_config())
