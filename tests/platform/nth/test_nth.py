"""AWS Node Termination Handler: chart values, scheduling, rules, queue-mode AWS documents, and the component."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from typing import Any

import pulumi
import pytest
import yaml
from eks_karpenter import versions
from eks_karpenter.config.errors import Issue
from eks_karpenter.platform.iam.policy import irsa_trust_policy, pod_identity_trust_policy
from eks_karpenter.platform.interruption import queue_policy
from eks_karpenter.platform.nth import (
    MANAGED_TAG,
    SERVICE_ACCOUNT,
    NodeTerminationHandler,
    NthConfig,
    asg_lifecycle_event,
    nth_controller_policy,
    nth_events,
    nth_values,
    validate_nth,
)
from eks_karpenter.tools.engine import plan_components
from eks_karpenter.tools.engine.document import PlannedResource
from eks_karpenter.tools.engine.mocks import ACCOUNT_ID

from tests.support import UPSTREAM, requires_upstream
from tests.support.helm_keys import template_reads, undefined_keys, unread_keys

CHART_DIR = UPSTREAM / "charts" / "aws-node-termination-handler"
REGION = "eu-west-1"
AT = ("eks-karpenter:nodeTerminationHandler",)
AT_GROUPS = ("eks-karpenter:cluster", "spotNodeGroups")
QUEUE_URL = f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT_ID}/demo-nth"
QUEUE_ARN = f"arn:aws:sqs:{REGION}:{ACCOUNT_ID}:demo-nth"
ROLE_ARN = f"arn:aws:iam::{ACCOUNT_ID}:role/nth"

NTH_OPEN_MAPS = frozenset({
    "serviceAccount.annotations",  # serviceaccount.yaml: toYaml
    "affinity",                    # deployment.yaml: toYaml
    "daemonsetNodeSelector",       # daemonset.linux.yaml: `with default .Values.daemonsetNodeSelector ...` + toYaml
    "daemonsetAffinity",           # daemonset.linux.yaml: toYaml (default .Values.daemonsetAffinity ...)
})
"""Values the chart renders whole into the pod spec: their keys are Kubernetes', not the chart's."""


def imds(**kw: Any) -> NthConfig:
    return NthConfig.model_validate({"enabled": True, **kw})


def queue(**kw: Any) -> NthConfig:
    return NthConfig.model_validate({"enabled": True, "mode": "queue", **kw})


def imds_values(cfg: NthConfig | None = None) -> dict[str, Any]:
    return nth_values(cfg or imds(), queue_url=None, irsa_role_arn=None)


def queue_values(cfg: NthConfig | None = None) -> dict[str, Any]:
    cfg = cfg or queue()
    return nth_values(cfg, queue_url=QUEUE_URL, irsa_role_arn=ROLE_ARN if cfg.identity == "irsa" else None)


ALL_VALUES = {
    "imds-default": lambda: imds_values(),
    "imds-capacity-type": lambda: imds_values(imds(nodeSelector={"eks.amazonaws.com/capacityType": "SPOT"})),
    "imds-rebalance": lambda: imds_values(imds(enableRebalanceMonitoring=True, enableRebalanceDraining=True)),
    "queue-pod-identity": lambda: queue_values(),
    "queue-irsa": lambda: queue_values(queue(identity="irsa")),
}


def chart_values() -> dict[str, Any]:
    return dict(yaml.safe_load((CHART_DIR / "values.yaml").read_text()))


def merged(chart: Mapping[str, Any], ours: Mapping[str, Any]) -> dict[str, Any]:
    """Helm's merge of user values over the chart's: maps merge key by key, anything else replaces."""
    out = copy.deepcopy(dict(chart))
    for key, value in ours.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merged(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def daemonset_scheduling(values: Mapping[str, Any]) -> dict[str, Any]:
    """What the Linux DaemonSet gets, as daemonset.linux.yaml resolves it: `linux*`, else the generic key, else
    `daemonset*` (Helm's `default a b` is b unless b is empty); the node selector always adds the OS label."""
    def pick(kind: str) -> Any:
        generic = {"NodeSelector": "nodeSelector", "Affinity": "affinity", "Tolerations": "tolerations"}[kind]
        return values.get(f"linux{kind}") or values.get(generic) or values.get(f"daemonset{kind}")
    return {"nodeSelector": {"kubernetes.io/os": "linux", **(pick("NodeSelector") or {})},
            "affinity": pick("Affinity"), "tolerations": pick("Tolerations")}


def required_expressions(affinity: Mapping[str, Any]) -> list[list[dict[str, Any]]]:
    terms = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    return [t["matchExpressions"] for t in terms]


def node_matches(labels: Mapping[str, str], sched: Mapping[str, Any]) -> bool:
    """Whether a node with `labels` satisfies the selector and the required affinity (ORed terms of ANDed
    expressions), as the scheduler evaluates them."""
    if any(labels.get(k) != v for k, v in sched["nodeSelector"].items()):
        return False

    def ok(e: Mapping[str, Any]) -> bool:
        op, key = e["operator"], e["key"]
        if op == "DoesNotExist":
            return key not in labels
        if op == "Exists":
            return key in labels
        if op == "In":
            return labels.get(key) in e["values"]
        if op == "NotIn":
            return labels.get(key) not in e["values"]
        raise AssertionError(f"operator {op} not modelled")

    return any(all(ok(e) for e in exprs) for exprs in required_expressions(sched["affinity"]))


LINUX = {"kubernetes.io/os": "linux"}
CAS_SPOT_NODE = {**LINUX, "lifecycle": "Ec2Spot", "eks.amazonaws.com/capacityType": "SPOT",
                 "eks.amazonaws.com/nodegroup": "spot-1"}
SYSTEM_NODE = {**LINUX, "node-role/system": "true", "eks.amazonaws.com/capacityType": "ON_DEMAND"}
KARPENTER_SPOT_NODE = {**LINUX, "karpenter.sh/nodepool": "default", "karpenter.sh/capacity-type": "spot"}
# A Karpenter node whose NodePool template copies the CAS-era label (a migration shortcut): still excluded.
KARPENTER_NODE_WITH_LIFECYCLE_LABEL = {**KARPENTER_SPOT_NODE, "lifecycle": "Ec2Spot"}
FARGATE_NODE = {**LINUX, "eks.amazonaws.com/compute-type": "fargate", "lifecycle": "Ec2Spot"}


# --- chart keys --------------------------------------------------------------------------------------------------

@requires_upstream
def test_pinned_chart_is_the_upstream_copy() -> None:
    chart = yaml.safe_load((CHART_DIR / "Chart.yaml").read_text())
    assert chart["name"] == "aws-node-termination-handler"
    assert chart["version"] == versions.NTH_VERSION == NthConfig().version


@requires_upstream
@pytest.mark.parametrize("case", sorted(ALL_VALUES))
def test_every_values_key_exists_in_the_chart(case: str) -> None:
    assert undefined_keys(ALL_VALUES[case](), chart_values(), NTH_OPEN_MAPS) == []


@requires_upstream
@pytest.mark.parametrize("case", sorted(ALL_VALUES))
def test_every_values_key_is_read_by_a_template(case: str) -> None:
    reads, verbatim = template_reads(CHART_DIR / "templates")
    assert unread_keys(ALL_VALUES[case](), reads, verbatim | NTH_OPEN_MAPS) == []


@requires_upstream
def test_open_maps_are_rendered_whole() -> None:
    _, verbatim = template_reads(CHART_DIR / "templates")
    daemonset = (CHART_DIR / "templates" / "daemonset.linux.yaml").read_text()
    for path in NTH_OPEN_MAPS - verbatim:
        assert f"default .Values.{path} " in daemonset, path  # resolved by `default`, then toYaml
    assert "toYaml (default .Values.daemonsetAffinity (default .Values.affinity .Values.linuxAffinity))" in daemonset
    assert "with default .Values.daemonsetNodeSelector (default .Values.nodeSelector .Values.linuxNodeSelector)" \
        in daemonset


def test_key_checker_catches_a_misspelt_key() -> None:
    chart = {"enableSqsTerminationDraining": False, "serviceAccount": {"create": True, "annotations": {}}}
    bad = {"enableSQSTerminationDraining": True, "serviceAccount": {"creat": True, "annotations": {"x": "y"}}}
    assert undefined_keys(bad, chart, NTH_OPEN_MAPS) == ["enableSQSTerminationDraining", "serviceAccount.creat"]


# --- IMDS mode values ------------------------------------------------------------------------------------------

def test_imds_renders_the_daemonset_with_the_configured_monitors() -> None:
    v = imds_values(imds(enableScheduledEventDraining=False, enableRebalanceMonitoring=True))
    assert v["enableSqsTerminationDraining"] is False
    assert v["targetNodeOs"] == "linux"
    assert (v["enableSpotInterruptionDraining"], v["enableScheduledEventDraining"], v["enableRebalanceMonitoring"],
            v["enableRebalanceDraining"]) == (True, False, True, False)
    assert "queueURL" not in v
    assert "annotations" not in v["serviceAccount"]
    assert v["serviceAccount"] == {"create": True, "name": SERVICE_ACCOUNT}


def test_imds_affinity_excludes_karpenter_and_requires_the_selector() -> None:
    v = imds_values()
    assert v["daemonsetNodeSelector"] == {"lifecycle": "Ec2Spot"}
    (exprs,) = required_expressions(v["daemonsetAffinity"])
    assert {"key": "karpenter.sh/nodepool", "operator": "DoesNotExist"} in exprs
    assert {"key": "lifecycle", "operator": "In", "values": ["Ec2Spot"]} in exprs
    assert {"key": "eks.amazonaws.com/compute-type", "operator": "NotIn", "values": ["fargate"]} in exprs


def test_imds_tolerates_every_taint() -> None:
    assert imds_values()["daemonsetTolerations"] == [{"operator": "Exists"}]


@pytest.mark.parametrize(("selector", "runs_on"), [
    ({"lifecycle": "Ec2Spot"}, {"cas-spot"}),
    ({"eks.amazonaws.com/capacityType": "SPOT"}, {"cas-spot"}),
])
def test_imds_daemonset_runs_only_on_non_karpenter_spot_nodes(selector: dict[str, str], runs_on: set[str]) -> None:
    sched = daemonset_scheduling(imds_values(imds(nodeSelector=selector)))
    nodes = {"cas-spot": CAS_SPOT_NODE, "system": SYSTEM_NODE, "karpenter-spot": KARPENTER_SPOT_NODE,
             "karpenter-with-lifecycle-label": KARPENTER_NODE_WITH_LIFECYCLE_LABEL, "fargate": FARGATE_NODE}
    assert {name for name, labels in nodes.items() if node_matches(labels, sched)} == runs_on


@requires_upstream
def test_imds_scheduling_after_helm_merges_the_chart_defaults() -> None:
    # The chart's own daemonsetAffinity (Fargate exclusion) and daemonsetTolerations defaults must not survive
    # in a form that loosens ours, and no higher-priority key may be set.
    effective = merged(chart_values(), imds_values())
    for key in ("nodeSelector", "affinity", "tolerations", "linuxNodeSelector", "linuxAffinity", "linuxTolerations"):
        assert not effective[key], key
    sched = daemonset_scheduling(effective)
    assert sched["affinity"] == imds_values()["daemonsetAffinity"]
    assert node_matches(CAS_SPOT_NODE, sched)
    assert not node_matches(KARPENTER_NODE_WITH_LIFECYCLE_LABEL, sched)
    assert not node_matches(SYSTEM_NODE, sched)
    assert sched["tolerations"] == [{"operator": "Exists"}]


def test_imds_refuses_queue_inputs() -> None:
    with pytest.raises(ValueError, match="IMDS mode"):
        nth_values(imds(), queue_url=QUEUE_URL, irsa_role_arn=None)


# --- queue mode values -----------------------------------------------------------------------------------------

def test_queue_mode_renders_the_deployment_on_the_queue() -> None:
    v = queue_values()
    assert v["enableSqsTerminationDraining"] is True
    assert v["queueURL"] == QUEUE_URL
    for imds_key in ("daemonsetNodeSelector", "daemonsetAffinity", "enableSpotInterruptionDraining",
                     "enableRebalanceMonitoring"):
        assert imds_key not in v


def test_queue_mode_acts_only_on_tagged_instances() -> None:
    v = queue_values()
    assert v["checkTagBeforeDraining"] is True
    assert v["managedTag"] == MANAGED_TAG == "aws-node-termination-handler/managed"
    assert v["checkASGTagBeforeDraining"] is True
    assert v["managedAsgTag"] == MANAGED_TAG


def test_queue_mode_controller_prefers_on_demand_and_tolerates_system_nodes() -> None:
    v = queue_values()
    (pref,) = v["affinity"]["nodeAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert pref["preference"]["matchExpressions"] == [
        {"key": "eks.amazonaws.com/capacityType", "operator": "In", "values": ["ON_DEMAND"]}]
    assert {"key": "CriticalAddonsOnly", "operator": "Exists"} in v["tolerations"]
    assert "requiredDuringSchedulingIgnoredDuringExecution" not in v["affinity"]["nodeAffinity"]


def test_irsa_annotation_only_for_irsa() -> None:
    assert queue_values(queue(identity="irsa"))["serviceAccount"]["annotations"] == {
        "eks.amazonaws.com/role-arn": ROLE_ARN}
    assert "annotations" not in queue_values(queue(identity="podIdentity"))["serviceAccount"]
    with pytest.raises(ValueError, match="podIdentity takes no role annotation"):
        nth_values(queue(), queue_url=QUEUE_URL, irsa_role_arn=ROLE_ARN)
    with pytest.raises(ValueError, match="needs the IAM role ARN"):
        nth_values(queue(identity="irsa"), queue_url=QUEUE_URL, irsa_role_arn=None)
    with pytest.raises(ValueError, match="queue URL"):
        nth_values(queue(), queue_url=None, irsa_role_arn=None)


def test_values_are_fresh_copies() -> None:
    a = imds_values()
    a["daemonsetTolerations"].append({"key": "x"})
    required_expressions(a["daemonsetAffinity"])[0].clear()
    b = imds_values()
    assert b["daemonsetTolerations"] == [{"operator": "Exists"}]
    assert required_expressions(b["daemonsetAffinity"])[0]


# --- config ---------------------------------------------------------------------------------------------------

def test_config_defaults() -> None:
    cfg = NthConfig()
    assert cfg.dump() == {
        "enabled": False, "mode": "imds", "version": versions.NTH_VERSION, "namespace": "kube-system",
        "enableSpotInterruptionDraining": True, "enableScheduledEventDraining": True,
        "enableRebalanceMonitoring": False, "enableRebalanceDraining": False,
        "nodeSelector": {"lifecycle": "Ec2Spot"}, "autoScalingGroupNames": [], "identity": "podIdentity",
        "acknowledgeSpotGroupsWithoutHandler": False,
    }


def test_config_refuses_typos_and_bad_values() -> None:
    with pytest.raises(ValueError, match="Extra inputs"):
        NthConfig.model_validate({"enableSpotInterruptDraining": True})
    with pytest.raises(ValueError):
        NthConfig.model_validate({"mode": "sqs"})
    with pytest.raises(ValueError):
        NthConfig.model_validate({"identity": "kiam"})
    with pytest.raises(ValueError):
        NthConfig.model_validate({"namespace": "Kube_System"})



# --- rules ------------------------------------------------------------------------------------------------------

def check(cfg: NthConfig, spot_groups: int = 0, karpenter_interruption: bool = True) -> list[Issue]:
    return validate_nth(cfg, spot_node_groups=spot_groups, karpenter_interruption_enabled=karpenter_interruption,
                        at=AT, at_cluster_groups=AT_GROUPS)


def only(issues: list[Issue]) -> Issue:
    assert len(issues) == 1, [(i.path, i.message) for i in issues]
    return issues[0]


@pytest.mark.parametrize("cfg", [NthConfig(), imds(), queue(), queue(identity="irsa"),
                                 imds(nodeSelector={"eks.amazonaws.com/capacityType": "SPOT"}),
                                 queue(autoScalingGroupNames=["a", "b"])])
def test_valid_configs_pass(cfg: NthConfig) -> None:
    assert check(cfg) == []


@pytest.mark.parametrize("groups", [1, 3])
def test_spot_groups_without_handler_refused_at_the_groups(groups: int) -> None:
    issue = only(check(NthConfig(), spot_groups=groups))
    assert issue.path == AT_GROUPS
    assert issue.value == groups
    assert "eks-karpenter:nodeTerminationHandler.enabled" in issue.message
    assert "rebalance recommendation" in issue.message
    assert "interruption notice" in issue.message and "scheduled events" in issue.message
    assert "acknowledgeSpotGroupsWithoutHandler" in issue.message


def test_spot_groups_without_handler_allowed_when_acknowledged_or_handled() -> None:
    assert check(NthConfig.model_validate({"acknowledgeSpotGroupsWithoutHandler": True}), spot_groups=2) == []
    assert check(imds(), spot_groups=2) == []
    assert check(queue(), spot_groups=1) == []


@pytest.mark.parametrize("key", ["karpenter.sh/capacity-type", "karpenter.sh/nodepool",
                                 "karpenter.k8s.aws/instance-family"])
def test_selecting_karpenter_nodes_refused(key: str) -> None:
    issue = only(check(imds(nodeSelector={key: "spot"})))
    assert issue.path == AT + ("nodeSelector", key)
    assert issue.value == "spot"
    assert "fight over the same nodes" in issue.message
    assert "interruption queue" in issue.message


def test_selecting_karpenter_nodes_message_when_karpenter_interruption_is_off() -> None:
    issue = only(check(imds(nodeSelector={"lifecycle": "Ec2Spot", "karpenter.sh/capacity-type": "spot"}),
                       karpenter_interruption=False))
    assert issue.path == AT + ("nodeSelector", "karpenter.sh/capacity-type")
    assert "eks-karpenter:interruption.enabled" in issue.message


def test_imds_empty_selector_refused() -> None:
    issue = only(check(imds(nodeSelector={})))
    assert issue.path == AT + ("nodeSelector",)
    assert issue.value == {}
    assert "every node" in issue.message


def test_queue_options_in_imds_mode_refused() -> None:
    issues = check(imds(autoScalingGroupNames=["a"], identity="irsa"))
    assert sorted(i.path for i in issues) == [AT + ("autoScalingGroupNames",), AT + ("identity",)]
    assert all("only applies to mode: queue" in i.message for i in issues)


def test_imds_options_in_queue_mode_refused() -> None:
    issues = check(queue(nodeSelector={"lifecycle": "Ec2Spot"}, enableRebalanceDraining=True))
    assert sorted(i.path for i in issues) == [AT + ("enableRebalanceDraining",), AT + ("nodeSelector",)]
    assert all("only applies to mode: imds" in i.message for i in issues)


def test_queue_mode_duplicate_groups_refused() -> None:
    issue = only(check(queue(autoScalingGroupNames=["a", "b", "a"])))
    assert issue.path == AT + ("autoScalingGroupNames", 2)
    assert issue.value == "a"


def test_queue_mode_without_groups_allowed() -> None:
    # A consumer may pass groups to the component; the component warns when there are none at all.
    assert check(queue()) == []


def test_options_while_disabled_refused() -> None:
    issues = check(NthConfig.model_validate({"mode": "queue", "autoScalingGroupNames": ["a"]}))
    assert sorted(i.path for i in issues) == [AT + ("autoScalingGroupNames",), AT + ("mode",)]
    assert all("enabled is false" in i.message for i in issues)


def test_acknowledgement_while_enabled_refused() -> None:
    issue = only(check(imds(acknowledgeSpotGroupsWithoutHandler=True), spot_groups=1))
    assert issue.path == AT + ("acknowledgeSpotGroupsWithoutHandler",)
    assert issue.value is True


# --- queue mode: EventBridge and IAM ----------------------------------------------------------------------------

def test_nth_events_without_groups() -> None:
    events = {e.name: e.pattern for e in nth_events()}
    assert events == {
        "spot-interruption": {"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"]},
        "rebalance": {"source": ["aws.ec2"], "detail-type": ["EC2 Instance Rebalance Recommendation"]},
        "instance-state-change": {"source": ["aws.ec2"], "detail-type": ["EC2 Instance State-change Notification"]},
        "scheduled-change": {"source": ["aws.health"], "detail-type": ["AWS Health Event"],
                             "detail": {"service": ["EC2"], "eventTypeCategory": ["scheduledChange"]}},
    }


