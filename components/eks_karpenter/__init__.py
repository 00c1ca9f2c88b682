"""eks-karpenter: Pulumi components for an EKS cluster autoscaled by Karpenter, spot-first, from typed config.

The public API (everything in `__all__`; see the README's "Library API"):

- `build_platform(read_stack_config())`: the whole platform for the running stack, from its stack file;
- the components, one per concern (`Network`, `Cluster`, `Access`, `Namespaces`, `NodeRole`, `KarpenterIam`,
  `InterruptionQueue`, `Karpenter`, `NodeClass`, `NodePool`, `NodeTerminationHandler`) with typed args and
  config models; pure planning code (`render_node_pool`, `controller_policies`, ...) importable without an engine;
- the offline plan engine (`plan_program`, `plan_with_references`, `PlanDocument`) and the command line (`cli`);
- the instance-type catalogue (`load_catalogue`, `admitted_for`), `cost`, `simulate` and `smoke`.

Component type tokens are `eks-karpenter:index:<Name>`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Names are imported on first use (PEP 562): a program pays only for the concerns it uses, and `import
# eks_karpenter` does not build every config model or load every provider module up front.
_EXPORTS: dict[str, str] = {
    "ConfigError": "eks_karpenter._model",
    "Issue": "eks_karpenter._model",
    "Access": "eks_karpenter.access",
    "AccessArgs": "eks_karpenter.access",
    "AccessConfig": "eks_karpenter.access",
    "Catalogue": "eks_karpenter.catalogue",
    "InstanceType": "eks_karpenter.catalogue",
    "admitted_for": "eks_karpenter.catalogue",
    "load_catalogue": "eks_karpenter.catalogue",
    "Cluster": "eks_karpenter.cluster",
    "ClusterArgs": "eks_karpenter.cluster",
    "ClusterConfig": "eks_karpenter.cluster",
    "PlanDocument": "eks_karpenter.engine",
    "PlanError": "eks_karpenter.engine",
    "plan_program": "eks_karpenter.engine",
    "plan_with_references": "eks_karpenter.engine",
    "run_plan": "eks_karpenter.engine",
    "KarpenterIam": "eks_karpenter.iam",
    "KarpenterIamArgs": "eks_karpenter.iam",
    "NodeRole": "eks_karpenter.iam",
    "NodeRoleArgs": "eks_karpenter.iam",
    "controller_policies": "eks_karpenter.iam",
    "InterruptionConfig": "eks_karpenter.interruption",
    "InterruptionQueue": "eks_karpenter.interruption",
    "InterruptionQueueArgs": "eks_karpenter.interruption",
    "Karpenter": "eks_karpenter.karpenter",
    "KarpenterArgs": "eks_karpenter.karpenter",
    "KarpenterConfig": "eks_karpenter.karpenter",
    "controller_values": "eks_karpenter.karpenter",
    "Namespaces": "eks_karpenter.namespaces",
    "NamespacesArgs": "eks_karpenter.namespaces",
    "platform_namespaces": "eks_karpenter.namespaces",
    "Network": "eks_karpenter.network",
    "NetworkArgs": "eks_karpenter.network",
    "NetworkConfig": "eks_karpenter.network",
    "NodeClass": "eks_karpenter.nodepool",
    "NodeClassConfig": "eks_karpenter.nodepool",
    "NodePool": "eks_karpenter.nodepool",
    "NodePoolConfig": "eks_karpenter.nodepool",
    "render_node_class": "eks_karpenter.nodepool",
    "render_node_pool": "eks_karpenter.nodepool",
    "scheduling_for": "eks_karpenter.nodepool",
    "validate_node_config": "eks_karpenter.nodepool",
    "NodeTerminationHandler": "eks_karpenter.nth",
    "NodeTerminationHandlerArgs": "eks_karpenter.nth",
    "NthConfig": "eks_karpenter.nth",
    "build_platform": "eks_karpenter.platform",
    "read_stack_config": "eks_karpenter.settings",
    "StackConfig": "eks_karpenter.stack",
    "load_stack_config": "eks_karpenter.stack",
    "stack_file_schema": "eks_karpenter.stack",
    "cli": "eks_karpenter.cli",
    "cost": "eks_karpenter.cost",
    "simulate": "eks_karpenter.simulate",
    "smoke": "eks_karpenter.smoke",
    "tags": "eks_karpenter.tags",
    "versions": "eks_karpenter.versions",
}

if TYPE_CHECKING:
    from eks_karpenter import cli, cost, simulate, smoke, tags, versions
    from eks_karpenter._model import ConfigError, Issue
    from eks_karpenter.access import Access, AccessArgs, AccessConfig
    from eks_karpenter.catalogue import Catalogue, InstanceType, admitted_for, load_catalogue
    from eks_karpenter.cluster import Cluster, ClusterArgs, ClusterConfig
    from eks_karpenter.engine import PlanDocument, PlanError, plan_program, plan_with_references, run_plan
    from eks_karpenter.iam import KarpenterIam, KarpenterIamArgs, NodeRole, NodeRoleArgs, controller_policies
    from eks_karpenter.interruption import InterruptionConfig, InterruptionQueue, InterruptionQueueArgs
    from eks_karpenter.karpenter import Karpenter, KarpenterArgs, KarpenterConfig, controller_values
    from eks_karpenter.namespaces import Namespaces, NamespacesArgs, platform_namespaces
    from eks_karpenter.network import Network, NetworkArgs, NetworkConfig
    from eks_karpenter.nodepool import (
        NodeClass,
        NodeClassConfig,
        NodePool,
        NodePoolConfig,
        render_node_class,
        render_node_pool,
        scheduling_for,
        validate_node_config,
    )
    from eks_karpenter.nth import NodeTerminationHandler, NodeTerminationHandlerArgs, NthConfig
    from eks_karpenter.platform import build_platform
    from eks_karpenter.settings import read_stack_config
    from eks_karpenter.stack import StackConfig, load_stack_config, stack_file_schema


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'eks_karpenter' has no attribute {name!r}")
    value = importlib.import_module(module) if module == f"eks_karpenter.{name}" else \
        getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [
    "Access",
    "AccessArgs",
    "AccessConfig",
    "Catalogue",
    "Cluster",
    "ClusterArgs",
    "ClusterConfig",
    "ConfigError",
    "InstanceType",
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
    "PlanDocument",
    "PlanError",
    "StackConfig",
    "admitted_for",
    "build_platform",
    "cli",
    "controller_policies",
    "controller_values",
    "cost",
    "load_catalogue",
    "load_stack_config",
    "plan_program",
    "plan_with_references",
    "platform_namespaces",
    "read_stack_config",
    "render_node_class",
    "render_node_pool",
    "run_plan",
    "scheduling_for",
    "simulate",
    "smoke",
    "stack_file_schema",
    "tags",
    "validate_node_config",
    "versions",
]
