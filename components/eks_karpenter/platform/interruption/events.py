"""The EventBridge events Karpenter's interruption queue receives, and the queue's access policy (pure data).

Karpenter v1.14 acts on five event kinds; each gets its own EventBridge rule targeting one SQS queue named
after the cluster. Messages older than five minutes are useless (a spot warning gives two), hence the short
retention.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

QUEUE_RETENTION_SECONDS = 300
"""SQS message retention: an interruption event is stale long before SQS's default of four days."""

SECURE_TRANSPORT_KEY = "aws:SecureTransport"


class InterruptionEvent(NamedTuple):
    """One EventBridge rule: a short name (used in resource names), the event source and its detail-type."""

    name: str
    source: str
    detail_type: str


INTERRUPTION_EVENTS: tuple[InterruptionEvent, ...] = (
    InterruptionEvent("scheduled-change", "aws.health", "AWS Health Event"),
    InterruptionEvent("spot-interruption", "aws.ec2", "EC2 Spot Instance Interruption Warning"),
    InterruptionEvent("rebalance", "aws.ec2", "EC2 Instance Rebalance Recommendation"),
    InterruptionEvent("instance-state-change", "aws.ec2", "EC2 Instance State-change Notification"),
    InterruptionEvent("capacity-reservation-interruption", "aws.ec2",
                      "EC2 Capacity Reservation Instance Interruption Warning"),
)
"""Every event Karpenter's interruption controller handles, one rule each."""


def event_pattern(source: str, detail_type: str) -> dict[str, Any]:
    """An EventBridge event pattern matching one source and one detail-type."""
    return {"source": [source], "detail-type": [detail_type]}


def queue_policy(queue_arn: str, source_arns: Sequence[str] = ()) -> dict[str, Any]:
    """SQS queue policy: EventBridge (and SQS itself) may send to this queue; nobody may use it without TLS.

    With `source_arns` (this stack's EventBridge rules) only those rules may send: beyond upstream's template,
    whose policy lets any rule in any account target the queue, so a stranger's forged "interruption" could make
    Karpenter drain nodes. Shared by the NTH queue (eks_karpenter.platform.nth), which EventBridge feeds the same way.
    """
    allow: dict[str, Any] = {
        "Sid": "AllowEventBridgeToSend",
        "Effect": "Allow",
        "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]},
        "Action": "sqs:SendMessage",
        "Resource": queue_arn,
    }
    if source_arns:
        allow["Condition"] = {"ArnEquals": {"aws:SourceArn": sorted(source_arns)}}
    return {
        "Version": "2012-10-17",
        "Id": "InterruptionQueuePolicy",
        "Statement": [
            allow,
            {
                "Sid": "DenyInsecureTransport",
                "Effect": "Deny",
                "Principal": "*",
                "Action": "sqs:*",
                "Resource": queue_arn,
                "Condition": {"Bool": {SECURE_TRANSPORT_KEY: "false"}},
            },
        ],
    }
