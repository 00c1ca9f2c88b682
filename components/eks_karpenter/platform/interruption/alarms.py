"""The interruption queue's CloudWatch alarms as plain data: the queue backing up (oldest message age, depth) and
EventBridge failing to deliver a rule's events to it (pure).

A queue alarm breaches when each of `ALARM_PERIODS` one-minute periods is above its threshold. A message is
deleted at the queue's retention, so its age never reaches it: an oldest-message threshold at or above the
retention can never fire, and one above `OLDEST_MESSAGE_DEFAULT` fires only while unread messages keep arriving
(a single one expires before the alarm's window has passed above it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eks_karpenter.platform.interruption.events import QUEUE_RETENTION_SECONDS

ALARM_PERIOD_SECONDS = 60
ALARM_PERIODS = 3
OLDEST_MESSAGE_MIN = ALARM_PERIOD_SECONDS
"""SQS publishes the age once a minute: a lower threshold is the same alarm."""
OLDEST_MESSAGE_DEFAULT = QUEUE_RETENTION_SECONDS - ALARM_PERIODS * ALARM_PERIOD_SECONDS
"""The highest threshold a single unread message stays above for the alarm's whole window before it expires
(120 s for the 300 s retention: a spot warning's two minutes)."""
DELIVERY_PERIOD_SECONDS = 300
RUNBOOK = "docs/operations.md#interruption-queue-backing-up"


@dataclass(frozen=True)
class QueueAlarm:
    """One CloudWatch alarm on an SQS metric of the interruption queue."""

    key: str
    """Resource name suffix."""
    metric_name: str
    threshold: int
    description: str


def queue_alarms(oldest_message_seconds: int, depth: int) -> list[QueueAlarm]:
    """Oldest-message age and depth of the interruption queue: the queue is backing up when Karpenter is down,
    cannot reach SQS (IAM, endpoint) or is pointed at another queue."""
    return [
        QueueAlarm("oldest-message-age", "ApproximateAgeOfOldestMessage", oldest_message_seconds,
                   f"Karpenter interruption queue: oldest message older than {oldest_message_seconds}s; "
                   f"Karpenter is not reading it (see {RUNBOOK})"),
        QueueAlarm("depth", "ApproximateNumberOfMessagesVisible", depth,
                   f"Karpenter interruption queue: more than {depth} messages waiting (see {RUNBOOK})"),
    ]


def alarm_args(alarm: QueueAlarm, queue_name: str, topic_arn: str | None) -> dict[str, Any]:
    """Arguments of `aws.cloudwatch.MetricAlarm` (snake_case, as the SDK takes them): the maximum over
    `ALARM_PERIODS` one-minute periods above the threshold; no data (an idle queue publishes none) is not a
    breach."""
    actions = [topic_arn] if topic_arn else []
    return {
        "namespace": "AWS/SQS", "metric_name": alarm.metric_name, "dimensions": {"QueueName": queue_name},
        "statistic": "Maximum", "period": ALARM_PERIOD_SECONDS, "evaluation_periods": ALARM_PERIODS,
        "datapoints_to_alarm": ALARM_PERIODS, "threshold": alarm.threshold,
        "comparison_operator": "GreaterThanThreshold", "treat_missing_data": "notBreaching",
        "alarm_description": alarm.description, "alarm_actions": actions, "ok_actions": actions,
    }


def delivery_alarm_args(detail_type: str, topic_arn: str | None) -> dict[str, Any]:
    """Arguments of the alarm on one EventBridge rule's failed deliveries to the queue (`AWS/Events`
    `FailedInvocations`, dimension `RuleName`, which the caller adds: the rule's name is known at deploy time):
    any event EventBridge gave up on in five minutes (the queue policy refusing it, the queue gone, or retries past
    the event's maximum age) is an interruption Karpenter never hears of. No data is not a breach."""
    actions = [topic_arn] if topic_arn else []
    return {
        "namespace": "AWS/Events", "metric_name": "FailedInvocations", "statistic": "Sum",
        "period": DELIVERY_PERIOD_SECONDS, "evaluation_periods": 1, "datapoints_to_alarm": 1, "threshold": 0,
        "comparison_operator": "GreaterThanThreshold", "treat_missing_data": "notBreaching",
        "alarm_description": f"Karpenter interruption queue: EventBridge failed to deliver \"{detail_type}\" events "
                             f"to it (see {RUNBOOK})",
        "alarm_actions": actions, "ok_actions": actions,
    }
