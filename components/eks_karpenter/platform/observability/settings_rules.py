"""Rules on the settings of `eks-karpenter:observability`: settings the chosen mode ignores, and ARNs of another
region, partition or account (pure). The alarm thresholds' own rules are in rules.py."""

from __future__ import annotations

from eks_karpenter.arns import arn_issues
from eks_karpenter.config.errors import Issue, KeyPath
from eks_karpenter.platform.observability.config import ObservabilityConfig

_ONLY_WHEN_ENABLED = (("metrics", "metrics"), ("amp_workspace_arn", "ampWorkspaceArn"),
                      ("monitor_labels", "monitorLabels"), ("dashboard", "dashboard"),
                      ("pending_pods_minutes", "pendingPodsMinutes"), ("limit_usage_percent", "limitUsagePercent"))
"""Fields that act only with `enabled: true` (the queue's alarms and their topic exist whenever the queue does)."""


def disabled_settings_warnings(cfg: ObservabilityConfig, at: KeyPath) -> list[Issue]:
    """Settings kept while `enabled` is false: legal (a stack turning observability off for a while keeps them
    for when it is back on), but they act on nothing until then."""
    if cfg.enabled:
        return []
    return [Issue(at + (key,), "has no effect while enabled is false", cfg.written(name))
            for name, key in _ONLY_WHEN_ENABLED if cfg.is_set(name)]


def validate_observability_settings(cfg: ObservabilityConfig, *, region: str | None, accounts: tuple[str, ...],
                                    at: KeyPath) -> list[Issue]:
    """Settings of `eks-karpenter:observability` (at `at`) that would be ignored or point elsewhere."""
    issues: list[Issue] = []
    if cfg.enabled and cfg.metrics != "ampScraper" and cfg.amp_workspace_arn is not None:
        issues.append(Issue(at + ("ampWorkspaceArn",), f"only applies with metrics: ampScraper; with metrics: "
                            f"{cfg.metrics} nothing writes to an AMP workspace (an in-cluster Prometheus keeps "
                            "the metrics itself)", cfg.amp_workspace_arn))
    if cfg.enabled and cfg.metrics != "prometheusOperator" and cfg.monitor_labels:
        issues.append(Issue(at + ("monitorLabels",), f"only applies with metrics: prometheusOperator; with metrics: "
                            f"{cfg.metrics} no ServiceMonitor or PrometheusRule is created to carry them",
                            dict(cfg.monitor_labels)))
    if region is not None:
        if cfg.amp_workspace_arn is not None:
            issues += arn_issues(cfg.amp_workspace_arn, at + ("ampWorkspaceArn",), service="aps", region=region,
                                 accounts=accounts, what="AMP workspace")
        if cfg.alarm_topic_arn is not None:
            issues += arn_issues(cfg.alarm_topic_arn, at + ("alarmTopicArn",), service="sns", region=region,
                                 accounts=accounts, what="SNS topic")
    return issues
