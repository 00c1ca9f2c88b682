"""Karpenter's native interruption handling: an SQS queue fed by EventBridge (on by default)."""

from eks_karpenter.platform.interruption.component import InterruptionQueue, InterruptionQueueArgs
from eks_karpenter.platform.interruption.config import InterruptionConfig
from eks_karpenter.platform.interruption.events import (
    INTERRUPTION_EVENTS,
    QUEUE_RETENTION_SECONDS,
    InterruptionEvent,
    event_pattern,
    queue_policy,
)

__all__ = [
    "INTERRUPTION_EVENTS",
    "QUEUE_RETENTION_SECONDS",
    "InterruptionConfig",
    "InterruptionEvent",
    "InterruptionQueue",
    "InterruptionQueueArgs",
    "event_pattern",
    "queue_policy",
]
