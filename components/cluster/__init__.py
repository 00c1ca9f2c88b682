"""Cluster layer: the EKS control plane, system node group, add-ons, or an existing cluster."""

from components.cluster.component import Cluster, ClusterArgs
from components.cluster.config import ClusterConfig, SpotNodeGroupConfig, SystemNodeGroupConfig, Taint
from components.cluster.rules import validate_cluster

__all__ = ["Cluster", "ClusterArgs", "ClusterConfig", "SpotNodeGroupConfig", "SystemNodeGroupConfig", "Taint",
           "validate_cluster"]
