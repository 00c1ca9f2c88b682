"""eks-karpenter: Pulumi components for an EKS cluster autoscaled by Karpenter, spot-first, from typed config.

Where things live:

- `platform/`: the platform's components, one package per concern, each with its Pulumi wiring
  (`component.py`) and, as it needs them, its config (`config.py`), validation (`rules.py`) and pure planning
  code: `network`, `cluster`, `access`, `namespaces`, `iam`, `karpenter` (with the destroy guard:
  `teardown.py`, run by `teardown_hooks.py`), `nodepool`, `interruption`, `nth`, `observability` (metrics,
  alerts, dashboard) and `migration` (the hand-off from Cluster Autoscaler); beside them `preflight` (the checks
  of an adopted cluster before anything is registered), `adopted.py` (what is known of an adopted cluster: the
  preflight's facts and this stack's marks on it), `kube.py` (the platform's small Kubernetes client, which
  the smoke test uses too), `cluster_access.py` (how the program's own calls reach a cluster: its endpoint and
  CA, and an EKS token minted in-process, no `aws` command), `stack_cluster.py` (the stack's own cluster as its
  resource hooks reach it, checked against the endpoint and certificate the stack holds) and `release_owner.py`
  (the hook that labels the stack's Helm releases as its own); above them `stack.py` composes their config and
  rules into the whole stack's (`StackConfig`, `load_stack_config`, and `read_stack_config` for the running
  program), `build.py` composes the components (`build_platform`), `refusals.py` holds what it refuses from the
  account or the cluster before registering anything, `version_rules.py` holds the rules that span them,
  `lookups.py` checks the pins against AWS at preview;
- `tools/`: what is built on the components: `engine` (the offline plan, its diff and upgrade views), `cost`,
  `simulate` (workload what-if), `smoke` (the post-deploy test), `migrate` (v1alpha5 import), `pins` (list and
  move the pins), `facts` (an adopted cluster's facts recorded for the offline plan), `deploy_role` (the deploy
  role's IAM policy), `policypack` (the shipped CrossGuard pack), `project` (the Pulumi project a command works
  on) and `cli` (with `cli_arguments`: the arguments several commands share, and the analysis commands');
- `config/`: the config machinery every component shares, importing no concern: the model base (`model.py`),
  problems and their report (`errors.py`, with `KeyPath`), reading a stack file as the Pulumi CLI does
  (`stackfile.py`), and finding the running stack's file (`running.py`);
- facts all read: `versions.py` (every pin), `checkout.py` (whether the library runs from its own repository,
  where `pins --write` moves the pins, or as an installed package), `arns.py` (regions, partitions, ARNs:
  `partition_of`),
  `partitions.py` (AWS regions and partitions, generated from botocore's `partitions.json`), `labels.py` (the
  well-known label, annotation and tag keys), `ids.py` (EC2 resource ids: `vpc-`, `subnet-`, `sg-`, ...),
  `catalogue/` (EC2 instance types and prices), `tags.py`, `quantities.py`.

Layers: `config` and the facts import no concern; concerns import `config` and the facts; `stack.py`, `build.py`
and `preflight` (which reads the whole stack's config) sit above the concerns; the platform imports no tool; no
two packages import each other.

The public API is everything in `__all__` (see docs/library.md, "Library API"):

- `build_platform(read_stack_config())`: the whole platform for the running stack, from its stack file;
- the components (`Network`, `Cluster`, `Access`, `Namespaces`, `NodeRole`, `KarpenterIam`,
  `InterruptionQueue`, `Karpenter`, `NodeClass`, `NodePool`, `NodeTerminationHandler`) with typed args and
  config models; pure planning code (`render_node_pool`, `controller_policies`, ...) importable without an engine;
- the offline plan engine (`plan_program`, `plan_with_references`, `PlanDocument`) and the command line (`cli`);
- the instance-type catalogue (`load_catalogue`, `admitted_for`), `cost`, `simulate` and `smoke`.

Component type tokens are `eks-karpenter:index:<Name>`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"
"""The package's version: the one place it is written (pyproject.toml reads it, CHANGELOG.md names it)."""

