"""InterruptionQueue component: the SQS queue Karpenter reads, and the EventBridge rules that feed it."""

from __future__ import annotations

import json
from typing import NotRequired, TypedDict

import pulumi
import pulumi_aws as aws

from eks_karpenter.platform.interruption.alarms import QueueAlarm, alarm_args, delivery_alarm_args
from eks_karpenter.platform.interruption.events import (
    INTERRUPTION_EVENTS,
    QUEUE_RETENTION_SECONDS,
    event_pattern,
    queue_policy,
)

TARGET_ID = "karpenter-interruption-queue"
"""EventBridge target id of the queue on each rule (ids are unique per rule only)."""


class InterruptionQueueArgs(TypedDict):
    """Inputs of the InterruptionQueue component."""

    clusterName: str
    """The cluster whose Karpenter reads the queue; the queue is named after it."""
    tags: dict[str, str]
    """Tags for every taggable resource (already merged with the stack-wide tags)."""
    alarms: NotRequired[list[QueueAlarm]]
    """CloudWatch alarms on the queue (`interruption.alarms.queue_alarms`): the queue backing up means Karpenter
    is not handling interruptions."""
    alarmTopicArn: NotRequired[str | None]
    """SNS topic the alarms (these and each rule's delivery alarm) notify."""
    adoptQueueUrl: NotRequired[str | None]
    """URL of an existing queue of the cluster's name that is this stack's by its tags: registered with `import`
    (a no-op while the state holds it). Any other queue of that name is refused at preview
    (platform/taken_names.py)."""
    ownerTags: NotRequired[dict[str, str]]
    """The tag naming this Pulumi stack (`tags.stack_owner_tags`), on the queue only: what the preview checks
    before adopting a queue of the cluster's name (platform/taken_names.py)."""


class InterruptionQueue(pulumi.ComponentResource):
    """An SQS queue named after the cluster (SSE-SQS, five-minute retention) with a policy that lets only this
    component's EventBridge rules send to it (`aws:SourceArn`) and refuses non-TLS access, and one EventBridge
    rule plus target per interruption event Karpenter handles, with a CloudWatch alarm on the rule's failed
    deliveries (an event EventBridge could not put on the queue). Give `queue_name` to the Karpenter chart as
    `settings.interruptionQueue` and grant the controller `sqs:DeleteMessage`, `sqs:GetQueueUrl` and
    `sqs:ReceiveMessage` on `queue_arn`.

    SSE-SQS rather than a customer-managed KMS key: EventBridge can publish to it without a key-policy grant.
    """

    queue_name: pulumi.Output[str]
    """Queue name (the cluster name): the chart's `settings.interruptionQueue`."""
    queue_arn: pulumi.Output[str]
    """Queue ARN, for the controller's IAM policy."""
    queue_url: pulumi.Output[str]
    """Queue URL."""

    def __init__(self, name: str, args: InterruptionQueueArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("eks-karpenter:index:InterruptionQueue", name, None, opts)
        cluster, tags = args["clusterName"], args["tags"]
        child = pulumi.ResourceOptions(parent=self)

        queue = aws.sqs.Queue(f"{name}-queue", name=cluster, message_retention_seconds=QUEUE_RETENTION_SECONDS,
                              sqs_managed_sse_enabled=True,
                              tags={**tags, **args.get("ownerTags", {})},
                              opts=pulumi.ResourceOptions(parent=self, import_=args.get("adoptQueueUrl")))
        rule_arns: list[pulumi.Output[str]] = []
        for event in INTERRUPTION_EVENTS:
            rule = aws.cloudwatch.EventRule(
                f"{name}-{event.name}",
                description=f"Karpenter interruption handling for {cluster}: {event.detail_type}",
                event_pattern=json.dumps(event_pattern(event.source, event.detail_type)),
                tags=tags, opts=child)
            # An event older than the queue's retention is stale: EventBridge gives up on it then and counts a
            # failed invocation within minutes, not after its default of 24 hours of retries.
            aws.cloudwatch.EventTarget(f"{name}-{event.name}", rule=rule.name, arn=queue.arn, target_id=TARGET_ID,
                                       retry_policy=aws.cloudwatch.EventTargetRetryPolicyArgs(
                                           maximum_event_age_in_seconds=QUEUE_RETENTION_SECONDS),
                                       opts=child)
            aws.cloudwatch.MetricAlarm(
                f"{name}-{event.name}-delivery", name=f"{cluster}-karpenter-interruption-delivery-{event.name}",
                dimensions={"RuleName": rule.name}, **delivery_alarm_args(event.detail_type, args.get("alarmTopicArn")),
                tags=tags, opts=child)
            rule_arns.append(rule.arn)
        # Only this stack's rules may send (aws:SourceArn): the policy waits for the rules' ARNs.
        aws.sqs.QueuePolicy(f"{name}-queue-policy", queue_url=queue.url,
                            policy=pulumi.Output.all(queue.arn, *rule_arns).apply(
                                lambda a: json.dumps(queue_policy(a[0], a[1:]))), opts=child)

        for alarm in args.get("alarms", []):
            aws.cloudwatch.MetricAlarm(f"{name}-{alarm.key}", name=f"{cluster}-karpenter-interruption-{alarm.key}",
                                       **alarm_args(alarm, cluster, args.get("alarmTopicArn")), tags=tags,
                                       opts=pulumi.ResourceOptions(parent=self, depends_on=[queue]))

        self.queue_name = queue.name
        self.queue_arn = queue.arn
        self.queue_url = queue.url
        self.register_outputs({"queueName": self.queue_name, "queueArn": self.queue_arn,
                               "queueUrl": self.queue_url})
