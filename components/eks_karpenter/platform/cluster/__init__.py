"""Cluster layer: the EKS control plane, system node group, add-ons, or an existing cluster."""

from eks_karpenter.platform.cluster.component import Cluster, ClusterArgs
from eks_karpenter.platform.cluster.config import ClusterConfig, SpotNodeGroupConfig, SystemNodeGroupConfig, Taint
from eks_karpenter.platform.cluster.rules import validate_cluster

__all__ = ["Cluster", "ClusterArgs", "ClusterConfig", "SpotNodeGroupConfig", "SystemNodeGroupConfig", "Taint",
           "validate_cluster"]
