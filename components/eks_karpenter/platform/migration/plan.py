"""What each phase of the cut-over asks of the cluster, as plain data (no engine needed to test it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eks_karpenter.platform.migration.config import OPT_IN_TAINT_KEY, LegacyNodeGroup, MigrationConfig
from eks_karpenter.platform.nodepool.config import NodePoolConfig, Taint

OPT_IN_TAINT = Taint(key=OPT_IN_TAINT_KEY, value="opt-in", effect="NoSchedule")
"""Phase 1's taint on every NodePool; a workload opts in with the matching toleration."""

PATCH_FORCE = "pulumi.com/patchForce"
"""Take the field from its current manager (Helm, kubectl) instead of failing on the conflict."""

NODE_GROUP_FIELDS_LEFT_ALONE = sorted([
    "amiType", "capacityType", "diskSize", "forceUpdateVersion", "instanceTypes", "labels", "launchTemplate",
    "nodeGroupNamePrefix", "nodeRoleArn", "releaseVersion", "remoteAccess", "subnetIds", "tags", "tagsAll",
    "taints", "updateConfig", "version",
])
"""Every node group field but its scaling: imported as they are and never changed by this stack."""


def with_opt_in_taint(pool: NodePoolConfig, migration: MigrationConfig | None) -> NodePoolConfig:
    """The pool as phase 1 registers it: tainted so only opted-in pods go there while Cluster Autoscaler still
    serves the rest (both autoscalers would otherwise react to the same pending pods)."""
    if migration is None or not migration.opt_in or OPT_IN_TAINT in pool.taints:
        return pool
    return pool.model_copy(update={"taints": [*pool.taints, OPT_IN_TAINT]})


def autoscaler_patch(migration: MigrationConfig) -> dict[str, Any]:
    """The server-side-apply patch of the Cluster Autoscaler Deployment: only `spec.replicas`, owned by this stack
    from phase 1 on (at today's count, so adopting it changes nothing), 0 from phase 2, today's count again on a
    rollback to phase 1."""
    ca = migration.cluster_autoscaler
    return {
        "metadata": {"name": ca.name, "namespace": ca.namespace, "annotations": {PATCH_FORCE: "true"}},
        "spec": {"replicas": migration.autoscaler_replicas},
    }


@dataclass(frozen=True)
class Scaling:
    """A managed node group's scaling config as EKS takes it."""

    min_size: int
    max_size: int
    desired_size: int

    def dump(self) -> dict[str, int]:
        return {"minSize": self.min_size, "maxSize": self.max_size, "desiredSize": self.desired_size}


def node_group_scaling(group: LegacyNodeGroup, phase: int, current_desired: int) -> Scaling:
    """The group's scaling in `phase`. Phase 1: its own bounds (Cluster Autoscaler still moves the desired size,
    which the stack then ignores). Phase 2: pinned (min = max = desired) at its current size, so nothing scales it
    while Cluster Autoscaler is at 0 and Karpenter takes new pods. Phase 3: pinned at `drainTo` when given (EKS
    drains the nodes it removes, honouring PodDisruptionBudgets), else still at its current size."""
    current = max(group.min_size, min(group.max_size, current_desired))
    if phase == 1:
        return Scaling(group.min_size, group.max_size, current)
    size = group.drain_to if phase >= 3 and group.drain_to is not None else current
    # EKS requires maxSize >= 1: an empty group is pinned at 0..1 with nothing desired.
    return Scaling(size, max(size, 1), size)


def retained(group: LegacyNodeGroup, phase: int) -> bool:
    """Whether leaving the stack (phase 4, or `pulumi destroy`) leaves the group in the account. Only a group
    marked `delete` and already drained to 0 in phase 3 is deleted with it: a destroy in an earlier phase must
    never take away node groups that still run the workloads."""
    return not (group.after_migration == "delete" and phase == 3 and group.drain_to == 0)


def migration_output(m: MigrationConfig, pools: list[str]) -> dict[str, object]:
    """The migration's state as a stack output, for dashboards and scripts: the phase, Cluster Autoscaler's
    Deployment and the replicas it is set to, the pools, and how long a pod may stay Pending (what `smoke
    --phase` checks, from the stack file)."""
    ca = m.cluster_autoscaler
    return {"phase": m.phase, "clusterAutoscaler": {"namespace": ca.namespace, "name": ca.name,
                                                    "replicas": m.autoscaler_replicas},
            "nodePools": pools, "pendingPodsMaxAge": m.pending_pods_max_age}
