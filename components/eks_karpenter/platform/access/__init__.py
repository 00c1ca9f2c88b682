"""Cluster access: EKS access entries for admins and namespace-scoped teams, and the provider's credentials."""

from eks_karpenter.platform.access.component import Access, AccessArgs, creator_conflicts
from eks_karpenter.platform.access.config import AccessConfig, ProviderCredentials, Team
from eks_karpenter.platform.access.plan import (
    POLICIES,
    access_entries,
    consumer_access_warnings,
    parse_principal,
    policy_arn,
)
from eks_karpenter.platform.access.rules import validate_access

__all__ = ["POLICIES", "Access", "AccessArgs", "AccessConfig", "ProviderCredentials", "Team", "access_entries",
           "consumer_access_warnings", "creator_conflicts", "parse_principal", "policy_arn", "validate_access"]
