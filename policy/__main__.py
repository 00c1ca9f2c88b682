"""Policy pack entry point: Pulumi runs this file. The policies live in `guardrails.py`, importable and tested.

Constructing `PolicyPack` starts the analyzer's gRPC server and blocks, so it happens here and nowhere else.
"""

from guardrails import POLICIES  # Pulumi runs the pack folder as a script: its own modules import top-level
from pulumi_policy import EnforcementLevel, PolicyPack

PolicyPack(
    name="eks-karpenter-guardrails",
    policies=POLICIES,
    enforcement_level=EnforcementLevel.MANDATORY,
)
