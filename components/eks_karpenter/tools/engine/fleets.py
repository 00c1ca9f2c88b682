"""What a plan diff does to running nodes and to the network, read off the diff: pure data, no engine.

- `replaced_fleets`: the node fleets whose nodes a change replaces. Karpenter replaces a NodePool's nodes when
  they drift from it, by the rules of the Karpenter release the new plan installs (`drift.py`, from the table
  in `drift_rules.py`): a hashed field of the pool's template or of its EC2NodeClass (every node), narrowed
  requirements (the nodes that no longer satisfy them), selector terms whose resolved subnets, security groups
  or AMIs change, or a new AMI, which a Kubernetes minor bump gives every class that picks its AMI by `alias`.
  Widened requirements, `weight`, `limits`, budgets and other `disruption` settings are not drift.
  Drift is paced by the pool's disruption budgets that cover the `Drifted` reason. A managed node group is
  rolled (new Kubernetes version, launch template or AMI type) or replaced (a ForceNew input).
- `refusals`: changes a `pulumi up` cannot carry out on a stack that created its VPC (a new `vpcCidr`, zones
  reordered or removed), each with what to do instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from eks_karpenter.tools.engine.changes import ResourceChange
from eks_karpenter.tools.engine.document import PlanDocument, PlannedResource
from eks_karpenter.tools.engine.drift import class_drift, pool_drift
from eks_karpenter.tools.engine.drift_rules import DRIFT_RULES, DriftRules
from eks_karpenter.tools.engine.upgrades import karpenter_version
from eks_karpenter.versions import KARPENTER_VERSION

NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
CLUSTERS = ("eks:index:Cluster", "aws:eks/cluster:Cluster")
NODE_GROUPS = ("eks:index:ManagedNodeGroup", "aws:eks/nodeGroup:NodeGroup")
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
VPC = "aws:ec2/vpc:Vpc"
SUBNET = "aws:ec2/subnet:Subnet"

DEFAULT_BUDGET = "nodes 10%"
"""Karpenter's budget when a pool sets none."""
# Inputs of a managed node group whose change rolls its nodes in place (a new launch template version, AMI
# release or Kubernetes version); ForceNew inputs replace the whole group instead.
_ROLLING = ("version", "releaseVersion", "launchTemplate", "amiType")


@dataclass(frozen=True)
class Fleet:
    """A group of nodes a change replaces."""

    kind: str
    """`NodePool` (Karpenter drift) or `node group` (an EKS managed node group)."""
    name: str
    causes: tuple[str, ...]
    """What replaces the nodes, one line each."""
    pacing: str
    """How fast: the pool's disruption budgets that apply to drift, or how EKS rolls a node group."""


@dataclass(frozen=True)
class _Plan:
    """What the handlers read besides the change itself: the new plan's pools and classes, and every change."""

    new: PlanDocument
    pools: dict[str, PlannedResource]
    classes: dict[str, PlannedResource]
    by_urn: dict[str, ResourceChange]
    old_pools: dict[str, PlannedResource]
    old_classes: dict[str, PlannedResource]
    rules: DriftRules
    """The drift rules of the Karpenter release the new plan installs."""


Cause = tuple[str, str, str]
"""(fleet kind, fleet name, what replaces its nodes)."""


def replaced_fleets(changes: Sequence[ResourceChange], old: PlanDocument, new: PlanDocument) -> tuple[Fleet, ...]:
    """Every node fleet the changes replace nodes of, in name order."""
    plan = _Plan(new, {_name(r): r for r in new.by_type(NODE_POOL)}, {_name(r): r for r in new.by_type(NODE_CLASS)},
                 {c.resource.urn: c for c in changes}, {_name(r): r for r in old.by_type(NODE_POOL)},
                 {_name(r): r for r in old.by_type(NODE_CLASS)}, drift_rules_of(new))
    causes: dict[tuple[str, str], list[str]] = {}
    for change in changes:
        handler = _HANDLERS.get(change.resource.type)
        for kind, name, cause in handler(change, plan) if handler is not None else ():
            found = causes.setdefault((kind, name), [])
            if cause not in found:
                found.append(cause)
    return tuple(Fleet(kind, name, tuple(found), _pacing(kind, name, plan.pools))
                 for (kind, name), found in sorted(causes.items()))


