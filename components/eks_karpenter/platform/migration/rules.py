"""Rules of the cut-over: where the Karpenter controller runs on an adopted cluster, and the `migration`
section against the rest of the stack."""

from __future__ import annotations

from eks_karpenter.config.errors import Issue, KeyPath, render_path
from eks_karpenter.labels import CAPACITY_TYPE, EKS_CAPACITY_TYPE, LIFECYCLE, NODEGROUP_LABEL, NODEPOOL_LABEL
from eks_karpenter.platform.karpenter.config import KarpenterConfig
from eks_karpenter.platform.migration.config import MigrationConfig

# Labels that say "spot" or "Karpenter's own": capacity either autoscaler (or EC2) takes away.
_REMOVABLE = {
    EKS_CAPACITY_TYPE: {"SPOT"},
    CAPACITY_TYPE: {"spot", "on-demand", "reserved"},
    NODEPOOL_LABEL: None,
    "lifecycle": {"Ec2Spot", "spot"},
    LIFECYCLE: {"spot"},
}


def controller_node_group(cfg: KarpenterConfig) -> str | None:
    """The managed node group the controller's `nodeSelector` names, if any."""
    return cfg.node_selector.get(NODEGROUP_LABEL)


def validate_adopted_placement(cfg: KarpenterConfig, at: KeyPath) -> list[Issue]:
    """On an adopted cluster the controller must run on capacity neither autoscaler removes: a stable on-demand
    managed node group named in `nodeSelector`, or Fargate. Without one it can land on the spot nodes Cluster
    Autoscaler scales away (or on nodes of the old groups being drained), and nothing then launches capacity."""
    if cfg.controller_on_fargate:
        return []
    issues: list[Issue] = []
    for key, value in sorted(cfg.node_selector.items()):
        removable = _REMOVABLE.get(key, set())
        if key in _REMOVABLE and (removable is None or value in removable):
            issues.append(Issue(at + ("nodeSelector", key), "selects nodes an autoscaler or EC2 takes away (spot, "
                                "or Karpenter's own): the controller must run on stable on-demand capacity", value))
    if issues:
        return issues
    if controller_node_group(cfg) is None:
        return [Issue(at + ("nodeSelector",), "the cluster is adopted (eks-karpenter:cluster.existing), so the "
                      "controller must be placed on capacity neither Cluster Autoscaler nor Karpenter removes: name "
                      f"a stable on-demand managed node group with nodeSelector {{{NODEGROUP_LABEL}: <group>}} "
                      "(plus tolerations if it is tainted), or set eks-karpenter:karpenter.controllerOnFargate: "
                      "true", dict(cfg.node_selector) or None, has_value=bool(cfg.node_selector))]
    return []


def validate_migration(cfg: MigrationConfig, *, existing_cluster: bool, karpenter: KarpenterConfig,
                       at: KeyPath, at_karpenter: KeyPath) -> list[Issue]:
    """Rules on `eks-karpenter:migration` against the cluster and the controller's placement."""
    if not existing_cluster:
        return [Issue(at, "only applies to an existing cluster (eks-karpenter:cluster.existing: true): a cluster "
                      "this stack creates has no Cluster Autoscaler to hand over from", None, has_value=False)]
    issues: list[Issue] = []
    seen: set[str] = set()
    stable = controller_node_group(karpenter)
    for i, group in enumerate(cfg.node_groups):
        here = at + ("nodeGroups", i)
        if group.name in seen:
            issues.append(Issue(here + ("name",), "listed twice", group.name))
        seen.add(group.name)
        if group.min_size > group.max_size:
            issues.append(Issue(here + ("minSize",), f"above maxSize ({group.max_size})", group.min_size))
        if group.drain_to is not None:
            if cfg.phase < 3:
                issues.append(Issue(here + ("drainTo",), f"only applies in phase 3 (draining); this is phase "
                                    f"{cfg.phase}: remove it, or set phase: 3", group.drain_to))
            elif group.drain_to > group.max_size:
                issues.append(Issue(here + ("drainTo",), f"above the group's maxSize ({group.max_size}): draining "
                                    "only lowers a group", group.drain_to))
        if stable is not None and group.name == stable and not karpenter.controller_on_fargate:
            issues.append(Issue(here + ("name",), "the Karpenter controller runs on this group "
                                f"({render_path(at_karpenter)}.nodeSelector {NODEGROUP_LABEL}): "
                                "draining it would leave the controller nowhere to run; move the controller to "
                                "another stable group (or Fargate) first", group.name))
    return issues
