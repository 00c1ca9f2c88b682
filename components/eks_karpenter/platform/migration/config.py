"""Config of the Cluster Autoscaler to Karpenter cut-over on an adopted cluster: phases 1 to 4."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from eks_karpenter.config.model import Model, empty_list
from eks_karpenter.platform.karpenter.config import Duration, Namespace

NodeGroupName = Annotated[str, StringConstraints(pattern=r"^[0-9A-Za-z][A-Za-z0-9\-_]*$", max_length=63)]
"""An EKS managed node group name."""
ResourceName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$", max_length=253)]

Phase = Literal[1, 2, 3, 4]

OPT_IN_TAINT_KEY = "eks-karpenter.io/migration"
"""Phase 1: every NodePool carries this NoSchedule taint, so only pods that tolerate it land on Karpenter's
nodes while Cluster Autoscaler still serves everything else."""


class ClusterAutoscalerRef(Model):
    """The Cluster Autoscaler Deployment already running in the cluster (installed by another tool)."""

    name: ResourceName = "cluster-autoscaler"
    """Deployment name (the Helm chart's default release gives `cluster-autoscaler-aws-cluster-autoscaler`;
    `kubectl -n kube-system get deploy` shows it)."""
    namespace: Namespace = "kube-system"
    """Deployment namespace."""
    replicas: int = Field(1, ge=1, le=10)
    """How many replicas it runs today: phase 1 writes this count (no change), phase 2 and later write 0, and a
    rollback to phase 1 writes it back."""


class LegacyNodeGroup(Model):
    """One managed node group Cluster Autoscaler scales today and Karpenter replaces."""

    name: NodeGroupName
    """The node group's name (`aws eks list-nodegroups --cluster-name <cluster>`)."""
    min_size: int = Field(ge=0, le=1000)
    """Its autoscaling minimum today: what it is imported with (phase 1) and restored to on rollback."""
    max_size: int = Field(ge=1, le=1000)
    """Its autoscaling maximum today: what it is imported with (phase 1) and restored to on rollback."""
    drain_to: int | None = Field(None, ge=0, le=1000)
    """Phase 3: the size (min = max = desired) this step lowers the group to; lower it step by step (e.g. 6,
    4, 2, 0), with the smoke test between steps. Unset: the group stays pinned at its size of phase 2."""
    after_migration: Literal["handBack", "delete"] = "handBack"
    """Phase 4: `handBack` drops the group from the stack and leaves it in the account (at its last size);
    `delete` deletes it (refused while it still has nodes). A group is only ever deleted after a phase-3 `pulumi
    up` with `drainTo: 0` and `delete` set: until then it is kept, even by `pulumi destroy`."""


class MigrationConfig(Model):
    """The hand-off from Cluster Autoscaler to Karpenter on an adopted cluster (`cluster.existing`), one
    `pulumi up` per phase; a rollback is setting the previous phase again.

    1. Karpenter beside Cluster Autoscaler: every NodePool carries a NoSchedule taint, so only pods that opt in
       (tolerate it) go to Karpenter; the node groups are imported unchanged and Cluster Autoscaler's Deployment
       is adopted unchanged.
    2. Karpenter takes new workloads: the taint goes, Cluster Autoscaler is scaled to 0, each node group is
       pinned (min = max = desired) at its current size.
    3. The node groups are drained step by step with `drainTo`.
    4. The node groups leave the stack (handed back, or deleted once empty); Cluster Autoscaler stays at 0.
    """

    phase: Phase
    """The phase to be in after the next `pulumi up` (1 to 4)."""
    cluster_autoscaler: ClusterAutoscalerRef = Field(default_factory=ClusterAutoscalerRef)
    """The Cluster Autoscaler Deployment to scale to 0 (phase 2 and later)."""
    node_groups: list[LegacyNodeGroup] = Field(default_factory=empty_list, max_length=30)
    """The managed node groups Cluster Autoscaler scales and Karpenter replaces (never the group the Karpenter
    controller runs on)."""
    pending_pods_max_age: Duration = "5m"
    """`smoke --phase`: a Pending pod older than this fails the check (both autoscalers ignoring it, or neither
    able to place it)."""

    @property
    def opt_in(self) -> bool:
        """Phase 1: NodePools take only the pods that tolerate the migration taint."""
        return self.phase == 1

    @property
    def autoscaler_replicas(self) -> int:
        return self.cluster_autoscaler.replicas if self.phase == 1 else 0

    @property
    def manages_node_groups(self) -> bool:
        """The stack holds the node groups in phases 1 to 3; phase 4 lets them go."""
        return self.phase <= 3