# Names are imported on first use (PEP 562): a program pays only for the concerns it uses, and `import
# eks_karpenter` does not build every config model or load every provider module up front.
_EXPORTS: dict[str, str] = {
    "ConfigError": "eks_karpenter.config.errors",
    "Issue": "eks_karpenter.config.errors",
    "issues_from_validation_error": "eks_karpenter.config.errors",
    "consumer_access_warnings": "eks_karpenter.platform.access",
    "consumer_admission": "eks_karpenter.platform.access",
    "ConsumerAdmission": "eks_karpenter.platform.access",
    "Access": "eks_karpenter.platform.access",
    "AccessArgs": "eks_karpenter.platform.access",
    "AccessConfig": "eks_karpenter.platform.access",
    "Catalogue": "eks_karpenter.catalogue",
    "InstanceType": "eks_karpenter.catalogue",
    "admitted_for": "eks_karpenter.catalogue",
    "load_catalogue": "eks_karpenter.catalogue",
    "Cluster": "eks_karpenter.platform.cluster",
    "ClusterArgs": "eks_karpenter.platform.cluster",
    "ClusterConfig": "eks_karpenter.platform.cluster",
    "PlanDocument": "eks_karpenter.tools.engine",
    "PlanError": "eks_karpenter.tools.engine",
    "plan_program": "eks_karpenter.tools.engine",
    "plan_with_references": "eks_karpenter.tools.engine",
    "run_plan": "eks_karpenter.tools.engine",
    "KarpenterIam": "eks_karpenter.platform.iam",
    "KarpenterIamArgs": "eks_karpenter.platform.iam",
    "NodeRole": "eks_karpenter.platform.iam",
    "NodeRoleArgs": "eks_karpenter.platform.iam",
    "controller_policies": "eks_karpenter.platform.iam",
    "InterruptionConfig": "eks_karpenter.platform.interruption",
    "InterruptionQueue": "eks_karpenter.platform.interruption",
    "InterruptionQueueArgs": "eks_karpenter.platform.interruption",
    "Karpenter": "eks_karpenter.platform.karpenter",
    "KarpenterArgs": "eks_karpenter.platform.karpenter",
    "KarpenterConfig": "eks_karpenter.platform.karpenter",
    "controller_values": "eks_karpenter.platform.karpenter",
    "Namespaces": "eks_karpenter.platform.namespaces",
    "NamespacesArgs": "eks_karpenter.platform.namespaces",
    "platform_namespaces": "eks_karpenter.platform.namespaces",
    "Network": "eks_karpenter.platform.network",
    "NetworkArgs": "eks_karpenter.platform.network",
    "NetworkConfig": "eks_karpenter.platform.network",
    "NodeClass": "eks_karpenter.platform.nodepool",
    "NodeClassConfig": "eks_karpenter.platform.nodepool",
    "NodePool": "eks_karpenter.platform.nodepool",
    "NodePoolConfig": "eks_karpenter.platform.nodepool",
    "render_node_class": "eks_karpenter.platform.nodepool",
    "render_node_pool": "eks_karpenter.platform.nodepool",
    "scheduling_for": "eks_karpenter.platform.nodepool",
    "validate_node_config": "eks_karpenter.platform.nodepool",
    "NodeTerminationHandler": "eks_karpenter.platform.nth",
    "NodeTerminationHandlerArgs": "eks_karpenter.platform.nth",
    "NthConfig": "eks_karpenter.platform.nth",
    "build_platform": "eks_karpenter.platform.build",
    "read_stack_config": "eks_karpenter.platform.stack",
    "StackConfig": "eks_karpenter.platform.stack",
    "load_stack_config": "eks_karpenter.platform.stack",
    "stack_file_schema": "eks_karpenter.platform.stack",
    "cli": "eks_karpenter.tools.cli",
    "cost": "eks_karpenter.tools.cost",
    "simulate": "eks_karpenter.tools.simulate",
    "smoke": "eks_karpenter.tools.smoke",
    "tags": "eks_karpenter.tags",
    "versions": "eks_karpenter.versions",
}

if TYPE_CHECKING:
    from eks_karpenter import tags, versions
    from eks_karpenter.catalogue import Catalogue, InstanceType, admitted_for, load_catalogue
    from eks_karpenter.config.errors import ConfigError, Issue, issues_from_validation_error
    from eks_karpenter.platform.access import (
        Access,
        AccessArgs,
        AccessConfig,
        ConsumerAdmission,
        consumer_access_warnings,
        consumer_admission,
    )
    from eks_karpenter.platform.build import build_platform
    from eks_karpenter.platform.cluster import Cluster, ClusterArgs, ClusterConfig
    from eks_karpenter.platform.iam import KarpenterIam, KarpenterIamArgs, NodeRole, NodeRoleArgs, controller_policies
    from eks_karpenter.platform.interruption import InterruptionConfig, InterruptionQueue, InterruptionQueueArgs
    from eks_karpenter.platform.karpenter import Karpenter, KarpenterArgs, KarpenterConfig, controller_values
    from eks_karpenter.platform.namespaces import Namespaces, NamespacesArgs, platform_namespaces
    from eks_karpenter.platform.network import Network, NetworkArgs, NetworkConfig
    from eks_karpenter.platform.nodepool import (
        NodeClass,
        NodeClassConfig,
        NodePool,
        NodePoolConfig,
        render_node_class,
        render_node_pool,
        scheduling_for,
        validate_node_config,
    )
    from eks_karpenter.platform.nth import NodeTerminationHandler, NodeTerminationHandlerArgs, NthConfig
    from eks_karpenter.platform.stack import StackConfig, load_stack_config, read_stack_config, stack_file_schema
    from eks_karpenter.tools import cli, cost, simulate, smoke
    from eks_karpenter.tools.engine import PlanDocument, PlanError, plan_program, plan_with_references, run_plan


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'eks_karpenter' has no attribute {name!r}")
    value = importlib.import_module(module) if module.rsplit(".", 1)[1] == name else \
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
    "ConsumerAdmission",
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
    "consumer_access_warnings",
    "consumer_admission",
    "controller_policies",
    "controller_values",
    "cost",
    "issues_from_validation_error",
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
