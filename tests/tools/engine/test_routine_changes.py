"""Routine day-2 changes, planned and diffed as `diff --base` would: on prod, nothing protected is replaced and the
diff names the node fleets whose nodes are replaced; every shipped stack goes through the matrix of routine
changes, forward and back, with nothing colliding or refused. Changes a running cluster cannot take are refused."""

from __future__ import annotations

import copy
import functools
import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest
from eks_karpenter import versions
from eks_karpenter.tools.engine import PlanDocument, plan_program
from eks_karpenter.tools.engine.diff import PlanDiff, diff_plans, render_diff_markdown
from eks_karpenter.tools.engine.upgrades import upgrade_problems

from tests.support import REPO, STACKS, plan_stack, stack_config

Edit = Callable[[dict[str, Any]], None]


def planned(edit: Edit, stack: str = "prod") -> PlanDocument:
    config = stack_config(stack)
    edit(config)
    overrides = {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()
                 if k.startswith("eks-karpenter:")}
    return plan_program(REPO, stack, config_overrides=overrides)


def diff_of(edit: Edit, stack: str = "prod") -> PlanDiff:
    return diff_plans(plan_stack(stack), planned(edit, stack))


def _section(key: str) -> Callable[[dict[str, Any]], Any]:
    return lambda config: config[f"eks-karpenter:{key}"]


# The routine edits, written for any shipped stack (the matrix below runs them on each; the tests here on prod).

def _access(c: dict[str, Any]) -> dict[str, Any]:
    access: dict[str, Any] = c.setdefault("eks-karpenter:access", {})
    return access


def _created(c: dict[str, Any]) -> bool:
    return not c["eks-karpenter:cluster"].get("existing")


def system_instance_types(c: dict[str, Any]) -> None:
    c["eks-karpenter:cluster"]["systemNodeGroup"]["instanceTypes"] = ["m7i.2xlarge", "m6i.2xlarge"]


def kubernetes_minor(c: dict[str, Any]) -> None:
    """The next minor (prod's 1.35 -> 1.36)."""
    minor = c["eks-karpenter:cluster"]["version"]
    c["eks-karpenter:cluster"]["version"] = f"1.{int(minor.split('.')[1]) + 1}"


def karpenter_release(version: str) -> Edit:
    """Another supported release (versions.KARPENTER_RELEASES): the change between two releases, either way, must
    plan with nothing protected replaced."""
    def edit(c: dict[str, Any]) -> None:
        c.setdefault("eks-karpenter:karpenter", {})["version"] = version
    return edit


def pool_requirements(c: dict[str, Any]) -> None:
    """The first pool's instance categories (prod's `general`)."""
    c["eks-karpenter:nodePools"][0]["instanceCategories"] = ["c", "m"]


def add_team(c: dict[str, Any]) -> None:
    _access(c).setdefault("teams", []).append({
        "name": "payments", "namespaces": ["payments"],
        "principalArns": ["arn:aws:iam::123456789012:role/payments-deploy"]})


def add_pool(c: dict[str, Any]) -> None:
    """A copy of the last pool (prod's `arm64`) named `batch`."""
    pool = copy.deepcopy(c["eks-karpenter:nodePools"][-1])
    pool["name"] = "batch"
    c["eks-karpenter:nodePools"].append(pool)


ROUTINE: dict[str, tuple[Edit, set[tuple[str, str]]]] = {
    # change -> the fleets whose nodes it replaces, (kind, name)
    "system group instance types": (system_instance_types, {("node group", "cluster-system")}),
    "Kubernetes minor": (kubernetes_minor, {("node group", "cluster-system"), ("NodePool", "general"),
                                           ("NodePool", "critical"), ("NodePool", "arm64")}),
    "Karpenter chart version": (karpenter_release("1.13.1"), set()),
    "a NodePool's requirements": (pool_requirements, {("NodePool", "general")}),
    "adding a team": (add_team, set()),
    "adding a NodePool": (add_pool, set()),
}