def _pacing(kind: str, name: str, pools: dict[str, PlannedResource]) -> str:
    if kind == "NodePool":
        return _drift_pacing(pools[name]) if name in pools else "no budget: deletion is not paced"
    return ("EKS replaces nodes a few at a time (updateConfig maxUnavailable, default 1), honouring "
            "PodDisruptionBudgets for up to 15 minutes per node")


def _cluster_change(change: ResourceChange, plan: _Plan) -> Iterator[Cause]:
    """A Kubernetes minor bump: every pool whose class picks its AMI by alias drifts to the new minor's AMI."""
    version = next((p for p in change.properties if p.path == ("version",)), None)
    if change.op != "update" or version is None:
        return
    bump = f"Kubernetes {version.old} -> {version.new}"
    for cls_name, cls in plan.classes.items():
        if _uses_alias(cls):
            for pool_name, pool in plan.pools.items():
                if _class_of(pool) == cls_name:
                    yield ("NodePool", pool_name, f"{bump}: EC2NodeClass `{cls_name}` picks its AMI by alias, which "
                           "resolves to the new minor's AMI (drift)")


def _node_class_change(change: ResourceChange, plan: _Plan) -> Iterator[Cause]:
    """An edit of a class drifts the pools that use it where the release's drift rules say so; a replaced class
    drifts them all."""
    if change.op not in ("update", "replace"):
        return
    name = _name(change.resource)
    before = plan.old_classes.get(name)
    found = (class_drift(before.inputs, change.resource.inputs, plan.rules)
             if change.op == "update" and before is not None else ["replaced: drift"])
    for pool_name, pool in plan.pools.items():
        if _class_of(pool) == name:
            for cause in found:
                yield "NodePool", pool_name, f"EC2NodeClass `{name}` {cause}"


def _node_pool_change(change: ResourceChange, plan: _Plan) -> Iterator[Cause]:
    """An edit drifts the pool's nodes where the release's drift rules say so; deleting the pool terminates them."""
    name = _name(change.resource)
    if change.op == "update":
        before = plan.old_pools.get(name)
        for cause in pool_drift(before.inputs if before is not None else {}, change.resource.inputs, plan.rules):
            yield "NodePool", name, cause
    elif change.op in ("replace", "delete"):
        again = " and recreated" if change.op == "replace" else ""
        yield ("NodePool", name, f"the NodePool is deleted{again}: Karpenter drains and terminates every node it "
               "launched")


def _node_group_change(change: ResourceChange, plan: _Plan) -> Iterator[Cause]:
    """A ForceNew input replaces the group; a rolling input rolls its nodes in place."""
    name = change.resource.name
    if change.op == "replace":
        why = ", ".join(f"`{p.label}`" for p in change.properties if p.replaces) or "with the cluster"
        yield ("node group", name, f"replaced ({why}): a new group is created, then the old one drained and "
               "deleted")
    elif change.op == "update":
        rolled = sorted({p.label for p in change.properties if p.path[:1] and p.path[0] in _ROLLING})
        if rolled:
            yield "node group", name, "rolling update (" + ", ".join(f"`{f}`" for f in rolled) + ")"


def _launch_template_change(change: ResourceChange, plan: _Plan) -> Iterator[Cause]:
    """A new launch template version rolls every node group built on it (unless the group is replaced anyway)."""
    r = change.resource
    if change.op != "update":
        return
    for group in plan.new.resources:
        own = plan.by_urn.get(group.urn)
        if group.type in NODE_GROUPS and r.urn in group.dependencies and (own is None or own.op == "update"):
            yield "node group", group.name, f"its launch template `{r.name}` gets a new version: rolling update"


