"""The phased hand-off from Cluster Autoscaler to Karpenter on an adopted cluster (`eks-karpenter:migration`)."""

from eks_karpenter.platform.migration.component import LegacyGroupFacts, Migration, MigrationArgs
from eks_karpenter.platform.migration.config import (
    OPT_IN_TAINT_KEY,
    ClusterAutoscalerRef,
    LegacyNodeGroup,
    MigrationConfig,
)
from eks_karpenter.platform.migration.plan import (
    OPT_IN_TAINT,
    Scaling,
    autoscaler_patch,
    node_group_scaling,
    retained,
    with_opt_in_taint,
)
from eks_karpenter.platform.migration.rules import validate_adopted_placement, validate_migration

__all__ = [
    "OPT_IN_TAINT",
    "OPT_IN_TAINT_KEY",
    "ClusterAutoscalerRef",
    "LegacyGroupFacts",
    "LegacyNodeGroup",
    "Migration",
    "MigrationArgs",
    "MigrationConfig",
    "Scaling",
    "autoscaler_patch",
    "node_group_scaling",
    "retained",
    "validate_adopted_placement",
    "validate_migration",
    "with_opt_in_taint",
]