@pytest.mark.parametrize("change", list(ROUTINE))
def test_routine_change_on_prod_replaces_nothing_protected_and_names_its_fleets(change: str) -> None:
    edit, fleets = ROUTINE[change]
    diff = diff_of(edit)
    assert diff.has_changes, change
    assert not diff.refused
    assert [c.resource.name for c in diff.changes if c.blocked] == []
    assert not [c for c in diff.changes if c.op in ("replace", "delete") and c.resource.options.get("protect")]
    assert {(f.kind, f.name) for f in diff.fleets} == fleets
    text = render_diff_markdown(diff)
    assert "Protected, so `pulumi up` stops" not in text
    for kind, name in fleets:
        assert f"- {kind} `{name}`:" in text


def test_system_group_instance_types_replace_the_group_create_first() -> None:
    diff = diff_of(system_instance_types)
    group = next(c for c in diff.changes if c.resource.name == "cluster-system")
    assert group.op == "replace" and group.order == "create-before-delete"
    assert not group.protected


def test_drift_names_the_pools_budgets_for_drifted() -> None:
    diff = diff_of(pool_requirements)
    (general,) = diff.fleets
    assert "requirements" in general.causes[0]
    # prod's general pool: 10% always, none during New York business hours for Drifted (08:00-18:00 local,
    # rendered in UTC to cover both daylight-saving offsets)
    assert general.pacing == ("disruption budgets for `Drifted`: nodes 10%; nodes 0 during "
                              "`0 12 * * mon,tue,wed,thu,fri` for 11h")


def test_kubernetes_minor_drifts_pools_whose_class_picks_its_ami_by_alias() -> None:
    diff = diff_of(kubernetes_minor)
    causes = {f.name: f.causes for f in diff.fleets}
    assert any("Kubernetes 1.35 -> 1.36" in c and "alias" in c for c in causes["general"])
    assert any("rolling update" in c for c in causes["cluster-system"])


