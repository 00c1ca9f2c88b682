"""This repository's own Pulumi program (`program.py`) and its `python -m infra` entry: a thin user of the
`eks_karpenter` library, exactly like any consumer project."""
