"""Validation of the stack's IAM settings that no field type can express."""

from __future__ import annotations

from eks_karpenter.arns import arn_issues, parse_arn
from eks_karpenter.config.errors import Issue, KeyPath


def permissions_boundary_issues(arn: str, at: KeyPath, region: str | None, accounts: tuple[str, ...]) -> list[Issue]:
    """Problems with `eks-karpenter:permissionsBoundary`: it must be a customer managed policy (the account's
    administrators own it) in the stack's partition, and in `aws:allowedAccountIds` when they are given."""
    parsed = parse_arn(arn)
    if parsed is None or parsed.service != "iam":  # malformed, or another service's ARN
        return arn_issues(arn, at, service="iam", region=region or "", accounts=(), regional=False)
    if not parsed.resource.startswith("policy/"):
        return [Issue(at, "not a managed policy: a boundary is a policy ARN, arn:PARTITION:iam::ACCOUNT:policy/NAME",
                      arn)]
    if parsed.account == "aws":
        return [Issue(at, "an AWS managed policy: name a customer managed policy your account's administrators own "
                      "(AWS changes its own policies, and with them what every role here may do)", arn)]
    if region is None:  # aws:region is missing or malformed: its own error says so
        return []
    return arn_issues(arn, at, service="iam", region=region, accounts=accounts, regional=False)
