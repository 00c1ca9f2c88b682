"""Routine day-2 changes on prod, planned and diffed as `diff --base` would: nothing protected is replaced, and
the diff names the node fleets whose nodes are replaced. Changes a running cluster cannot take are refused."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from eks_karpenter.tools.engine import PlanDocument, plan_program
from eks_karpenter.tools.engine.diff import PlanDiff, diff_plans, render_diff_markdown

from tests.support import REPO, plan_stack, stack_config

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


def system_instance_types(c: dict[str, Any]) -> None:
    c["eks-karpenter:cluster"]["systemNodeGroup"]["instanceTypes"] = ["m7i.2xlarge", "m6i.2xlarge"]


def kubernetes_minor(c: dict[str, Any]) -> None:
    c["eks-karpenter:cluster"]["version"] = "1.36"


def karpenter_chart(c: dict[str, Any]) -> None:
    # Another supported release (versions.KARPENTER_RELEASES): the change between two releases, either way, must
    # plan with nothing protected replaced.
    c.setdefault("eks-karpenter:karpenter", {})["version"] = "1.13.1"


def pool_requirements(c: dict[str, Any]) -> None:
    general = next(p for p in c["eks-karpenter:nodePools"] if p["name"] == "general")
    general["instanceCategories"] = ["c", "m"]


def add_team(c: dict[str, Any]) -> None:
    c["eks-karpenter:access"].setdefault("teams", []).append({
        "name": "payments", "namespaces": ["payments"],
        "principalArns": ["arn:aws:iam::123456789012:role/payments-deploy"]})


def add_pool(c: dict[str, Any]) -> None:
    pool = copy.deepcopy(next(p for p in c["eks-karpenter:nodePools"] if p["name"] == "arm64"))
    pool["name"] = "batch"
    c["eks-karpenter:nodePools"].append(pool)


ROUTINE: dict[str, tuple[Edit, set[tuple[str, str]]]] = {
    # change -> the fleets whose nodes it replaces, (kind, name)
    "system group instance types": (system_instance_types, {("node group", "cluster-system")}),
    "Kubernetes minor": (kubernetes_minor, {("node group", "cluster-system"), ("NodePool", "general"),
                                           ("NodePool", "critical"), ("NodePool", "arm64")}),
    "Karpenter chart version": (karpenter_chart, set()),
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