def test_moving_the_library_ami_pin_rolls_the_system_group_and_drifts_the_pools(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The stacks inherit versions.AMI_ALIAS (what `pins --write` moves): the pools' EC2NodeClass and the system
    # group's release follow it, and the diff says both roll.
    base = plan_stack("prod")
    monkeypatch.setattr(versions, "AMI_ALIAS", "al2023@v20261101")
    diff = diff_plans(base, plan_program(REPO, "prod"))
    fleets = {(f.kind, f.name): f for f in diff.fleets}
    assert set(fleets) == {("node group", "cluster-system"), ("NodePool", "general"), ("NodePool", "critical"),
                           ("NodePool", "arm64")}
    assert fleets[("node group", "cluster-system")].causes == ("rolling update (`releaseVersion`)",)
    system = next(c for c in diff.changes if c.resource.name == "cluster-system")
    [release] = system.properties
    assert (release.old, release.new) == ("1.35.0-20260815", "1.35.0-20261101") and system.op == "update"
    assert not diff.refused and not [c for c in diff.changes if c.blocked]


def test_a_node_class_ami_change_drifts_every_pool_using_it() -> None:
    def new_ami(c: dict[str, Any]) -> None:
        c["eks-karpenter:nodeClasses"][0]["amiSelectorTerms"] = [{"alias": "al2023@v20260901"}]

    diff = diff_of(new_ami)
    assert {f.name for f in diff.fleets} == {"general", "critical", "arm64"}
    assert all(f.causes == ("EC2NodeClass `default` `amiSelectorTerms` alias al2023@v20260815 -> al2023@v20260901: "
                            "another AMI release, so nodes on the old AMI drift",) for f in diff.fleets)


def test_behavioural_pool_edits_replace_no_node() -> None:
    def limits(c: dict[str, Any]) -> None:
        c["eks-karpenter:nodePools"][0]["limits"] = {"cpu": "2000", "memory": "2000Gi"}

    diff = diff_of(limits)
    assert diff.has_changes and diff.fleets == ()


# --- refused -------------------------------------------------------------------------------------------------


def test_a_new_vpc_cidr_is_refused_with_what_to_do_instead() -> None:
    def cidr(c: dict[str, Any]) -> None:
        c["eks-karpenter:network"]["vpcCidr"] = "10.40.0.0/16"

    diff = diff_of(cidr)
    (refusal,) = diff.refused
    assert refusal.key == "network.vpcCidr"
    assert "10.30.0.0/16 -> 10.40.0.0/16" in refusal.message
    assert "new stack" in refusal.message and "secondary CIDR" in refusal.message
    assert "Refused: `pulumi up` cannot carry this change out" in render_diff_markdown(diff)


def test_reordered_zones_are_refused_appending_one_is_not() -> None:
    def reorder(c: dict[str, Any]) -> None:
        c["eks-karpenter:network"]["availabilityZones"] = ["us-east-1b", "us-east-1a", "us-east-1c"]

    (refusal,) = diff_of(reorder).refused
    assert refusal.key == "network.availabilityZones"
    assert "append a new zone at the end" in refusal.message

    def append(c: dict[str, Any]) -> None:
        c["eks-karpenter:network"]["availabilityZones"].append("us-east-1d")

    appended = diff_of(append)
    assert appended.has_changes and appended.refused == ()
    assert not [c for c in appended.changes if c.resource.type == "aws:ec2/subnet:Subnet" and c.op != "create"]


def test_an_adopted_vpc_has_nothing_to_refuse() -> None:
    assert diff_plans(plan_stack("brownfield"), plan_stack("brownfield")).refused == ()


def test_adopting_another_vpc_instead_of_the_created_one_is_refused() -> None:
    def adopt(c: dict[str, Any]) -> None:
        c["eks-karpenter:network"] = {
            "vpcId": "vpc-0a1b2c3d4e5f60718",
            "privateSubnetIds": {"us-east-1a": "subnet-0a1b2c3d4e5f60001", "us-east-1b": "subnet-0a1b2c3d4e5f60002",
                                 "us-east-1c": "subnet-0a1b2c3d4e5f60003"}}

    (refusal,) = diff_of(adopt).refused
    assert refusal.key == "network.vpcId" and "would be deleted" in refusal.message


def test_a_launch_template_change_rolls_its_node_group() -> None:
    def disk(c: dict[str, Any]) -> None:
        c["eks-karpenter:cluster"]["systemNodeGroup"]["diskSize"] = 80

    diff = diff_of(disk)
    (fleet,) = diff.fleets
    assert (fleet.kind, fleet.name) == ("node group", "cluster-system")
    assert "launch template `cluster-system-lt` gets a new version: rolling update" in fleet.causes[0]
    assert not [c for c in diff.changes if c.op == "replace"]


def test_removing_a_pool_names_its_nodes_as_terminated_unpaced() -> None:
    def remove(c: dict[str, Any]) -> None:
        c["eks-karpenter:nodePools"] = [p for p in c["eks-karpenter:nodePools"] if p["name"] != "arm64"]

    (fleet,) = diff_of(remove).fleets
    assert (fleet.kind, fleet.name) == ("NodePool", "arm64")
    assert "drains and terminates every node" in fleet.causes[0] and fleet.pacing.startswith("no budget")


def test_a_pool_whose_budgets_all_exclude_drift_says_drift_is_unpaced() -> None:
    def budgets(c: dict[str, Any]) -> None:
        general = next(p for p in c["eks-karpenter:nodePools"] if p["name"] == "general")
        general["disruption"]["budgets"] = [{"nodes": "10%", "reasons": ["Underutilized"]}]
        general["disruption"].pop("windows", None)
        general["disruption"].pop("timeZone", None)
        general["instanceCategories"] = ["c", "m"]

    (fleet,) = diff_of(budgets).fleets
    assert fleet.pacing == "no disruption budget covers `Drifted`: every drifted node may be replaced at once"


# --- every shipped stack through the routine changes, forward and back ------------------------------------------
#
# Each stack is planned once per variant (plans are cached) and each variant is diffed against the stack's own
# plan both ways: the change, and its rollback. Nothing may collide on a natural key (a create whose cloud
# identity a delete of the same update still holds), replace or delete anything protected, or be refused.

Variant = Callable[[str, dict[str, Any]], bool]
"""Edits a stack's config in place for a change; False where the change does not apply to that stack."""

OTHER_ARN = "arn:aws:iam::123456789012:role/platform-oncall"


def _on_created(edit: Edit) -> Variant:
    """A change to a cluster the stack creates (an adopted cluster's version and node groups are not its own)."""
    def variant(stack: str, c: dict[str, Any]) -> bool:
        if _created(c):
            edit(c)
        return _created(c)
    return variant


def _always(edit: Edit) -> Variant:
    def variant(stack: str, c: dict[str, Any]) -> bool:
        edit(c)
        return True
    return variant


def _v_karpenter(version: str) -> Variant:
    def edit(stack: str, c: dict[str, Any]) -> bool:
        if c.get("eks-karpenter:karpenter", {}).get("version", versions.KARPENTER_VERSION) == version:
            return False
        karpenter_release(version)(c)
        return True
    return edit


def _v_remove_team(stack: str, c: dict[str, Any]) -> bool:
    teams = _access(c).get("teams") or []
    if not teams:
        return False
    teams.pop()
    return True


def _v_remove_pool(stack: str, c: dict[str, Any]) -> bool:
    if len(c["eks-karpenter:nodePools"]) < 2:
        return False
    c["eks-karpenter:nodePools"].pop()
    return True


def _v_add_deployer(stack: str, c: dict[str, Any]) -> bool:
    _access(c).setdefault("deployers", []).append({"name": "oncall", "principalArn": OTHER_ARN})
    return True


def _v_remove_deployer(stack: str, c: dict[str, Any]) -> bool:
    # The read-only preview role: the identity running `up` stays.
    deployers = _access(c).get("deployers") or []
    previews = [d for d in deployers if d.get("role") == "preview"]
    if not previews:
        return False
    deployers.remove(previews[0])
    return True


def _v_deployer_to_admin(stack: str, c: dict[str, Any]) -> bool:
    deployers = _access(c).get("deployers") or []
    previews = [d for d in deployers if d.get("role") == "preview"]
    if not previews:
        return False
    deployers.remove(previews[0])
    _access(c).setdefault("clusterAdmins", []).append(previews[0]["principalArn"])
    return True


def _v_deployer_to_team(stack: str, c: dict[str, Any]) -> bool:
    deployers = _access(c).get("deployers") or []
    previews = [d for d in deployers if d.get("role") == "preview"]
    if not previews:
        return False
    deployers.remove(previews[0])
    add_team(c)
    _access(c)["teams"][-1]["principalArns"].append(previews[0]["principalArn"])
    return True


def _v_admin_to_team(stack: str, c: dict[str, Any]) -> bool:
    admins = _access(c).get("clusterAdmins") or []
    if not admins:
        return False
    moved = admins.pop()
    add_team(c)
    _access(c)["teams"][-1]["principalArns"].append(moved)
    return True


def _v_team_to_deployer(stack: str, c: dict[str, Any]) -> bool:
    teams = _access(c).get("teams") or []
    if not teams:
        return False
    moved = teams[0]["principalArns"][0]
    teams[0]["principalArns"] = ["arn:aws:iam::123456789012:role/team-successor"]
    _access(c).setdefault("deployers", []).append({"name": "promoted", "principalArn": moved})
    return True


def _v_observability(stack: str, c: dict[str, Any]) -> bool:
    obs = c.setdefault("eks-karpenter:observability", {})
    obs["enabled"] = not obs.get("enabled", False)
    return True


def _v_phase(phase: int) -> Variant:
    def edit(stack: str, c: dict[str, Any]) -> bool:
        migration = c.get("eks-karpenter:migration")
        if migration is None:
            return False
        migration["phase"] = phase
        if phase >= 3:
            for group in migration["nodeGroups"]:
                group["drainTo"] = 0
        return True
    return edit


VARIANTS: dict[str, Variant] = {
    "Kubernetes minor": _on_created(kubernetes_minor),
    **{f"Karpenter {v}": _v_karpenter(v) for v in versions.KARPENTER_RELEASES},
    "system group instance types": _on_created(system_instance_types),
    "pool requirements": _always(pool_requirements),
    "add a team": _always(add_team),
    "remove a team": _v_remove_team,
    "add a pool": _always(add_pool),
    "remove a pool": _v_remove_pool,
    "add a deployer": _v_add_deployer,
    "remove a deployer": _v_remove_deployer,
    "deployer to clusterAdmins": _v_deployer_to_admin,
    "deployer to a team": _v_deployer_to_team,
    "cluster admin to a team": _v_admin_to_team,
    "team principal to deployers": _v_team_to_deployer,
    "observability on/off": _v_observability,
    **{f"migration phase {p}": _v_phase(p) for p in (2, 3, 4)},
}

ONE_WAY = {"Kubernetes minor"}
"""Changes with no rollback: EKS cannot downgrade a control plane (`diff` refuses it, as it should)."""


@functools.cache
def variant_plan(stack: str, variant: str) -> PlanDocument | None:
    """The stack's plan with one variant applied (None where it does not apply); `""` is the stack as shipped."""
    if not variant:
        return plan_stack(stack)
    config = stack_config(stack)
    if not VARIANTS[variant](stack, config):
        return None
    overrides = {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()
                 if k.startswith("eks-karpenter:")}
    return plan_program(REPO, stack, config_overrides=overrides)


def transitions() -> list[tuple[str, str, str]]:
    """(stack, from variant, to variant): each variant from the shipped stack and back, and the migration's
    phases one step at a time forward and back."""
    found = []
    for stack in STACKS:
        applies = [v for v in VARIANTS if VARIANTS[v](stack, stack_config(stack))]
        for variant in applies:
            if variant.startswith("migration phase"):
                continue
            found.append((stack, "", variant))
            if variant not in ONE_WAY:
                found.append((stack, variant, ""))
        phases = ["", *(v for v in applies if v.startswith("migration phase"))]
        for a, b in itertools.pairwise(phases):
            found += [(stack, a, b), (stack, b, a)]
    return found


def _label(t: tuple[str, str, str]) -> str:
    return f"{t[0]}: {t[1] or 'shipped'} -> {t[2] or 'shipped'}"


@pytest.mark.slow
@pytest.mark.parametrize("transition", transitions(), ids=_label)
def test_routine_transitions_collide_on_nothing_and_go_through(transition: tuple[str, str, str]) -> None:
    stack, before, after = transition
    old, new = variant_plan(stack, before), variant_plan(stack, after)
    assert old is not None and new is not None
    diff = diff_plans(old, new)
    assert diff.has_changes, "the variant changes nothing: the matrix would test nothing"
    assert diff.collisions == (), [(c.created.name, c.held_by.name) for c in diff.collisions]
    assert diff.refused == (), [r.message for r in diff.refused]
    assert upgrade_problems(old, new) == []
    assert [c.resource.name for c in diff.changes if c.blocked] == []


# --- changes a running stack cannot take in one `up` ---------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("stack", ["dev", "brownfield"])
def test_moving_the_karpenter_namespace_is_refused(stack: str) -> None:
    diff = diff_of(lambda c: c.setdefault("eks-karpenter:karpenter", {}).update(namespace="karpenter"), stack)
    assert [r.key for r in diff.refused if r.key == "karpenter.namespace"], render_diff_markdown(diff)
    assert "CRDs" in render_diff_markdown(diff)


@pytest.mark.slow
def test_renaming_the_node_role_under_running_nodes_is_refused() -> None:
    diff = diff_of(lambda c: c.__setitem__("eks-karpenter:iamNames", "legacy"), "prod")
    refused = [r for r in diff.refused if r.key == "iamNames"]
    assert refused and "loses its credentials" in refused[0].message, render_diff_markdown(diff)
