"""Refusals of the running program that need the account or the cluster, made before anything is registered."""

from __future__ import annotations

import pulumi_aws as aws

from eks_karpenter.arns import EXAMPLE_ACCOUNT, REGION_KEY, example_account_issues
from eks_karpenter.config.errors import ConfigError
from eks_karpenter.platform.access.guardrails import pool_rights_issues
from eks_karpenter.platform.cluster.rules import allow_listed_cidrs, example_range_issues
from eks_karpenter.platform.stack import StackConfig


def refuse_examples(cfg: StackConfig, source: str, project: str) -> None:
    """A stack copied from the shipped examples and not filled in: in a real run (the caller's account is not the
    example account the offline plan runs as) its ARNs of the example account are refused, before anything is
    registered, instead of access entries for principals that do not exist; so are API allow-list CIDRs in a
    documentation range (RFC 5737, RFC 3849), which would let no deployer in."""
    if aws.get_caller_identity().account_id == EXAMPLE_ACCOUNT:
        return
    written = cfg.model_dump(by_alias=True, exclude_defaults=True, mode="json")
    issues = [issue for key, value in written.items()
              for issue in example_account_issues(value, (REGION_KEY if key == "region" else f"{project}:{key}",))]
    # The `deployerCidr` shortcut first: it fills `publicAccessCidrs`, and is where its value was written.
    shortcut = [((f"{project}:deployerCidr",), cfg.deployer_cidr)] if cfg.deployer_cidr else []
    issues += example_range_issues([*shortcut, *allow_listed_cidrs(cfg.cluster, (f"{project}:cluster",))])
    if issues:
        raise ConfigError(source, issues)


def refuse_guardrails_before_1_30(cfg: StackConfig, version: str, source: str, project: str) -> None:
    """An adopted cluster's real version decides whether the teams' admission policies can exist (the config's
    `version` is the created cluster's, checked with the stack's other rules)."""
    issues = pool_rights_issues(cfg.access.teams, version, (f"{project}:access",), "the existing cluster")
    if issues:
        raise ConfigError(source, issues)