def test_nth_lifecycle_event_narrowed_to_the_groups() -> None:
    events = nth_events(["b", "a", "b"])
    assert events[0] == asg_lifecycle_event(["a", "b"])
    assert events[0].pattern == {"source": ["aws.autoscaling"],
                                 "detail-type": ["EC2 Instance-terminate Lifecycle Action"],
                                 "detail": {"AutoScalingGroupName": ["a", "b"]}}
    assert len(events) == 5
    with pytest.raises(ValueError):
        asg_lifecycle_event([])


def test_controller_policy_scoped_to_the_queue() -> None:
    doc = nth_controller_policy(QUEUE_ARN)
    sqs = [s for s in doc["Statement"] if any(a.startswith("sqs:") for a in _actions(s))]
    assert len(sqs) == 1
    assert sorted(_actions(sqs[0])) == ["sqs:DeleteMessage", "sqs:ReceiveMessage"]
    assert sqs[0]["Resource"] == QUEUE_ARN
    assert all(s["Effect"] == "Allow" for s in doc["Statement"])


def test_controller_policy_is_least_privilege() -> None:
    doc = nth_controller_policy(QUEUE_ARN)
    actions = sorted(a for s in doc["Statement"] for a in _actions(s))
    assert actions == ["autoscaling:CompleteLifecycleAction", "autoscaling:DescribeAutoScalingInstances",
                       "autoscaling:DescribeTags", "ec2:DescribeInstances", "sqs:DeleteMessage",
                       "sqs:ReceiveMessage"]
    assert not any("*" in a for a in actions)
    (complete,) = [s for s in doc["Statement"] if "autoscaling:CompleteLifecycleAction" in _actions(s)]
    assert _actions(complete) == ["autoscaling:CompleteLifecycleAction"]
    assert complete["Condition"] == {"Null": {f"autoscaling:ResourceTag/{MANAGED_TAG}": "false"}}
    (describe,) = [s for s in doc["Statement"] if "ec2:DescribeInstances" in _actions(s)]
    assert all(":Describe" in a for a in _actions(describe))


