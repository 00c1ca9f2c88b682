"""eks-karpenter: Pulumi components for an EKS cluster autoscaled by Karpenter, spot-first, from typed config.

Each concern has its own package (network, cluster, access, namespaces, iam, karpenter, nodepool, interruption,
nth): typed config and rules, pure planning code (tags, policy documents, manifests, Helm values) importable
without a Pulumi engine, and the component that wires the resources. Component type tokens are
`eks-karpenter:index:<Name>`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Names are imported on first use (PEP 562): a program pays only for the concerns it uses, and `import
# components` does not build every config model or load every provider module up front.
_EXPORTS = {
    "Access": "components.access",
    "AccessArgs": "components.access",
    "AccessConfig": "components.access",
    "Namespaces": "components.namespaces",
    "NamespacesArgs": "components.namespaces",
    "platform_namespaces": "components.namespaces",
    "Cluster": "components.cluster",
    "ClusterArgs": "components.cluster",
    "ClusterConfig": "components.cluster",
    "ConfigError": "components._model",
    "InterruptionConfig": "components.interruption",
    "InterruptionQueue": "components.interruption",
    "InterruptionQueueArgs": "components.interruption",
    "Issue": "components._model",
    "Karpenter": "components.karpenter",
    "KarpenterArgs": "components.karpenter",
    "KarpenterConfig": "components.karpenter",
    "KarpenterIam": "components.iam",
    "KarpenterIamArgs": "components.iam",
    "Network": "components.network",
    "NetworkArgs": "components.network",
    "NetworkConfig": "components.network",
    "NodeClass": "components.nodepool",
    "NodeClassConfig": "components.nodepool",
    "NodePool": "components.nodepool",
    "NodePoolConfig": "components.nodepool",
    "NodeRole": "components.iam",
    "NodeRoleArgs": "components.iam",
    "NodeTerminationHandler": "components.nth",
    "NodeTerminationHandlerArgs": "components.nth",
    "NthConfig": "components.nth",
    "StackConfig": "components.stack",
    "controller_policies": "components.iam",
    "controller_values": "components.karpenter",
    "load_stack_config": "components.stack",
    "render_node_class": "components.nodepool",
    "render_node_pool": "components.nodepool",
    "scheduling_for": "components.nodepool",
    "tags": "components.tags",
    "validate_node_config": "components.nodepool",
    "versions": "components.versions",
}

if TYPE_CHECKING:
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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'components' has no attribute {name!r}")
    value = importlib.import_module(module) if module == f"components.{name}" else \
        getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


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
