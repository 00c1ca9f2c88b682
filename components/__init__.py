"""eks-karpenter: Pulumi components for an EKS cluster autoscaled by Karpenter, spot-first, from typed config.

Each concern has its own package (network, cluster, access, namespaces, iam, karpenter, nodepool, interruption,
nth): typed config and rules, pure planning code (tags, policy documents, manifests, Helm values) importable
without a Pulumi engine, and the component that wires the resources. Component type tokens are
`eks-karpenter:index:<Name>`.
"""

from components import tags, versions
from components._model import ConfigError, Issue
from components.access import Access, AccessArgs, AccessConfig
from components.cluster import Cluster, ClusterArgs, ClusterConfig
from components.iam import KarpenterIam, KarpenterIamArgs, NodeRole, NodeRoleArgs, controller_policies
from components.interruption import InterruptionConfig, InterruptionQueue, InterruptionQueueArgs
from components.karpenter import Karpenter, KarpenterArgs, KarpenterConfig, controller_values
from components.namespaces import Namespaces, NamespacesArgs, platform_namespaces
from components.network import Network, NetworkArgs, NetworkConfig
from components.nodepool import (
    NodeClass,
    NodeClassConfig,
    NodePool,
    NodePoolConfig,
    render_node_class,
    render_node_pool,
    scheduling_for,
    validate_node_config,
)
from components.nth import NodeTerminationHandler, NodeTerminationHandlerArgs, NthConfig
from components.stack import StackConfig, load_stack_config

__all__ = [
    "Access",
    "AccessArgs",
    "AccessConfig",
    "Cluster",
    "ClusterArgs",
    "ClusterConfig",
    "ConfigError",
    "InterruptionConfig",
    "InterruptionQueue",
    "InterruptionQueueArgs",
    "Issue",
    "Karpenter",
    "KarpenterArgs",
    "KarpenterConfig",
    "KarpenterIam",
    "KarpenterIamArgs",
    "Namespaces",
    "NamespacesArgs",
    "Network",
    "NetworkArgs",
    "NetworkConfig",
    "NodeClass",
    "NodeClassConfig",
    "NodePool",
    "NodePoolConfig",
    "NodeRole",
    "NodeRoleArgs",
    "NodeTerminationHandler",
    "NodeTerminationHandlerArgs",
    "NthConfig",
    "StackConfig",
    "controller_policies",
    "controller_values",
    "load_stack_config",
    "platform_namespaces",
    "render_node_class",
    "render_node_pool",
    "scheduling_for",
    "tags",
    "validate_node_config",
    "versions",
]
