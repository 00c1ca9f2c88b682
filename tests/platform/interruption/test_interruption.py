"""Karpenter's interruption queue: the five EventBridge events, the queue policy, and the component's resources."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pulumi
import pytest
import yaml
from eks_karpenter.platform.interruption import (
    INTERRUPTION_EVENTS,
    QUEUE_RETENTION_SECONDS,
    InterruptionConfig,
    InterruptionQueue,
    event_pattern,
    queue_policy,
)
from eks_karpenter.tools.engine import plan_components
from eks_karpenter.tools.engine.document import PlannedResource
from eks_karpenter.tools.engine.mocks import ACCOUNT_ID

from tests.support import UPSTREAM, requires_upstream

CFN_TEMPLATE = UPSTREAM / "karpenter" / "karpenter-getting-started-cloudformation.yaml"
REGION = "eu-west-1"
QUEUE_ARN = f"arn:aws:sqs:{REGION}:{ACCOUNT_ID}:demo"

EXPECTED_EVENTS = {
    ("aws.health", "AWS Health Event"),
    ("aws.ec2", "EC2 Spot Instance Interruption Warning"),
    ("aws.ec2", "EC2 Instance Rebalance Recommendation"),
    ("aws.ec2", "EC2 Instance State-change Notification"),
    ("aws.ec2", "EC2 Capacity Reservation Instance Interruption Warning"),
}


# --- helpers ------------------------------------------------------------------------------------------------

class CloudFormationLoader(yaml.SafeLoader):
    """SafeLoader that reads CloudFormation short-form tags (`!Sub`, `!GetAtt`, `!Ref`, ...) as `{tag: value}`."""


def _cfn_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return {suffix: loader.construct_scalar(node)}
    if isinstance(node, yaml.SequenceNode):
        return {suffix: loader.construct_sequence(node, deep=True)}
    assert isinstance(node, yaml.MappingNode)
    return {suffix: loader.construct_mapping(node, deep=True)}


CloudFormationLoader.add_multi_constructor("!", _cfn_tag)


def cfn_resources(type_: str) -> dict[str, Any]:
    body = yaml.load(CFN_TEMPLATE.read_text(), Loader=CloudFormationLoader)  # a SafeLoader subclass
    return {k: v["Properties"] for k, v in body["Resources"].items() if v["Type"] == type_}


def run_component(build: Callable[[], pulumi.Output[Any] | None]) -> list[PlannedResource]:
    """Run `build` under the offline engine's mocks and return every registration it made."""
    result = plan_components(build, region=REGION)
    assert result.error is None, result.error
    return result.document.resources


def of_type(planned: list[PlannedResource], type_: str) -> list[PlannedResource]:
    return [r for r in planned if r.type == type_]


# --- the events ---------------------------------------------------------------------------------------------

def test_exactly_the_five_events_karpenter_handles() -> None:
    assert len(INTERRUPTION_EVENTS) == 5
    assert {(e.source, e.detail_type) for e in INTERRUPTION_EVENTS} == EXPECTED_EVENTS
    names = [e.name for e in INTERRUPTION_EVENTS]
    assert len(set(names)) == 5
    assert all(n.replace("-", "").isalnum() and n == n.lower() for n in names)


def test_literals_exactly() -> None:
    by_name = {e.name: (e.source, e.detail_type) for e in INTERRUPTION_EVENTS}
    assert by_name == {
        "scheduled-change": ("aws.health", "AWS Health Event"),
        "spot-interruption": ("aws.ec2", "EC2 Spot Instance Interruption Warning"),
        "rebalance": ("aws.ec2", "EC2 Instance Rebalance Recommendation"),
        "instance-state-change": ("aws.ec2", "EC2 Instance State-change Notification"),
        "capacity-reservation-interruption": ("aws.ec2", "EC2 Capacity Reservation Instance Interruption Warning"),
    }


def test_event_pattern_shape() -> None:
    assert event_pattern("aws.ec2", "EC2 Spot Instance Interruption Warning") == {
        "source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"]}


