"""Upgrades between two plans of one stack: the Kubernetes minor and the Karpenter release.

Pure: reads two `PlanDocument`s. `upgrade_problems` is what `infra diff` refuses (exit 1): a Kubernetes jump of
more than one minor (EKS upgrades a control plane one minor at a time) or a downgrade (EKS has none).
`upgrade_section` is the Markdown the diff appends: for a Kubernetes bump, what moves in the order it must
(control plane, add-ons, system node groups, Karpenter's fleets) and whether the plan's dependencies enforce
that order; for a Karpenter release change, the IAM actions, chart values keys and CRDs that change.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import pairwise

from eks_karpenter.platform.karpenter.releases import upgrade_changes
from eks_karpenter.tools.engine.document import PlanDocument, PlannedResource

CLUSTER_TYPES = ("eks:index:Cluster", "aws:eks/cluster:Cluster")
ADDON = "aws:eks/addon:Addon"
NODE_GROUP_TYPES = ("eks:index:ManagedNodeGroup", "aws:eks/nodeGroup:NodeGroup")
NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
NODECLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
RELEASE = "kubernetes:helm.sh/v3:Release"
KARPENTER_RELEASE = "karpenter"
"""Helm release name of the Karpenter controller (platform/karpenter/component.py)."""


def _minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def _of_types(plan: PlanDocument, types: Iterable[str]) -> list[PlannedResource]:
    return [r for r in plan.resources if r.type in types]


def kubernetes_version(plan: PlanDocument) -> str | None:
    """The Kubernetes minor of the cluster the plan creates (None for an adopted cluster: nothing is changed)."""
    for r in _of_types(plan, CLUSTER_TYPES):
        if r.inputs.get("version"):
            return str(r.inputs["version"])
    return None


def karpenter_version(plan: PlanDocument) -> str | None:
    """The Karpenter release the plan installs."""
    for r in plan.by_type(RELEASE):
        if r.inputs.get("name") == KARPENTER_RELEASE:
            return str(r.inputs.get("version"))
    return None


def upgrade_problems(old: PlanDocument, new: PlanDocument) -> list[str]:
    """What EKS would refuse between the two plans' clusters."""
    a, b = kubernetes_version(old), kubernetes_version(new)
    if a is None or b is None or a == b:
        return []
    (a_major, a_minor), (b_major, b_minor) = _minor(a), _minor(b)
    if (b_major, b_minor) < (a_major, a_minor):
        return [f"Kubernetes {a} → {b}: EKS cannot downgrade a cluster's control plane"]
    if b_major != a_major or b_minor - a_minor > 1:
        step = f"{a_major}.{a_minor + 1}"
        return [f"Kubernetes {a} → {b} skips a minor: EKS upgrades the control plane one minor at a time; "
                f"deploy {step} first (with its add-on versions and AMIs), then the next"]
    return []


def _closure(plan: PlanDocument, start: PlannedResource) -> set[str]:
    by_urn = {r.urn: r for r in plan.resources}
    seen: set[str] = set()
    todo = list(start.dependencies)
    while todo:
        urn = todo.pop()
        if urn not in seen:
            seen.add(urn)
            todo += by_urn[urn].dependencies if urn in by_urn else []
    return seen


def _ordered_after(plan: PlanDocument, later: list[PlannedResource], earlier: list[PlannedResource]) -> bool:
    """Every resource of `later` transitively depends on every resource of `earlier`."""
    urns = {r.urn for r in earlier}
    return all(urns <= _closure(plan, r) for r in later)


def _kubernetes_section(old: PlanDocument, new: PlanDocument, a: str, b: str) -> list[str]:
    cluster = _of_types(new, CLUSTER_TYPES)
    old_addons = {r.inputs.get("addonName"): r.inputs.get("addonVersion") for r in old.by_type(ADDON)}
    addons = new.by_type(ADDON)
    groups = _of_types(new, NODE_GROUP_TYPES)
    pools = new.by_type(NODEPOOL)
    aliases = sorted({str(t["alias"]) for c in new.by_type(NODECLASS)
                      for t in c.inputs.get("spec", {}).get("amiSelectorTerms", []) if t.get("alias")})
    moved = [f"`{r.inputs.get('addonName')}` {old_addons.get(r.inputs.get('addonName'), '(new)')} → "
             f"{r.inputs.get('addonVersion')}" for r in addons]
    stages: list[tuple[str, list[PlannedResource], str]] = [
        ("control plane", cluster, f"{', '.join(f'`{r.name}`' for r in cluster)} {a} → {b}"),
        (f"add-ons (pinned for {b})", addons, ", ".join(moved) or "none"),
        (f"system node groups (replaced node by node with {b} AMIs)", groups,
         ", ".join(f"`{r.name}`" for r in groups) or "none"),
        ("Karpenter fleets", pools,
         f"every node of {', '.join(f'`{r.name}`' for r in pools) or 'no NodePool'} drifts (the aliases "
         f"{', '.join(f'`{x}`' for x in aliases) or '(none)'} resolve to {b} AMIs) and is replaced within its "
         "NodePool's disruption budgets"),
    ]
    # The order Pulumi applies is the plan's dependency order: add-ons that wait for the system node group (so
    # coredns has nodes) come after it.
    if addons and any(_ordered_after(new, addons, [g]) for g in groups):
        stages[1], stages[2] = stages[2], stages[1]
    lines = [f"#### Kubernetes {a} → {b}", "", "Applied in this order (the plan's dependencies):", ""]
    lines += [f"{i}. {label}: {text}" for i, (label, _, text) in enumerate(stages, 1)]
    unordered = [f"{later_label.split(' (')[0]} after {earlier_label.split(' (')[0]}"
                 for (earlier_label, earlier, _), (later_label, later, _) in pairwise(stages)
                 if later and earlier and not _ordered_after(new, later, earlier)]
    if unordered:
        lines += ["", "Not enforced by a dependency in this plan (Pulumi may run them side by side): "
                  + "; ".join(unordered) + "."]
    return lines + [""]


def upgrade_section(old: PlanDocument, new: PlanDocument) -> list[str]:
    """Markdown lines on the Kubernetes and Karpenter upgrades between the plans (empty when neither moves)."""
    lines: list[str] = []
    a, b = kubernetes_version(old), kubernetes_version(new)
    if a and b and a != b:
        lines += _kubernetes_section(old, new, a, b)
    ka, kb = karpenter_version(old), karpenter_version(new)
    if ka and kb and ka != kb:
        lines += [f"#### Karpenter {ka} → {kb}", "",
                  "The `karpenter-crd` release is upgraded before the controller (it depends on it)."]
        try:
            zonal = any("ZonalShift" in r.name for r in new.resources)
            changes = upgrade_changes(ka, kb, zonal_shift=zonal).lines()
        except ValueError as err:
            changes = [str(err)]
        lines += [f"- {line}" for line in changes] or ["- no IAM, values or CRD change: the chart version only"]
        lines.append("")
    return lines


def render_upgrades(old: PlanDocument, new: PlanDocument) -> str:
    """The section `infra diff` prints after the resource diff (empty text when nothing is upgraded)."""
    problems = upgrade_problems(old, new)
    lines = upgrade_section(old, new)
    if problems:
        lines = ["#### Refused", "", *(f"- {p}" for p in problems), "", *lines]
    return "\n".join(["### Upgrades", "", *lines]) + "\n" if lines else ""
