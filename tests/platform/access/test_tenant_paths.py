"""Paths a hostile tenant (a team with `edit` in its namespaces and pool rights) could take to other teams' pods,
the platform's nodes and capacity, or node credentials: each evaluated with CEL on the attack object (refused)
and on the legitimate object beside it (still admitted)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from eks_karpenter.platform.access.admission import Decision
from eks_karpenter.platform.access.guardrails import (
    TEAM_LABEL,
    PlatformNodeAccess,
    platform_kms_keys,
    platform_taint_keys,
    private_classes,
    team_policy,
    team_workload_policy,
)
from eks_karpenter.platform.nodepool.class_config import NodeClassConfig
from eks_karpenter.platform.nodepool.config import NodePoolConfig

from tests.platform.access.test_tenancy import BATCH, PLATFORM, TEAM, TEAM_TAINT, _pod, node_class, node_pool
from tests.support import plan_config, plan_stack, stack_config
from tests.support.admission import admit

# The prod stack's pools: `critical` is tainted for whom it is for, `arm64` for what its nodes are.
POOLS = [NodePoolConfig.model_validate(p) for p in (
    {"name": "general"},
    {"name": "critical", "taints": [{"key": "workload-tier", "value": "critical", "effect": "NoSchedule"}]},
    {"name": "arm64", "taints": [{"key": "kubernetes.io/arch", "value": "arm64", "effect": "NoSchedule"}]},
)]
WORKLOADS = team_workload_policy(TEAM, PlatformNodeAccess(**{**PLATFORM.__dict__, "taint_keys": platform_taint_keys(
    ["CriticalAddonsOnly"], POOLS)}))
WEB_NODE = "ip-10-20-33-7.eu-west-1.compute.internal"


def _in_team(pod: dict[str, Any], operation: str = "CREATE", old: dict[str, Any] | None = None,
             policy: dict[str, Any] = WORKLOADS) -> Decision:
    decision: Decision = admit(policy, operation, ["system:serviceaccount:kube-system:replicaset-controller"], pod, old,
                     resource="pods", namespace="batch")
    assert decision.matched
    return decision


def _refused(pod: dict[str, Any], why: str) -> None:
    denied = _in_team(pod).denied
    assert any(why in m for m in denied), denied


# --- pods: the scheduler and its taints ---------------------------------------------------------------------------

def test_a_pod_may_not_name_its_node_at_creation() -> None:
    # nodeName skips the scheduler, and the kubelet admits a pod past every NoSchedule taint.
    _refused(_pod(nodeName=WEB_NODE), "skips the scheduler")
    # The scheduler binds through pods/binding; later updates of a bound pod carry its node.
    bound = _pod(nodeName=WEB_NODE)
    relabelled = copy.deepcopy(bound)
    relabelled["metadata"]["labels"] = {"app": "reports"}
    assert _in_team(relabelled, "UPDATE", old=bound).denied == []
    assert _in_team(_pod()).denied == []


EVERYTHING = {"labelSelector": {}, "topologyKey": "kubernetes.io/os"}


def _anti(*terms: dict[str, Any], kind: str = "podAntiAffinity",
          when: str = "requiredDuringSchedulingIgnoredDuringExecution") -> dict[str, Any]:
    return {"affinity": {kind: {when: list(terms)}}}


@pytest.mark.parametrize("term", [
    {**EVERYTHING, "namespaceSelector": {}},  # every namespace: no new pod on any Linux node
    {**EVERYTHING, "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}}},
    {**EVERYTHING, "namespaces": ["web"]},
    {**EVERYTHING, "namespaces": ["batch", "karpenter"]},
])
def test_required_anti_affinity_on_other_namespaces_pods_is_refused(term: dict[str, Any]) -> None:
    _refused(_pod(**_anti(term)), "required pod anti-affinity names only the team's namespaces")


@pytest.mark.parametrize("spec", [
    _anti({"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}),
    _anti({**EVERYTHING, "namespaces": ["batch"]}),
    # Preferred terms only weigh the scheduler's scores; required pod affinity only constrains the pod itself
    # (the scheduler holds existing pods' required anti-affinity, not their affinity, against new pods).
    _anti({"weight": 100, "podAffinityTerm": {**EVERYTHING, "namespaceSelector": {}}},
          when="preferredDuringSchedulingIgnoredDuringExecution"),
    _anti({**EVERYTHING, "namespaceSelector": {}}, kind="podAffinity"),
    {"affinity": {"nodeAffinity": {}, "podAntiAffinity": {}}},
    {"affinity": {}},
])
def test_anti_affinity_within_the_team_and_pod_affinity_are_admitted(spec: dict[str, Any]) -> None:
    assert _in_team(_pod(**spec)).denied == []


@pytest.mark.parametrize("key", ["CriticalAddonsOnly", "workload-tier", "karpenter.sh/disrupted",
                                 "karpenter.sh/unregistered"])
def test_tolerating_the_platforms_node_taints_is_refused(key: str) -> None:
    _refused(_pod(tolerations=[{"key": key, "operator": "Exists"}]), "may not tolerate the platform's node taints")


def test_the_platform_taint_keys_come_from_the_system_group_and_the_pools() -> None:
    # A well-known node label as taint key says what the nodes are (arm64), not whom they are for.
    assert platform_taint_keys(["CriticalAddonsOnly"], POOLS) == ("CriticalAddonsOnly", "workload-tier")


DAEMONSET_TOLERATIONS = [
    {"key": f"node.kubernetes.io/{k}", "operator": "Exists", "effect": "NoExecute"}
    for k in ("not-ready", "unreachable")] + [
    {"key": f"node.kubernetes.io/{k}", "operator": "Exists", "effect": "NoSchedule"}
    for k in ("disk-pressure", "memory-pressure", "pid-pressure", "unschedulable", "network-unavailable")]


def test_a_team_daemonset_pod_and_its_own_pools_taints_are_admitted() -> None:
    # What the DaemonSet controller writes into each of its pods: the condition tolerations and the node by name.
    daemon = _pod(tolerations=[TEAM_TAINT | {"operator": "Equal"}, *DAEMONSET_TOLERATIONS],
                  affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                      "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                              "values": [WEB_NODE]}]}]}}})
    assert _in_team(daemon).denied == []
    extra = _pod(tolerations=[TEAM_TAINT | {"operator": "Equal"}, {"key": "gpu", "operator": "Exists"},
                              {"key": "kubernetes.io/arch", "value": "arm64", "effect": "NoSchedule"}])
    assert _in_team(extra).denied == []


SYSTEM = {"key": "node-role/system", "operator": "In", "values": ["true"]}
GROUP = {"key": "eks.amazonaws.com/nodegroup", "operator": "In", "values": ["system-20261127"]}


@pytest.mark.parametrize("affinity", [
    {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [SYSTEM]}]}},
    {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]},
        {"matchExpressions": [GROUP]}]}},
    {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {"matchExpressions": [SYSTEM]}}]},
])
def test_node_affinity_on_the_system_nodes_or_a_node_group_is_refused(affinity: dict[str, Any]) -> None:
    _refused(_pod(affinity={"nodeAffinity": affinity}), "node affinity may not name")


def test_a_node_selector_on_a_node_group_is_refused_and_on_a_pool_admitted() -> None:
    _refused(_pod(nodeSelector={"eks.amazonaws.com/nodegroup": "system-20261127"}), "may not select nodes by")
    pool = {"key": "karpenter.sh/nodepool", "operator": "In", "values": ["batch-spot"]}
    admitted = _pod(nodeSelector={"lifecycle": "Ec2Spot"}, affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [pool]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {"matchExpressions": [
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]}}]}})
    assert _in_team(admitted).denied == []


def test_an_in_tree_ebs_volume_is_refused_and_a_claim_admitted() -> None:
    ebs = {"name": "data", "awsElasticBlockStore": {"volumeID": "vol-0123456789abcdef0", "fsType": "ext4"}}
    _refused(_pod(volumes=[ebs]), "awsElasticBlockStore")
    claim = {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}
    assert _in_team(_pod(volumes=[claim, {"name": "tmp", "emptyDir": {}}])).denied == []


def test_the_dev_plans_workload_policy_refuses_the_system_groups_taint() -> None:
    [policy] = [p.inputs for p in plan_stack("dev").by_type(
        "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy")
        if p.inputs["metadata"]["name"] == "eks-karpenter-team-batch-workloads"]
    critical = _pod(tolerations=[{"key": "CriticalAddonsOnly", "operator": "Exists"}])
    assert any("CriticalAddonsOnly" in m for m in _in_team(critical, policy=policy).denied)
    assert _in_team(_pod(tolerations=DAEMONSET_TOLERATIONS), policy=policy).denied == []


def test_a_system_group_hop_limit_above_1_with_teams_is_refused(tmp_path: Path) -> None:
    config = stack_config("dev")
    config["eks-karpenter:cluster"]["systemNodeGroup"] = {"httpPutResponseHopLimit": 2}
    result = plan_config(config, tmp_path)
    message = str(result.error)
    assert "eks-karpenter:cluster.systemNodeGroup.httpPutResponseHopLimit" in message, message
    assert "kubelet's identity" in message, message
    config["eks-karpenter:access"]["teams"] = []
    assert plan_config(config, tmp_path / "no-teams").error is None


# --- pools and classes: the platform's capacity, networking, keys and tags --------------------------------------

RESERVED = NodeClassConfig.model_validate({"name": "reserved", "capacityReservationSelectorTerms": [
    {"id": "cr-0123456789abcdef0"}]})
PLACED = NodeClassConfig.model_validate({"name": "placed", "placementGroupSelector": {"name": "training"}})
KEY = "arn:aws:kms:eu-west-1:123456789012:key/11111111-2222-3333-4444-555555555555"
ENCRYPTED = NodeClassConfig.model_validate({"name": "default", "blockDeviceMappings": [
    {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "50Gi", "encrypted": True, "kmsKeyID": KEY}}]})
STACK_TAGS = {"cost-center": "platform", "eks-karpenter/cluster": "dev-karpenter"}
CLASSES = [ENCRYPTED, RESERVED, PLACED]
POLICY = team_policy(TEAM, PlatformNodeAccess(**{
    **PLATFORM.__dict__, "node_classes": tuple(c.name for c in CLASSES), "private_node_classes": private_classes(
        CLASSES), "kms_key_ids": platform_kms_keys(CLASSES), "stack_tags": STACK_TAGS}))


def _denied(obj: dict[str, Any]) -> list[str]:
    decision: Decision = admit(POLICY, "CREATE", BATCH, obj)
    assert decision.matched
    return decision.denied


@pytest.mark.parametrize("name", ["reserved", "placed"])
def test_a_team_pool_may_not_use_a_platform_class_with_reservations_or_a_placement_group(name: str) -> None:
    reserved = [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["reserved"]}]
    denied = _denied(node_pool(node_class_name=name, requirements=reserved))
    assert any("capacity reservations or placement group" in m for m in denied), denied
    assert _denied(node_pool(node_class_name="default")) == []


def test_a_reserved_or_placed_class_stays_the_platforms_by_name() -> None:
    cls = node_class("reserved")
    cls["metadata"]["labels"] = {TEAM_LABEL: "batch"}
    assert any("may only create" in m for m in _denied(cls))


@pytest.mark.parametrize(("changes", "why"), [
    ({"placementGroupSelector": {"name": "web-training-pg"}}, "placement groups"),
    ({"ipPrefixCount": 49}, "platform's networking"),
    ({"networkInterfaces": [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "efa-only"}]},
     "platform's networking"),
    ({"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"encrypted": True, "kmsKeyID":
      "arn:aws:kms:eu-west-1:999999999999:key/99999999-2222-3333-4444-555555555555"}}]}, "account's EBS key"),
    ({"tags": {"Name": "dev-karpenter-system"}}, "no tag the platform sets"),
    ({"tags": {"aws-node-termination-handler/managed": "true"}}, "no tag the platform sets"),
    ({"tags": {"cost-center": "web"}}, "cost-center=platform"),
    ({"tags": {"eks-karpenter/cluster": "prod-karpenter"}}, "no tag the platform sets"),
])
def test_a_team_class_may_not_take_the_platforms_placement_networking_keys_or_tags(
        changes: dict[str, Any], why: str) -> None:
    denied = _denied(node_class(**changes))
    assert any(why in m for m in denied), denied


def test_a_team_class_with_the_platforms_key_and_stack_tags_is_admitted() -> None:
    cls = node_class(blockDeviceMappings=[{"deviceName": "/dev/xvda", "ebs": {"encrypted": True, "kmsKeyID": KEY}}],
                     tags={**STACK_TAGS, "team": "batch", "app": "reports"})
    assert _denied(cls) == []


def test_a_prod_team_may_not_tolerate_the_critical_pool_but_may_use_arm64(tmp_path: Path) -> None:
    config = stack_config("prod")
    config["eks-karpenter:access"] = {**config.get("eks-karpenter:access", {}), "teams": [TEAM.dump()]}
    result = plan_config(config, tmp_path, stack="prod")
    assert result.error is None, result.error
    [policy] = [p.inputs for p in result.document.by_type(
        "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy")
        if p.inputs["metadata"]["name"] == "eks-karpenter-team-batch-workloads"]
    critical = _pod(tolerations=[{"key": "workload-tier", "value": "critical", "effect": "NoSchedule"}],
                    nodeSelector={"workload-tier": "critical"})
    assert any("workload-tier" in m for m in _in_team(critical, policy=policy).denied)
    arm = _pod(tolerations=[{"key": "kubernetes.io/arch", "value": "arm64", "effect": "NoSchedule"}],
               nodeSelector={"kubernetes.io/arch": "arm64"})
    assert _in_team(arm, policy=policy).denied == []


# --- requirements that become node labels --------------------------------------------------------------------------

@pytest.mark.parametrize("key", ["eks.amazonaws.com/nodegroup", "eks.amazonaws.com/capacityType", "node-role/system"])
def test_a_pool_may_not_require_a_label_the_template_may_not_set(key: str) -> None:
    # A single-value `In` requirement becomes a label on every node Karpenter launches for the pool.
    pool = node_pool(requirements=[{"key": key, "operator": "In", "values": ["system-20261127"]}])
    assert any("requirements name no label in the domains the cluster schedules by" in m for m in _denied(pool))


def test_a_pool_may_narrow_by_karpenters_well_known_labels() -> None:
    pool = node_pool(requirements=[
        {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
        {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m7i.large"]},
        {"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["m7i"]},
        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eu-west-1a"]},
        {"key": "example.com/tier", "operator": "In", "values": ["batch"]}])
    assert _denied(pool) == []


# --- updates of pods admitted before a rule ----------------------------------------------------------------------

BEFORE = _pod(nodeName=WEB_NODE, tolerations=[{"key": "CriticalAddonsOnly", "operator": "Exists"}],
              nodeSelector={"node-role/system": "true"})
BEFORE["metadata"]["finalizers"] = ["batch.kubernetes.io/job-tracking"]


def test_an_update_that_keeps_what_a_rule_refuses_is_admitted() -> None:
    # The job controller removes its finalizer from a pod admitted before the rule: refusing it would leave the
    # pod Terminating for ever.
    released = copy.deepcopy(BEFORE)
    released["metadata"]["finalizers"] = []
    assert _in_team(released, "UPDATE", old=BEFORE).denied == []


def test_an_update_that_adds_a_refused_toleration_or_selector_is_refused() -> None:
    plain = _pod(schedulingGates=[{"name": "example.com/wait"}])
    tolerating = copy.deepcopy(plain)
    tolerating["spec"]["tolerations"] = [{"key": "CriticalAddonsOnly", "operator": "Exists"}]
    assert any("platform's node taints" in m for m in _in_team(tolerating, "UPDATE", old=plain).denied)
    # A gated pod's node selection may be narrowed by an update.
    selecting = copy.deepcopy(plain)
    selecting["spec"]["nodeSelector"] = {"node-role/system": "true"}
    assert any("may not select nodes" in m for m in _in_team(selecting, "UPDATE", old=plain).denied)
