"""Observability rules: the alarm thresholds of `eks-karpenter:observability` against what can happen (pure)."""

from __future__ import annotations

from eks_karpenter.config.errors import Issue, KeyPath
from eks_karpenter.config.model import aliases
from eks_karpenter.platform.interruption.alarms import ALARM_PERIODS, OLDEST_MESSAGE_DEFAULT, OLDEST_MESSAGE_MIN
from eks_karpenter.platform.interruption.events import QUEUE_RETENTION_SECONDS
from eks_karpenter.platform.observability.config import ObservabilityConfig

_OLDEST = aliases(ObservabilityConfig)["queue_oldest_message_seconds"]


def validate_observability(cfg: ObservabilityConfig, at: KeyPath) -> list[Issue]:
    """An oldest-message alarm the queue's retention keeps from ever firing."""
    seconds = cfg.queue_oldest_message_seconds
    if seconds < QUEUE_RETENTION_SECONDS:
        return []
    return [Issue(at + (_OLDEST,), f"the interruption queue deletes a message after {QUEUE_RETENTION_SECONDS} s, "
                  f"so no message is ever {seconds} s old: this alarm could never fire. Use "
                  f"{OLDEST_MESSAGE_MIN}-{QUEUE_RETENTION_SECONDS - 1} (default {OLDEST_MESSAGE_DEFAULT})", seconds)]


def observability_warnings(cfg: ObservabilityConfig) -> list[str]:
    """An oldest-message threshold a single unread message expires before crossing for the alarm's window."""
    seconds = cfg.queue_oldest_message_seconds
    if not OLDEST_MESSAGE_DEFAULT < seconds < QUEUE_RETENTION_SECONDS:
        return []
    return [f"observability.{_OLDEST} is {seconds}: the interruption queue deletes messages after "
            f"{QUEUE_RETENTION_SECONDS} s, so the alarm fires only while unread messages keep arriving; a single "
            f"unread spot warning expires before it has been older than {seconds} s for {ALARM_PERIODS} minutes. "
            f"{OLDEST_MESSAGE_DEFAULT} or less alarms on it"]