def _actions(statement: Mapping[str, Any]) -> list[str]:
    action = statement["Action"]
    return [action] if isinstance(action, str) else list(action)


def test_trust_policies() -> None:
    (pod,) = pod_identity_trust_policy()["Statement"]
    assert pod["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert sorted(pod["Action"]) == ["sts:AssumeRole", "sts:TagSession"]
    issuer = "oidc.eks.eu-west-1.amazonaws.com/id/ABC"
    provider = f"arn:aws:iam::{ACCOUNT_ID}:oidc-provider/{issuer}"
    for given in (issuer, f"https://{issuer}"):
        (irsa,) = irsa_trust_policy(provider, given, "kube-system", SERVICE_ACCOUNT)["Statement"]
        assert irsa["Principal"] == {"Federated": provider}
        assert irsa["Action"] == "sts:AssumeRoleWithWebIdentity"
        assert irsa["Condition"] == {"StringEquals": {
            f"{issuer}:sub": f"system:serviceaccount:kube-system:{SERVICE_ACCOUNT}",
            f"{issuer}:aud": "sts.amazonaws.com"}}


# --- the component under mocks -----------------------------------------------------------------------------------

RELEASE = "kubernetes:helm.sh/v3:Release"
TAGS = {"team": "platform", "eks-karpenter/cluster": "demo"}


def run_component(build: Callable[[], Any]) -> tuple[list[PlannedResource], list[str]]:
    """Run `build` under the offline engine's mocks: every registration, and the warnings logged."""
    result = plan_components(build, region=REGION)
    if result.error is not None:
        raise result.error
    return result.document.resources, result.document.warnings


def nth(cfg: NthConfig, **args: Any) -> tuple[list[PlannedResource], list[str]]:
    return run_component(lambda: NodeTerminationHandler(
        "nth", {"config": cfg, "clusterName": "demo", "tags": TAGS, **args}))  # type: ignore[typeddict-item]


def of_type(planned: list[PlannedResource], type_: str) -> list[PlannedResource]:
    return [r for r in planned if r.type == type_]


def test_component_imds_is_just_the_release() -> None:
    planned, warnings = nth(imds())
    (component,) = of_type(planned, "eks-karpenter:index:NodeTerminationHandler")
    custom = [r for r in planned if r.custom]
    assert [r.type for r in custom] == [RELEASE]
    (release,) = custom
    assert release.parent == component.urn
    assert release.inputs["chart"] == "oci://public.ecr.aws/aws-ec2/helm/aws-node-termination-handler"
    assert release.inputs["name"] == "aws-node-termination-handler"
    assert release.inputs["version"] == versions.NTH_VERSION
    assert "repositoryOpts" not in release.inputs  # an OCI chart: eks-charts stopped publishing it at 0.21.0
    assert release.inputs["namespace"] == "kube-system"
    assert release.inputs["values"] == imds_values()
    assert warnings == []


def test_component_queue_mode_pod_identity() -> None:
    planned, warnings = nth(queue(autoScalingGroupNames=["self-managed-a", "self-managed-b"]))
    (component,) = of_type(planned, "eks-karpenter:index:NodeTerminationHandler")
    assert all(r.parent == component.urn for r in planned if r.custom)
    assert warnings == []

    (q,) = of_type(planned, "aws:sqs/queue:Queue")
    assert (q.inputs["name"], q.inputs["messageRetentionSeconds"], q.inputs["sqsManagedSseEnabled"]) == (
        "demo-nth", 300, True)
    (qp,) = of_type(planned, "aws:sqs/queuePolicy:QueuePolicy")
    assert json.loads(qp.inputs["policy"]) == queue_policy(QUEUE_ARN)

    rules = of_type(planned, "aws:cloudwatch/eventRule:EventRule")
    patterns = sorted((json.loads(r.inputs["eventPattern"]) for r in rules), key=json.dumps)
    assert patterns == sorted((e.pattern for e in nth_events(["self-managed-a", "self-managed-b"])), key=json.dumps)
    targets = of_type(planned, "aws:cloudwatch/eventTarget:EventTarget")
    assert len(targets) == len(rules) == 5
    assert {t.inputs["arn"] for t in targets} == {QUEUE_ARN}

    hooks = of_type(planned, "aws:autoscaling/lifecycleHook:LifecycleHook")
    assert sorted(h.inputs["autoscalingGroupName"] for h in hooks) == ["self-managed-a", "self-managed-b"]
    for h in hooks:
        assert h.inputs["lifecycleTransition"] == "autoscaling:EC2_INSTANCE_TERMINATING"
        assert h.inputs["defaultResult"] == "CONTINUE"
        assert h.inputs["heartbeatTimeout"] == 300
        assert "notificationTargetArn" not in h.inputs  # through EventBridge, no role for Auto Scaling needed
    tags = of_type(planned, "aws:autoscaling/tag:Tag")
    assert sorted(t.inputs["autoscalingGroupName"] for t in tags) == ["self-managed-a", "self-managed-b"]
    assert all(t.inputs["tag"]["key"] == MANAGED_TAG and t.inputs["tag"]["propagateAtLaunch"] for t in tags)

    (role,) = of_type(planned, "aws:iam/role:Role")
    assert json.loads(role.inputs["assumeRolePolicy"]) == pod_identity_trust_policy()
    (policy,) = of_type(planned, "aws:iam/rolePolicy:RolePolicy")
    assert json.loads(policy.inputs["policy"]) == nth_controller_policy(QUEUE_ARN)
    (assoc,) = of_type(planned, "aws:eks/podIdentityAssociation:PodIdentityAssociation")
    assert (assoc.inputs["clusterName"], assoc.inputs["namespace"], assoc.inputs["serviceAccount"]) == (
        "demo", "kube-system", SERVICE_ACCOUNT)

    (release,) = of_type(planned, RELEASE)
    assert release.inputs["values"] == queue_values()
    assert assoc.urn in release.dependencies and policy.urn in release.dependencies


def test_component_queue_mode_irsa_and_consumer_groups() -> None:
    issuer = "oidc.eks.eu-west-1.amazonaws.com/id/ABC"
    provider = f"arn:aws:iam::{ACCOUNT_ID}:oidc-provider/{issuer}"

    def build() -> NodeTerminationHandler:
        extra = pulumi.Output.from_input("eks-spot-1-asg")
        return NodeTerminationHandler("nth", {
            "config": queue(identity="irsa", autoScalingGroupNames=["self-managed-a"]), "clusterName": "demo",
            "tags": TAGS, "oidcProviderArn": provider, "oidcIssuer": f"https://{issuer}",
            "autoScalingGroupNames": [extra, "self-managed-a"]})

    planned, _ = run_component(build)
    assert of_type(planned, "aws:eks/podIdentityAssociation:PodIdentityAssociation") == []
    (role,) = of_type(planned, "aws:iam/role:Role")
    assert json.loads(role.inputs["assumeRolePolicy"]) == irsa_trust_policy(provider, issuer, "kube-system",
                                                                             SERVICE_ACCOUNT)
    hooks = of_type(planned, "aws:autoscaling/lifecycleHook:LifecycleHook")
    assert sorted(h.inputs["autoscalingGroupName"] for h in hooks) == ["eks-spot-1-asg", "self-managed-a"]
    (lifecycle,) = [r for r in of_type(planned, "aws:cloudwatch/eventRule:EventRule")
                    if "aws.autoscaling" in r.inputs["eventPattern"]]
    assert json.loads(lifecycle.inputs["eventPattern"])["detail"] == {
        "AutoScalingGroupName": ["eks-spot-1-asg", "self-managed-a"]}
    (release,) = of_type(planned, RELEASE)
    (annotation,) = release.inputs["values"]["serviceAccount"]["annotations"].items()
    assert annotation[0] == "eks.amazonaws.com/role-arn"
    assert annotation[1].startswith(f"arn:aws:iam::{ACCOUNT_ID}:role/{role.name}-")  # the role's (auto)name


def test_component_queue_mode_without_groups_warns() -> None:
    planned, warnings = nth(queue())
    assert of_type(planned, "aws:autoscaling/lifecycleHook:LifecycleHook") == []
    rules = of_type(planned, "aws:cloudwatch/eventRule:EventRule")
    assert len(rules) == 4
    assert not any("aws.autoscaling" in r.inputs["eventPattern"] for r in rules)
    assert any("without Auto Scaling groups" in w for w in warnings)


def test_component_refuses_disabled_config_and_irsa_without_oidc() -> None:
    with pytest.raises(ValueError, match="enabled: false"):
        NodeTerminationHandler("nth", {"config": NthConfig(), "clusterName": "demo", "tags": {}})
    with pytest.raises(ValueError, match="oidcProviderArn and oidcIssuer"):
        nth(queue(identity="irsa"))


def test_queue_mode_names_its_region_so_it_never_asks_imds() -> None:
    # The system nodes run with IMDS hop limit 1: a pod there cannot read the region from instance metadata.
    assert queue_values()["awsRegion"] == QUEUE_URL.split(".")[1]


def test_nth_role_trust_comes_from_the_iam_builders_with_their_checks() -> None:
    """One home for trust policies: NTH's role uses platform/iam/policy.py's builders, so an issuer with a scheme
    or a trailing slash still yields matching condition keys and a malformed provider ARN is refused."""
    from eks_karpenter.platform.nth import component

    assert component.irsa_trust_policy is irsa_trust_policy
    assert component.pod_identity_trust_policy is pod_identity_trust_policy
    issuer = "oidc.eks.eu-west-1.amazonaws.com/id/ABC"
    provider = f"arn:aws:iam::{ACCOUNT_ID}:oidc-provider/{issuer}"
    (irsa,) = irsa_trust_policy(provider, f"https://{issuer}/", "kube-system", SERVICE_ACCOUNT)["Statement"]
    assert set(irsa["Condition"]["StringEquals"]) == {f"{issuer}:sub", f"{issuer}:aud"}
    with pytest.raises(ValueError, match="not an IAM OIDC provider ARN"):
        irsa_trust_policy(issuer, issuer, "kube-system", SERVICE_ACCOUNT)
