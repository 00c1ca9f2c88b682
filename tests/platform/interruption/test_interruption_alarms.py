"""The interruption queue's CloudWatch alarms fire when they can and should: the oldest-message threshold below
the queue's retention (an error at or above it, a warning where a single unread message expires first), and an
alarm on each EventBridge rule's failed deliveries to the queue."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eks_karpenter.platform.interruption import INTERRUPTION_EVENTS, QUEUE_RETENTION_SECONDS
from eks_karpenter.platform.interruption.alarms import (
    ALARM_PERIOD_SECONDS,
    ALARM_PERIODS,
    OLDEST_MESSAGE_DEFAULT,
    delivery_alarm_args,
)
from eks_karpenter.platform.observability.config import ObservabilityConfig
from eks_karpenter.platform.observability.rules import observability_warnings, validate_observability
from eks_karpenter.platform.stack import stack_file_schema

from tests.support import plan_config, plan_stack, stack_config

ALARM = "aws:cloudwatch/metricAlarm:MetricAlarm"
TARGET = "aws:cloudwatch/eventTarget:EventTarget"
AT = ("eks-karpenter:observability",)


def test_the_default_oldest_message_threshold_is_crossed_by_one_unread_message_before_it_expires() -> None:
    default = ObservabilityConfig().queue_oldest_message_seconds
    assert default == OLDEST_MESSAGE_DEFAULT == QUEUE_RETENTION_SECONDS - ALARM_PERIODS * ALARM_PERIOD_SECONDS
    assert default < QUEUE_RETENTION_SECONDS
    # A message unread from second 0 is older than the threshold for every one of the alarm's periods.
    assert default + ALARM_PERIODS * ALARM_PERIOD_SECONDS <= QUEUE_RETENTION_SECONDS
    assert validate_observability(ObservabilityConfig(), AT) == []
    assert observability_warnings(ObservabilityConfig()) == []


@pytest.mark.parametrize("seconds", [QUEUE_RETENTION_SECONDS, QUEUE_RETENTION_SECONDS + 1, 3600])
def test_a_threshold_at_or_above_the_retention_is_refused(seconds: int) -> None:
    (issue,) = validate_observability(ObservabilityConfig(queue_oldest_message_seconds=seconds), AT)
    assert issue.path == (*AT, "queueOldestMessageSeconds") and issue.value == seconds
    assert "could never fire" in issue.message
    assert f"Use 60-{QUEUE_RETENTION_SECONDS - 1} (default {OLDEST_MESSAGE_DEFAULT})" in issue.message


def test_a_threshold_a_single_message_cannot_cross_for_the_window_warns() -> None:
    (warning,) = observability_warnings(ObservabilityConfig(queue_oldest_message_seconds=OLDEST_MESSAGE_DEFAULT + 1))
    assert warning.startswith("observability.queueOldestMessageSeconds is 121") and "keep arriving" in warning
    assert observability_warnings(ObservabilityConfig(queue_oldest_message_seconds=60)) == []


def test_the_schema_bounds_the_threshold_by_the_retention() -> None:
    prop = json.dumps(stack_file_schema()).split('"queueOldestMessageSeconds": ')[1].split("}")[0]
    assert f'"exclusiveMaximum": {QUEUE_RETENTION_SECONDS}' in prop and '"minimum": 60' in prop
    assert f'"default": {OLDEST_MESSAGE_DEFAULT}' in prop


def test_a_stack_file_with_the_old_default_is_refused_at_its_key(tmp_path: Path) -> None:
    config = stack_config("dev")
    config["eks-karpenter:observability"] = {"queueOldestMessageSeconds": 300}
    result = plan_config(config, tmp_path)
    error = str(result.error)
    assert "eks-karpenter:observability.queueOldestMessageSeconds: the interruption queue deletes" in error
    assert "could never fire" in error and result.document.resources == []  # nothing registered


def test_each_rule_has_a_failed_delivery_alarm_on_its_own_name() -> None:
    for stack in ("dev", "prod"):
        doc = plan_stack(stack)
        rules = {t.name: t.inputs["rule"] for t in doc.by_type(TARGET) if t.name.startswith("interruption-")}
        assert len(rules) == len(INTERRUPTION_EVENTS)
        delivery = {a.name: a.inputs for a in doc.by_type(ALARM) if a.inputs["namespace"] == "AWS/Events"}
        assert {n.removesuffix("-delivery") for n in delivery} == set(rules), stack
        for name, inputs in delivery.items():
            assert inputs["metricName"] == "FailedInvocations" and inputs["statistic"] == "Sum"
            assert inputs["dimensions"] == {"RuleName": rules[name.removesuffix("-delivery")]}
            assert inputs["threshold"] == 0 and inputs["comparisonOperator"] == "GreaterThanThreshold"
            assert inputs["treatMissingData"] == "notBreaching"
    prod = [a for a in plan_stack("prod").by_type(ALARM) if a.inputs["namespace"] == "AWS/Events"]
    assert prod and all(a.inputs["alarmActions"] == ["arn:aws:sns:us-east-1:123456789012:platform-oncall"]
                        for a in prod)


def test_eventbridge_gives_up_on_an_event_once_the_queue_would_have_dropped_it() -> None:
    targets = [t for t in plan_stack("dev").by_type(TARGET) if t.name.startswith("interruption-")]
    assert targets and all(t.inputs["retryPolicy"] == {"maximumEventAgeInSeconds": QUEUE_RETENTION_SECONDS}
                           for t in targets)


def test_the_delivery_alarm_names_the_event_and_the_runbook() -> None:
    args = delivery_alarm_args("EC2 Spot Instance Interruption Warning", None)
    assert "EC2 Spot Instance Interruption Warning" in args["alarm_description"]
    assert "docs/operations.md#interruption-queue-backing-up" in args["alarm_description"]
    assert args["alarm_actions"] == [] and "dimensions" not in args