@requires_upstream
def test_events_match_upstream_cloudformation() -> None:
    rules = cfn_resources("AWS::Events::Rule")
    upstream = set()
    for props in rules.values():
        pattern = props["EventPattern"]
        assert set(pattern) == {"source", "detail-type"}, "upstream narrowed a pattern: review event_pattern()"
        assert len(pattern["source"]) == len(pattern["detail-type"]) == 1
        upstream.add((pattern["source"][0], pattern["detail-type"][0]))
        assert props["Targets"][0]["Arn"] == {"GetAtt": "KarpenterInterruptionQueue.Arn"}
    assert upstream == {(e.source, e.detail_type) for e in INTERRUPTION_EVENTS}
    for e in INTERRUPTION_EVENTS:
        assert {"source": [e.source], "detail-type": [e.detail_type]} in [p["EventPattern"] for p in rules.values()]


@requires_upstream
def test_queue_settings_match_upstream_cloudformation() -> None:
    (queue,) = cfn_resources("AWS::SQS::Queue").values()
    assert queue["MessageRetentionPeriod"] == QUEUE_RETENTION_SECONDS
    assert queue["SqsManagedSseEnabled"] is True
    assert queue["QueueName"] == {"Sub": "${ClusterName}"}  # named after the cluster, as the component does


# --- the queue policy ---------------------------------------------------------------------------------------

def test_queue_policy_allows_eventbridge_to_send_and_nothing_else() -> None:
    doc = queue_policy(QUEUE_ARN)
    assert doc["Version"] == "2012-10-17"
    allow = [s for s in doc["Statement"] if s["Effect"] == "Allow"]
    assert len(allow) == 1
    assert sorted(allow[0]["Principal"]["Service"]) == ["events.amazonaws.com", "sqs.amazonaws.com"]
    assert allow[0]["Action"] == "sqs:SendMessage"
    assert allow[0]["Resource"] == QUEUE_ARN
    assert "Condition" not in allow[0]


def test_queue_policy_denies_everything_without_tls() -> None:
    (deny,) = [s for s in queue_policy(QUEUE_ARN)["Statement"] if s["Effect"] == "Deny"]
    assert deny["Principal"] == "*"
    assert deny["Action"] == "sqs:*"
    assert deny["Resource"] == QUEUE_ARN
    assert deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_queue_policy_is_json_and_sids_unique() -> None:
    doc = json.loads(json.dumps(queue_policy(QUEUE_ARN)))
    sids = [s["Sid"] for s in doc["Statement"]]
    assert len(sids) == len(set(sids)) == 2


@requires_upstream
def test_queue_policy_matches_upstream_semantics() -> None:
    (upstream,) = cfn_resources("AWS::SQS::QueuePolicy").values()
    ours = queue_policy(QUEUE_ARN)["Statement"]
    up_allow = next(s for s in upstream["PolicyDocument"]["Statement"] if s["Effect"] == "Allow")
    up_deny = next(s for s in upstream["PolicyDocument"]["Statement"] if s["Effect"] == "Deny")
    our_allow = next(s for s in ours if s["Effect"] == "Allow")
    our_deny = next(s for s in ours if s["Effect"] == "Deny")
    assert sorted(up_allow["Principal"]["Service"]) == sorted(our_allow["Principal"]["Service"])
    assert up_allow["Action"] == our_allow["Action"]
    assert (up_deny["Action"], up_deny["Principal"]) == (our_deny["Action"], our_deny["Principal"])
    up_cond = {k: {ck: str(cv).lower() for ck, cv in v.items()} for k, v in up_deny["Condition"].items()}
    assert up_cond == our_deny["Condition"]


# --- config -------------------------------------------------------------------------------------------------

def test_config_defaults_and_spelling() -> None:
    cfg = InterruptionConfig()
    assert cfg.enabled is True
    assert cfg.acknowledge_spot_without_interruption_handling is False
    assert cfg.dump() == {"enabled": True, "acknowledgeSpotWithoutInterruptionHandling": False}
    parsed = InterruptionConfig.model_validate({"enabled": False, "acknowledgeSpotWithoutInterruptionHandling": True})
    assert parsed.acknowledge_spot_without_interruption_handling is True


