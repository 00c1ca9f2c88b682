"""The Cluster Autoscaler hand-off on the brownfield stack, phase by phase: what each phase registers, the diff
from the phase before (and back, for a rollback), and the rules that refuse a wrong step."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from eks_karpenter.config.errors import ConfigError
from eks_karpenter.platform.migration import LegacyNodeGroup, node_group_scaling
from eks_karpenter.tools.engine import PlanDocument, plan_program, run_plan
from eks_karpenter.tools.engine import mocks as engine_mocks
from eks_karpenter.tools.engine.diff import diff_plans

from tests.support import REPO, plan_config, stack_config

PATCH = "kubernetes:apps/v1:DeploymentPatch"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"
GET_NODE_GROUP = "aws:eks/getNodeGroup:getNodeGroup"
TAINT = {"key": "eks-karpenter.io/migration", "value": "opt-in", "effect": "NoSchedule"}
GROUPS = ("spot-4vcpu-16gb", "spot-8vcpu-32gb")


def migration(**changes: Any) -> dict[str, Any]:
    return {**stack_config("brownfield")["eks-karpenter:migration"], **changes}


def groups(**each: Any) -> list[dict[str, Any]]:
    return [{**g, **each} for g in migration()["nodeGroups"]]


def pinned(desired: int) -> Any:
    """getNodeGroup as the cluster reports a group after phase 2 pinned it (or phase 3 drained it)."""
    def answer(args: dict[str, Any]) -> dict[str, Any]:
        found = engine_mocks.placeholder_answer(GET_NODE_GROUP, args, "us-west-2", recorded=True)
        if args["nodeGroupName"] in GROUPS:
            found["scalingConfigs"] = [{"minSize": desired, "maxSize": max(desired, 1), "desiredSize": desired}]
        return found
    return answer


def plan_phase(section: dict[str, Any], nodes: int | None = None) -> PlanDocument:
    return plan_program(REPO, "brownfield", config_overrides={"eks-karpenter:migration": json.dumps(section)},
                        invoke_results={GET_NODE_GROUP: pinned(nodes)} if nodes is not None else None)


def changes(old: PlanDocument, new: PlanDocument) -> dict[tuple[str, str], dict[str, tuple[Any, Any]]]:
    """(op, resource name) -> {changed property or option: (old, new)}."""
    return {(c.op, c.resource.name): {p.label: (p.old, p.new) for p in c.properties}
            for c in diff_plans(old, new).changes}


def test_phase_1_installs_beside_cluster_autoscaler_and_changes_nothing_running() -> None:
    doc = plan_phase(migration(phase=1))
    [pool] = doc.by_type(NODEPOOL)
    assert pool.inputs["spec"]["template"]["spec"]["taints"] == [TAINT]  # only opted-in pods go to Karpenter
    assert doc.outputs["workloadScheduling"]["default"]["tolerations"] == [{**TAINT, "operator": "Equal"}]
    [patch] = doc.by_type(PATCH)
    assert patch.inputs == {"apiVersion": "apps/v1", "kind": "Deployment",
                            "metadata": {"name": "cluster-autoscaler-aws-cluster-autoscaler",
                                         "namespace": "kube-system",
                                         "annotations": {"pulumi.com/patchForce": "true"}},
                            "spec": {"replicas": 1}}
    for group in doc.by_type(NODE_GROUP):
        # Imported as it is: its own bounds, Cluster Autoscaler's desired size left alone, nothing else touched.
        assert group.inputs["scalingConfig"] == {"minSize": 0, "maxSize": 10, "desiredSize": 3}
        assert group.options["import"] == f"legacy-cas:{group.inputs['nodeGroupName']}"
        assert {"scalingConfig.desiredSize", "instanceTypes", "labels", "taints", "subnetIds"} \
            <= set(group.options["ignoreChanges"])
        assert group.options["retainOnDelete"] is True
    assert sorted(g.inputs["nodeGroupName"] for g in doc.by_type(NODE_GROUP)) == list(GROUPS)
    assert doc.outputs["migration"] == {
        "phase": 1, "nodePools": ["default"], "pendingPodsMaxAge": "5m",
        "clusterAutoscaler": {"namespace": "kube-system", "name": "cluster-autoscaler-aws-cluster-autoscaler",
                              "replicas": 1}}


def test_nothing_is_touched_without_a_migration_section(tmp_path: Path) -> None:
    config = stack_config("brownfield")
    del config["eks-karpenter:migration"]
    doc = plan_config(config, tmp_path, stack="brownfield").document
    assert doc.by_type(PATCH) == [] and doc.by_type(NODE_GROUP) == []
    assert "taints" not in doc.by_type(NODEPOOL)[0].inputs["spec"]["template"]["spec"]


def test_phase_2_diff_scales_cluster_autoscaler_to_zero_pins_the_groups_and_opens_the_pools() -> None:
    diff = changes(plan_phase(migration(phase=1)), plan_phase(migration(phase=2)))
    assert set(diff) == {("update", "migration-cluster-autoscaler"), ("update", "nodepool-default"),
                         *(("update", f"migration-nodegroup-{g}") for g in GROUPS)}
    assert diff[("update", "migration-cluster-autoscaler")] == {"spec.replicas": (1, 0)}
    assert list(diff[("update", "nodepool-default")]) == ["spec.template.spec.taints"]
    for g in GROUPS:
        moved = diff[("update", f"migration-nodegroup-{g}")]
        assert moved["scalingConfig.minSize"] == (0, 3) and moved["scalingConfig.maxSize"] == (10, 3)
        assert "option ignoreChanges" in moved  # the desired size is now the stack's


def test_rollback_from_phase_2_is_setting_phase_1_again() -> None:
    # After phase 2 the cluster reports the groups pinned at 3; phase 1 restores the bounds and the replicas.
    diff = changes(plan_phase(migration(phase=2), nodes=3), plan_phase(migration(phase=1), nodes=3))
    assert diff[("update", "migration-cluster-autoscaler")] == {"spec.replicas": (0, 1)}
    for g in GROUPS:
        moved = diff[("update", f"migration-nodegroup-{g}")]
        assert moved["scalingConfig.minSize"] == (3, 0) and moved["scalingConfig.maxSize"] == (3, 10)
    assert ("update", "nodepool-default") in diff
    assert not [k for k in diff if k[0] != "update"]


def test_phase_3_drains_step_by_step_and_each_step_is_one_diff() -> None:
    before = plan_phase(migration(phase=2), nodes=3)
    step = plan_phase(migration(phase=3, nodeGroups=groups(drainTo=1)), nodes=3)
    diff = changes(before, step)
    assert set(diff) == {("update", f"migration-nodegroup-{g}") for g in GROUPS}
    for g in GROUPS:
        assert diff[("update", f"migration-nodegroup-{g}")] == {
            "scalingConfig.desiredSize": (3, 1), "scalingConfig.maxSize": (3, 1), "scalingConfig.minSize": (3, 1)}
    last = plan_phase(migration(phase=3, nodeGroups=groups(drainTo=0)), nodes=1)
    for group in last.by_type(NODE_GROUP):
        assert group.inputs["scalingConfig"] == {"minSize": 0, "maxSize": 1, "desiredSize": 0}
    # Rollback of a step: raise drainTo again (or remove it: pinned at the size the cluster reports).
    assert changes(last, step) and all(op == "update" for op, _ in changes(last, step))


def test_phase_4_hands_the_groups_back_and_keeps_cluster_autoscaler_at_zero() -> None:
    drained = plan_phase(migration(phase=3, nodeGroups=groups(drainTo=0)), nodes=0)
    done = plan_phase(migration(phase=4), nodes=0)
    diff = changes(drained, done)
    # handBack: retained on delete, so leaving the stack does not delete the group: the diff says "forget".
    assert set(diff) == {("forget", f"migration-nodegroup-{g}") for g in GROUPS}
    assert all(g.options["retainOnDelete"] is True for g in drained.by_type(NODE_GROUP))
    [patch] = done.by_type(PATCH)
    assert patch.inputs["spec"] == {"replicas": 0}


def test_phase_4_deletes_groups_marked_delete_only_once_they_are_empty() -> None:
    # Until a group marked delete is drained to 0 in phase 3, even `pulumi destroy` keeps it.
    for early in (migration(phase=1, nodeGroups=groups(afterMigration="delete")),
                  migration(phase=3, nodeGroups=groups(afterMigration="delete", drainTo=1))):
        assert all(g.options["retainOnDelete"] is True for g in plan_phase(early, nodes=1).by_type(NODE_GROUP))
    marked = groups(afterMigration="delete", drainTo=0)
    drained = plan_phase(migration(phase=3, nodeGroups=marked), nodes=0)
    assert all("retainOnDelete" not in g.options for g in drained.by_type(NODE_GROUP))
    section = migration(phase=4, nodeGroups=groups(afterMigration="delete"))
    assert plan_phase(section, nodes=0).by_type(NODE_GROUP) == []
    result = run_plan(REPO, "brownfield", config_overrides={"eks-karpenter:migration": json.dumps(section)},
                      invoke_results={GET_NODE_GROUP: pinned(2)})
    assert isinstance(result.error, ConfigError)
    assert result.document.resources == []
    lines = str(result.error).splitlines()[1:]
    assert lines[0] == ("stacks/Pulumi.brownfield.yaml: eks-karpenter:migration.nodeGroups[0].afterMigration: node "
                        "group 'spot-4vcpu-16gb' still has 2 nodes: drain it in phase 3 (drainTo: 0) before phase 4 "
                        'deletes it, or hand it back (got "delete")')


@pytest.mark.parametrize(("section", "where", "fragment"), [
    ({"phase": 2, "nodeGroups": [{"name": "a", "minSize": 0, "maxSize": 4, "drainTo": 1}]},
     "eks-karpenter:migration.nodeGroups[0].drainTo", "only applies in phase 3"),
    ({"phase": 3, "nodeGroups": [{"name": "a", "minSize": 0, "maxSize": 4, "drainTo": 5}]},
     "eks-karpenter:migration.nodeGroups[0].drainTo", "above the group's maxSize"),
    ({"phase": 1, "nodeGroups": [{"name": "a", "minSize": 5, "maxSize": 4}]},
     "eks-karpenter:migration.nodeGroups[0].minSize", "above maxSize"),
    ({"phase": 1, "nodeGroups": [{"name": "a", "minSize": 0, "maxSize": 4}, {"name": "a", "minSize": 0,
                                                                            "maxSize": 4}]},
     "eks-karpenter:migration.nodeGroups[1].name", "listed twice"),
    ({"phase": 1, "nodeGroups": [{"name": "core", "minSize": 2, "maxSize": 3}]},
     "eks-karpenter:migration.nodeGroups[0].name", "the Karpenter controller runs on this group"),
    ({"phase": 5}, "eks-karpenter:migration.phase", "1, 2, 3 or 4"),
])
def test_bad_migration_steps_are_refused_naming_the_key(tmp_path: Path, section: dict[str, Any], where: str,
                                                        fragment: str) -> None:
    config = stack_config("brownfield")
    config["eks-karpenter:migration"] = section
    result = plan_config(config, tmp_path, stack="brownfield")
    assert isinstance(result.error, ConfigError)
    [line] = [x for x in str(result.error).splitlines()[1:] if f" {where}: " in x]
    assert fragment in line
    assert result.document.resources == []


def test_a_migration_needs_an_adopted_cluster(tmp_path: Path) -> None:
    config = stack_config("dev")
    config["eks-karpenter:migration"] = {"phase": 1}
    result = plan_config(config, tmp_path, stack="dev")
    assert isinstance(result.error, ConfigError)
    assert "eks-karpenter:migration: only applies to an existing cluster" in str(result.error)


# --- where the controller runs on an adopted cluster --------------------------------------------------------------

def placed(tmp_path: Path, **karpenter: Any) -> Any:
    config = stack_config("brownfield")
    section = {k: v for k, v in config["eks-karpenter:karpenter"].items() if k != "nodeSelector"}
    config["eks-karpenter:karpenter"] = {**section, **karpenter}
    return plan_config(config, tmp_path, stack="brownfield")


def test_an_adopted_cluster_without_a_stable_placement_is_refused_naming_the_keys(tmp_path: Path) -> None:
    result = placed(tmp_path)
    assert isinstance(result.error, ConfigError)
    [line] = str(result.error).splitlines()[1:]
    # the line of the karpenter section, which has no nodeSelector to point at
    assert re.match(r"stacks/Pulumi\.brownfield\.yaml:\d+: eks-karpenter:karpenter\.nodeSelector: the cluster is "
                    r"adopted \(eks-karpenter:cluster\.existing\)", line), line
    assert "{eks.amazonaws.com/nodegroup: <group>}" in line
    assert "eks-karpenter:karpenter.controllerOnFargate: true" in line
    assert result.document.resources == []


@pytest.mark.parametrize("selector", [{"eks.amazonaws.com/capacityType": "SPOT"}, {"lifecycle": "Ec2Spot"},
                                      {"karpenter.sh/nodepool": "default"}])
def test_a_selector_naming_removable_capacity_is_refused(tmp_path: Path, selector: dict[str, str]) -> None:
    result = placed(tmp_path, nodeSelector={"eks.amazonaws.com/nodegroup": "core", **selector})
    assert isinstance(result.error, ConfigError)
    [key] = selector
    assert f"eks-karpenter:karpenter.nodeSelector.{key}: selects nodes an autoscaler or EC2 takes away" \
        in str(result.error)


def test_fargate_is_a_stable_placement(tmp_path: Path) -> None:
    result = placed(tmp_path, controllerOnFargate=True)
    assert result.error is None
    assert result.document.by_type("aws:eks/fargateProfile:FargateProfile")


def test_scaling_per_phase_is_pure_data() -> None:
    group = LegacyNodeGroup(name="g", min_size=1, max_size=6, drain_to=2)
    assert node_group_scaling(group, 1, 4).dump() == {"minSize": 1, "maxSize": 6, "desiredSize": 4}
    assert node_group_scaling(group, 2, 4).dump() == {"minSize": 4, "maxSize": 4, "desiredSize": 4}
    assert node_group_scaling(group, 3, 4).dump() == {"minSize": 2, "maxSize": 2, "desiredSize": 2}
    # a desired size outside the bounds (a group resized by hand) is clamped into them
    assert node_group_scaling(group, 2, 9).desired_size == 6
