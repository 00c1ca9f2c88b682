"""Cluster access: EKS access entries for admins and namespace-scoped teams, and the provider's credentials."""

from eks_karpenter.platform.access.component import Access, AccessArgs
from eks_karpenter.platform.access.config import AccessConfig, Deployer, ProviderCredentials, Team
from eks_karpenter.platform.access.consumer import ConsumerAdmission, consumer_admission
from eks_karpenter.platform.access.plan import (
    POLICIES,
    access_entries,
    aws_provider_identity,
    consumer_access_warnings,
    deployer_entries,
    parse_principal,
    policy_arn,
)
from eks_karpenter.platform.access.rules import provider_identity_issues, validate_access

__all__ = ["POLICIES", "Access", "AccessArgs", "AccessConfig", "ConsumerAdmission", "Deployer", "ProviderCredentials",
           "Team", "access_entries", "aws_provider_identity", "consumer_access_warnings", "consumer_admission",
           "deployer_entries",
           "parse_principal", "policy_arn", "provider_identity_issues", "validate_access"]
