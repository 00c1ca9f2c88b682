"""Cluster layer: the EKS control plane, system node group, add-ons, or an existing cluster."""

from eks_karpenter.cluster.component import Cluster, ClusterArgs
from eks_karpenter.cluster.config import ClusterConfig, SpotNodeGroupConfig, SystemNodeGroupConfig, Taint
from eks_karpenter.cluster.rules import validate_cluster

__all__ = ["Cluster", "ClusterArgs", "ClusterConfig", "SpotNodeGroupConfig", "SystemNodeGroupConfig", "Taint",
           "validate_cluster"]