_HANDLERS: dict[str, Callable[[ResourceChange, _Plan], Iterator[Cause]]] = {
    **dict.fromkeys(CLUSTERS, _cluster_change),
    NODE_CLASS: _node_class_change,
    NODE_POOL: _node_pool_change,
    **dict.fromkeys(NODE_GROUPS, _node_group_change),
    LAUNCH_TEMPLATE: _launch_template_change,
}
"""One handler per resource kind whose change can replace nodes."""


def drift_rules_of(plan: PlanDocument) -> DriftRules:
    """The drift rules of the Karpenter release a plan installs (the pinned one when it installs none, as on a
    consumer stack that only adds pools)."""
    return DRIFT_RULES.get(karpenter_version(plan) or KARPENTER_VERSION, DRIFT_RULES[KARPENTER_VERSION])


def _name(r: PlannedResource) -> str:
    return str(r.inputs.get("metadata", {}).get("name", r.name))


def _class_of(pool: PlannedResource) -> str:
    return str(pool.inputs.get("spec", {}).get("template", {}).get("spec", {}).get("nodeClassRef", {}).get("name"))


def _uses_alias(node_class: PlannedResource) -> bool:
    return any(t.get("alias") for t in node_class.inputs.get("spec", {}).get("amiSelectorTerms", []))


def _drift_pacing(pool: PlannedResource) -> str:
    budgets = pool.inputs.get("spec", {}).get("disruption", {}).get("budgets") or []
    if not budgets:
        return f"disruption budgets: {DEFAULT_BUDGET} (Karpenter's default)"
    applies = [b for b in budgets if not b.get("reasons") or "Drifted" in b["reasons"]]
    if not applies:
        return "no disruption budget covers `Drifted`: every drifted node may be replaced at once"
    return "disruption budgets for `Drifted`: " + "; ".join(_budget(b) for b in applies)


def _budget(b: dict[str, Any]) -> str:
    text = f"nodes {b.get('nodes', '10%')}"
    if b.get("schedule"):
        text += f" during `{b['schedule']}` for {b.get('duration', '?')}"
    return text


@dataclass(frozen=True)
class Refusal:
    """A change `pulumi up` cannot carry out, and what to do instead."""

    key: str
    """The stack-file key whose change causes it."""
    message: str


def refusals(changes: Sequence[ResourceChange], old: PlanDocument) -> tuple[Refusal, ...]:
    """Changes `pulumi up` cannot carry out on a running stack: to a created VPC (the stack adopts no VPC), a move
    of the Karpenter releases to another namespace, a replaced node role under running nodes."""
    found = _network_refusals(changes, old)
    found += _release_move_refusals(changes)
    found += _node_role_refusals(changes, old)
    return tuple(found)


HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
IAM_ROLE = "aws:iam/role:Role"


def _release_move_refusals(changes: Sequence[ResourceChange]) -> list[Refusal]:
    """A Helm release whose namespace or name changes is replaced: the old one deleted, Karpenter's with it (its
    destroy guard then waits for nothing), and CRDs Helm recorded under the old namespace refuse the new one."""
    moved = [c for c in changes if c.resource.type == HELM_RELEASE and c.op == "replace"
             and any(p.path[:1] in (("namespace",), ("name",)) for p in c.properties)]
    if not moved:
        return []
    names = ", ".join(f"`{c.resource.name}`" for c in moved)
    return [Refusal("karpenter.namespace", f"Helm releases {names} move to another namespace or name, which replaces "
                    "them on a running cluster: the controller goes before its replacement is up (no node is "
                    "launched or drained meanwhile), and the CRDs, which Helm keeps and records under the old "
                    "namespace, refuse to be installed by the new release. Keep the namespace the stack was "
                    "deployed with; to move, create a new stack (docs/changes.md)")]


