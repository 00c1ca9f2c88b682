"""The EventBridge rules feeding NTH's queue in queue mode (pure data).

Lifecycle hooks reach the queue through EventBridge (the hook has no notification target), so no role for Auto
Scaling to send to SQS is needed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple


class NthEvent(NamedTuple):
    """One EventBridge rule feeding NTH's queue: short name (for resource names) and the event pattern."""

    name: str
    pattern: dict[str, Any]


ASG_LIFECYCLE_SOURCE = "aws.autoscaling"
ASG_LIFECYCLE_DETAIL_TYPE = "EC2 Instance-terminate Lifecycle Action"


def asg_lifecycle_event(asg_names: Sequence[str]) -> NthEvent:
    """The termination lifecycle rule, narrowed to `asg_names`, so another cluster's hooks never reach this
    queue (NTH would complete their lifecycle actions without draining anything)."""
    if not asg_names:
        raise ValueError("the lifecycle rule needs at least one Auto Scaling group name")
    return NthEvent("asg-lifecycle", {"source": [ASG_LIFECYCLE_SOURCE], "detail-type": [ASG_LIFECYCLE_DETAIL_TYPE],
                                      "detail": {"AutoScalingGroupName": sorted(set(asg_names))}})


def nth_events(asg_names: Sequence[str] = ()) -> list[NthEvent]:
    """The rules NTH's queue needs: the lifecycle rule for `asg_names` (left out without any), spot interruption,
    rebalance recommendation, instance state change, and EC2 scheduled changes from AWS Health. All but the
    first reach every instance of the region; the managed-tag check picks this cluster's groups' out of them."""
    events = [asg_lifecycle_event(asg_names)] if asg_names else []
    events += [
        NthEvent("spot-interruption", {"source": ["aws.ec2"],
                                       "detail-type": ["EC2 Spot Instance Interruption Warning"]}),
        NthEvent("rebalance", {"source": ["aws.ec2"], "detail-type": ["EC2 Instance Rebalance Recommendation"]}),
        NthEvent("instance-state-change", {"source": ["aws.ec2"],
                                           "detail-type": ["EC2 Instance State-change Notification"]}),
        NthEvent("scheduled-change", {"source": ["aws.health"], "detail-type": ["AWS Health Event"],
                                      "detail": {"service": ["EC2"], "eventTypeCategory": ["scheduledChange"]}}),
    ]
    return events
