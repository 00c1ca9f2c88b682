"""Config of the platform's metrics, alerts and dashboard (stack key `eks-karpenter:observability`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from eks_karpenter.config.model import Model, empty_dict
from eks_karpenter.platform.interruption.alarms import OLDEST_MESSAGE_DEFAULT, OLDEST_MESSAGE_MIN
from eks_karpenter.platform.interruption.events import QUEUE_RETENTION_SECONDS

LabelKey = Annotated[str, StringConstraints(pattern=r"^([a-z0-9.-]+/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$",
                                            max_length=316)]
LabelValue = Annotated[str, StringConstraints(pattern=r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$",
                                              max_length=63)]
WorkspaceArn = Annotated[str, StringConstraints(
    pattern=r"^arn:aws[a-z-]*:aps:[a-z0-9-]+:[0-9]{12}:workspace/ws-[0-9a-zA-Z-]+$")]
TopicArn = Annotated[str, StringConstraints(pattern=r"^arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,256}$")]


class ObservabilityConfig(Model):
    """Metrics, alerts and a dashboard for the platform's operators. Off unless a stack turns it on (prod
    does). The interruption queue's CloudWatch alarms (oldest message age, depth, and failed deliveries from each
    of its EventBridge rules) exist whenever the queue does, whether or not this section is enabled: a backed-up
    or unfed queue means spot reclaims are handled late, or not at all."""

    enabled: bool = False
    """Scrape Karpenter's (and the termination handler's) metrics, add the alert rules and the dashboard. With
    `false`, the settings that act only on those (`metrics`, `ampWorkspaceArn`, `monitorLabels`, `dashboard`,
    `pendingPodsMinutes`, `limitUsagePercent`) are refused as having no effect."""
    metrics: Literal["prometheusOperator", "ampScraper", "none"] = "prometheusOperator"
    """Where metrics go. `prometheusOperator`: the cluster runs the Prometheus Operator (e.g.
    kube-prometheus-stack); the charts create their ServiceMonitor (Karpenter) or ServiceMonitor/PodMonitor
    (termination handler), and the alerts are a PrometheusRule. `ampScraper`: no Prometheus in the cluster; an
    Amazon Managed Prometheus scraper (agentless) reads the controller's metrics into an AMP workspace, which
    evaluates the same alerts as a rule group namespace. `none`: nothing is scraped and only the CloudWatch
    alarms on the interruption queue alert."""
    amp_workspace_arn: WorkspaceArn | None = None
    """With `ampScraper`: the AMP workspace to write to (and evaluate the alerts in), in the stack's region,
    partition (and `aws:allowedAccountIds`); refused with another `metrics` mode, which ignores it. Absent: one
    is created, named after the cluster."""
    monitor_labels: dict[LabelKey, LabelValue] = Field(default_factory=empty_dict)
    """Labels on the ServiceMonitors, PodMonitor and PrometheusRule, so the Prometheus picks them up (its
    `serviceMonitorSelector` / `ruleSelector`), e.g. `{release: kube-prometheus-stack}`. Only with
    `prometheusOperator` (refused otherwise: nothing would carry them)."""
    dashboard: bool = True
    """A Grafana dashboard (capacity, cost per pool, disruption, interruption) as a ConfigMap labelled for the
    Grafana sidecar (`grafana_dashboard: "1"`), in the Karpenter namespace."""
    alarm_topic_arn: TopicArn | None = None
    """SNS topic the CloudWatch alarms notify (alarm and back to OK), and, with `ampScraper` and a workspace this
    stack creates, where the workspace's Alertmanager sends the alerts (the topic policy must allow
    `aps.amazonaws.com` to publish). Without it the alarms only change state in the CloudWatch console. In the
    stack's region and partition (CloudWatch notifies only a topic of its own region)."""
    pending_pods_minutes: int = Field(default=10, ge=1, le=240)
    """Alert when a pod has waited this long for a node (`KarpenterPodsPendingTooLong`)."""
    limit_usage_percent: int = Field(default=90, ge=50, le=100)
    """Alert when a NodePool's cpu or memory usage reaches this share of its `limits` (`KarpenterNodePoolNearLimit`)."""
    # The upper bound is checked by observability/rules.py (an error that says why); the schema shows it.
    queue_oldest_message_seconds: int = Field(default=OLDEST_MESSAGE_DEFAULT, ge=OLDEST_MESSAGE_MIN,
                                              json_schema_extra={"exclusiveMaximum": QUEUE_RETENTION_SECONDS})
    """CloudWatch alarm when the oldest interruption message is older than this for three minutes: Karpenter is
    not reading the queue (a spot warning gives two minutes). Below the queue's retention (300 s), which deletes
    older messages: a threshold at or above it could never fire. The default, 120, is the highest one a single
    unread message still crosses for the alarm's three minutes before it expires."""
    queue_depth: int = Field(default=100, ge=1, le=100000)
    """CloudWatch alarm when more interruption messages than this wait in the queue."""