def _node_role_refusals(changes: Sequence[ResourceChange], old: PlanDocument) -> list[Refusal]:
    """A replaced IAM role that running Karpenter nodes use (an EC2NodeClass names it): the provider deletes the
    old role, taking it out of the nodes' instance profiles, and its access entry goes with it, so every node
    loses its credentials and its cluster access long before drift replaces it."""
    used = {str(r.inputs.get("spec", {}).get("role")) for r in old.by_type(NODE_CLASS)}
    before = {r.urn: r for r in old.by_type(IAM_ROLE)}
    replaced = [c for c in changes if c.resource.type == IAM_ROLE and c.op in ("replace", "delete")
                and str(before.get(c.resource.urn, c.resource).inputs.get("name")) in used]
    if not replaced:
        return []
    names = ", ".join(f"`{c.resource.name}`" for c in replaced)
    return [Refusal("iamNames", f"the node role ({names}) that running Karpenter nodes use is replaced (a new "
                    "`iamNames`, cluster name or region): deleting the old role takes it out of the nodes' instance "
                    "profiles and its access entry goes with it, so every Karpenter node loses its credentials and "
                    "its cluster access at the end of this `up`, before drift replaces it. Keep the names the stack "
                    "was deployed with (`iamNames: legacy` for a stack from before 0.2.0); for new names, create a "
                    "new stack beside it and move the workloads (docs/UPGRADING.md)")]


def _network_refusals(changes: Sequence[ResourceChange], old: PlanDocument) -> list[Refusal]:
    """Changes to a created VPC that cannot be applied to a running cluster (the stack adopts no VPC)."""
    found: list[Refusal] = []
    vpc = next((c for c in changes if c.resource.type == VPC and c.op in ("replace", "delete")), None)
    if vpc is not None and vpc.op == "delete":
        found.append(Refusal("network.vpcId", "the VPC this stack created would be deleted (the network section now "
                             "adopts a VPC, or was removed): the running cluster, its nodes and load balancers sit "
                             "in it. Restore the network section. To run in another VPC, create a new stack "
                             "there, move the workloads, then destroy this one"))
        return found
    if vpc is not None:
        cidr = next((p for p in vpc.properties if p.path == ("cidrBlock",)), None)
        shown = f" ({cidr.old} -> {cidr.new})" if cidr is not None else ""
        found.append(Refusal("network.vpcCidr", f"network.vpcCidr changed{shown} on a stack that created its VPC: "
                             "a VPC's CIDR cannot change in place, so the VPC, its subnets, gateways and NAT would "
                             "be replaced under a running cluster, which EKS cannot move to another VPC. Keep the "
                             "old vpcCidr. For more addresses, add a secondary CIDR to the VPC; for a new range, "
                             "create a new stack with it, move the workloads (see docs/changes.md), then destroy "
                             "this one"))
        return found
    subnets = [c for c in changes if c.resource.type == SUBNET and c.op in ("replace", "delete")]
    if subnets and _created_subnets(old):
        names = ", ".join(f"`{c.resource.name}`" for c in subnets)
        found.append(Refusal("network.availabilityZones", "network.availabilityZones reordered or shortened on a "
                             f"stack that created its VPC: subnets {names} would be replaced or deleted, but the "
                             "cluster's network interfaces and nodes sit in them (each zone's ranges follow its "
                             "position in the list). Keep the existing zones in their order; append a new zone at "
                             "the end. To leave a zone, create a new stack and move the workloads"))
    return found


def _created_subnets(doc: PlanDocument) -> bool:
    return any(r.type == SUBNET for r in doc.resources)


def fleet_lines(fleets: Iterable[Fleet]) -> list[str]:
    """Markdown bullets, one per fleet."""
    return [f"- {f.kind} `{f.name}`: " + "; ".join(f.causes) + f". Pace: {f.pacing}." for f in fleets]
