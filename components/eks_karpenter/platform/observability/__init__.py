"""Metrics, alerts and a dashboard for the platform's operators (stack key `eks-karpenter:observability`)."""

from eks_karpenter.platform.interruption.alarms import QueueAlarm, alarm_args
from eks_karpenter.platform.observability.alerts import (
    Alert,
    alerts,
    exposed,
    metric_names,
    prometheus_rule,
    queue_alarms,
)
from eks_karpenter.platform.observability.config import ObservabilityConfig
from eks_karpenter.platform.observability.dashboard import PoolPrice, dashboard, dashboard_configmap, pool_price

__all__ = [
    "Alert",
    "ObservabilityConfig",
    "PoolPrice",
    "QueueAlarm",
    "alarm_args",
    "alerts",
    "dashboard",
    "dashboard_configmap",
    "exposed",
    "metric_names",
    "pool_price",
    "prometheus_rule",
    "queue_alarms",
]
