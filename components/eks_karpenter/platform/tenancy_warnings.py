"""Warnings on what the preview identity and the teams reach through the platform's choices, from several sections
at once (access, karpenter, the termination handler, the migration, the node classes): composed here, above the
concerns, as stack.py composes their rules; the rules themselves are access/rules.py's."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from eks_karpenter.config.errors import Issue, KeyPath
from eks_karpenter.platform.access.config import AccessConfig
from eks_karpenter.platform.access.plan import preview_reads
from eks_karpenter.platform.access.rules import open_reservation_warnings, preview_builtin_namespace_warnings
from eks_karpenter.platform.cluster.config import ClusterConfig
from eks_karpenter.platform.karpenter.config import KarpenterConfig
from eks_karpenter.platform.migration.config import MigrationConfig
from eks_karpenter.platform.nodepool.config import NodeClassConfig
from eks_karpenter.platform.nth.config import NthConfig
from eks_karpenter.platform.observability.config import ObservabilityConfig


class StackConfig(Protocol):
    """The sections of the stack config (platform/stack.py, which imports this module) these warnings read."""

    @property
    def access(self) -> AccessConfig: ...
    @property
    def cluster(self) -> ClusterConfig: ...
    @property
    def karpenter(self) -> KarpenterConfig: ...
    @property
    def node_termination_handler(self) -> NthConfig: ...
    @property
    def observability(self) -> ObservabilityConfig: ...
    @property
    def migration(self) -> MigrationConfig | None: ...
    @property
    def node_classes(self) -> Sequence[NodeClassConfig]: ...


def stack_preview_reads(cfg: StackConfig) -> dict[str, set[tuple[str, str]]]:
    """Namespace -> the (API group, kind) of each object the platform registers there (`preview_reads`), the
    Cluster Autoscaler's Deployment only where a migration runs on an adopted cluster."""
    obs, nth, mig = cfg.observability, cfg.node_termination_handler, cfg.migration if cfg.cluster.existing else None
    return preview_reads(karpenter=cfg.karpenter.namespace, termination_handler=nth.namespace if nth.enabled else None,
                         prometheus_rule=obs.enabled and obs.metrics == "prometheusOperator",
                         cluster_autoscaler=mig.cluster_autoscaler.namespace if mig else None)


def tenancy_warnings(cfg: StackConfig, at: Callable[[str], KeyPath]) -> list[Issue]:
    """A preview deployer reading a built-in namespace; platform reservations open to teams' pools."""
    keys = {at("karpenter") + ("namespace",): cfg.karpenter.namespace}
    if cfg.node_termination_handler.enabled:
        keys[at("nodeTerminationHandler") + ("namespace",)] = cfg.node_termination_handler.namespace
    if cfg.migration is not None and cfg.cluster.existing:
        keys[at("migration") + ("clusterAutoscaler", "namespace")] = cfg.migration.cluster_autoscaler.namespace
    return [*preview_builtin_namespace_warnings(cfg.access.deployers, stack_preview_reads(cfg), keys),
            *open_reservation_warnings(cfg.access.teams, cfg.node_classes, at("nodeClasses"))]
