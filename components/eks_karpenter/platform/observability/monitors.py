"""Scraping through the charts' own values: the Karpenter chart's ServiceMonitor, and the termination handler's
Prometheus server with its ServiceMonitor (queue mode: a Deployment behind a Service) or PodMonitor (IMDS mode:
a DaemonSet, no Service). Key names are the pinned charts' (tests check them against their values.yaml)."""

from __future__ import annotations

from typing import Any

from eks_karpenter.platform.observability.config import ObservabilityConfig


def scraped(cfg: ObservabilityConfig | None) -> bool:
    """Whether a Prometheus Operator scrapes the platform's charts."""
    return cfg is not None and cfg.enabled and cfg.metrics == "prometheusOperator"


def karpenter_monitor_values(cfg: ObservabilityConfig | None) -> dict[str, Any]:
    """Values merged into the Karpenter chart's: its ServiceMonitor, with the labels the Prometheus selects."""
    if cfg is None or not scraped(cfg):
        return {}
    return {"serviceMonitor": {"enabled": True, "additionalLabels": dict(cfg.monitor_labels)}}


def nth_monitor_values(cfg: ObservabilityConfig | None, mode: str) -> dict[str, Any]:
    """Values merged into the termination handler chart's: its metrics server and the monitor its mode needs."""
    if cfg is not None and cfg.enabled and cfg.metrics == "ampScraper":
        return {"enablePrometheusServer": True}  # the AMP scraper finds its pods' `http-metrics` port
    if cfg is None or not scraped(cfg):
        return {}
    monitor = {"create": True, "labels": dict(cfg.monitor_labels)}
    return {"enablePrometheusServer": True,
            **({"serviceMonitor": monitor} if mode == "queue" else {"podMonitor": monitor})}
