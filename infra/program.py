"""Pulumi program entry (`main:` in Pulumi.yaml). `python -m infra` is the command line, not this file."""

from infra.platform import main

main()