def test_config_refuses_typos() -> None:
    with pytest.raises(ValueError, match="Extra inputs are not permitted"):
        InterruptionConfig.model_validate({"enabeld": False})


# --- the component under mocks ------------------------------------------------------------------------------

QUEUE = "aws:sqs/queue:Queue"
QUEUE_POLICY = "aws:sqs/queuePolicy:QueuePolicy"
RULE = "aws:cloudwatch/eventRule:EventRule"
TARGET = "aws:cloudwatch/eventTarget:EventTarget"
TAGS = {"team": "platform", "eks-karpenter/cluster": "demo"}


@pytest.fixture(scope="module")
def planned() -> tuple[list[PlannedResource], dict[str, Any]]:
    outputs: dict[str, Any] = {}

    def build() -> pulumi.Output[Any]:
        q = InterruptionQueue("interruption", {"clusterName": "demo", "tags": TAGS})
        return pulumi.Output.all(q.queue_name, q.queue_arn, q.queue_url).apply(
            lambda v: outputs.update(name=v[0], arn=v[1], url=v[2]))

    return run_component(build), outputs


def test_component_type_and_parenting(planned: tuple[list[PlannedResource], dict[str, Any]]) -> None:
    resources, _ = planned
    (component,) = of_type(resources, "eks-karpenter:index:InterruptionQueue")
    assert not component.custom
    children = [r for r in resources if r.custom]
    assert len(children) == 1 + 1 + 5 + 5 + 5  # queue, policy, rules, targets, delivery alarms
    assert all(r.parent == component.urn for r in children)


def test_queue_named_after_cluster_with_short_retention_and_sse(
        planned: tuple[list[PlannedResource], dict[str, Any]]) -> None:
    resources, outputs = planned
    (queue,) = of_type(resources, QUEUE)
    assert queue.inputs["name"] == "demo"
    assert queue.inputs["messageRetentionSeconds"] == 300
    assert queue.inputs["sqsManagedSseEnabled"] is True
    assert "kmsMasterKeyId" not in queue.inputs
    assert queue.inputs["tags"] == TAGS
    assert outputs == {"name": "demo", "arn": QUEUE_ARN,
                       "url": f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT_ID}/demo"}


def test_queue_policy_resource(planned: tuple[list[PlannedResource], dict[str, Any]]) -> None:
    resources, outputs = planned
    (policy,) = of_type(resources, QUEUE_POLICY)
    assert policy.inputs["queueUrl"] == outputs["url"]
    document = json.loads(policy.inputs["policy"])
    (allow,) = [s for s in document["Statement"] if s["Effect"] == "Allow"]
    sources = allow["Condition"]["ArnEquals"]["aws:SourceArn"]
    # Only this component's five rules may send: beyond upstream's unconditioned policy.
    assert len(sources) == len(set(sources)) == 5
    assert all(a.startswith(f"arn:aws:events:{REGION}:{ACCOUNT_ID}:rule/interruption-") for a in sources)
    assert document == queue_policy(QUEUE_ARN, sources)


def test_five_rules_with_exact_patterns(planned: tuple[list[PlannedResource], dict[str, Any]]) -> None:
    resources, _ = planned
    rules = of_type(resources, RULE)
    assert len(rules) == 5
    patterns = [json.loads(r.inputs["eventPattern"]) for r in rules]
    assert sorted(patterns, key=json.dumps) == sorted(
        ({"source": [s], "detail-type": [d]} for s, d in EXPECTED_EVENTS), key=json.dumps)
    assert all(r.inputs["tags"] == TAGS for r in rules)


def test_five_targets_point_at_the_queue(planned: tuple[list[PlannedResource], dict[str, Any]]) -> None:
    resources, _ = planned
    targets = of_type(resources, TARGET)
    assert len(targets) == 5
    assert {t.inputs["arn"] for t in targets} == {QUEUE_ARN}
    # One target per rule: each target is named like its rule and gets that rule's (auto-generated) name.
    assert {t.name for t in targets} == {r.name for r in of_type(resources, RULE)}
    assert len({t.inputs["rule"] for t in targets}) == 5
    assert all(t.inputs["rule"].startswith(f"{t.name}-") for t in targets)
