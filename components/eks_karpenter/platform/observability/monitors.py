"""Scraping through the charts' own values: the Karpenter chart's ServiceMonitor, and the termination handler's
Prometheus server with its ServiceMonitor (queue mode: a Deployment behind a Service) or PodMonitor (IMDS mode:
a DaemonSet, no Service). Key names are the pinned charts' (tests check them against their values.yaml).

Those objects, and the PrometheusRule, are kinds of the Prometheus Operator's API (`monitoring.coreos.com`),
which this stack does not install: a new cluster has none of its CRDs, and applying an object of a kind without
its CRD fails ("no matches for kind"). So the program looks the CRDs up at preview (`OPERATOR_CRDS`) and plans
only the objects whose CRD exists, with a warning naming what it left out (`missing_warning`). What it leaves out
changes the charts' values, so the first `up` after the operator lands upgrades both releases and their
monitors appear (the Karpenter chart would otherwise keep a release rendered without one: it checks
`.Capabilities` at render time, and Helm renders only when the release changes).
"""

from __future__ import annotations

from typing import Any

from eks_karpenter.platform.observability.config import ObservabilityConfig

OPERATOR_GROUP = "monitoring.coreos.com"
"""The Prometheus Operator's API group."""
SERVICE_MONITOR, POD_MONITOR, PROMETHEUS_RULE = "ServiceMonitor", "PodMonitor", "PrometheusRule"
OPERATOR_CRDS = {SERVICE_MONITOR: f"servicemonitors.{OPERATOR_GROUP}", POD_MONITOR: f"podmonitors.{OPERATOR_GROUP}",
                 PROMETHEUS_RULE: f"prometheusrules.{OPERATOR_GROUP}"}
"""The CRD each kind this stack may plan needs (its name as the cluster lists it)."""


def scraped(cfg: ObservabilityConfig | None) -> bool:
    """Whether a Prometheus Operator scrapes the platform's charts."""
    return cfg is not None and cfg.enabled and cfg.metrics == "prometheusOperator"


def has_kind(crds: frozenset[str] | None, kind: str) -> bool:
    """Whether the cluster has `kind`'s CRD (`crds`: the CRD names found; None: not looked up, taken as there)."""
    return crds is None or OPERATOR_CRDS[kind] in crds


def karpenter_monitor_values(cfg: ObservabilityConfig | None, crds: frozenset[str] | None = None) -> dict[str, Any]:
    """Values merged into the Karpenter chart's: its ServiceMonitor, with the labels the Prometheus selects, when
    the cluster has the ServiceMonitor CRD (`crds`, see `has_kind`)."""
    if cfg is None or not scraped(cfg) or not has_kind(crds, SERVICE_MONITOR):
        return {}
    return {"serviceMonitor": {"enabled": True, "additionalLabels": dict(cfg.monitor_labels)}}


def nth_monitor_kind(mode: str) -> str:
    """The monitor the termination handler's chart renders in `mode`."""
    return SERVICE_MONITOR if mode == "queue" else POD_MONITOR


def nth_monitor_values(cfg: ObservabilityConfig | None, mode: str,
                       crds: frozenset[str] | None = None) -> dict[str, Any]:
    """Values merged into the termination handler chart's: its metrics server, and the monitor its mode needs
    when the cluster has that monitor's CRD (the chart renders it unconditionally when asked)."""
    if cfg is not None and cfg.enabled and cfg.metrics == "ampScraper":
        return {"enablePrometheusServer": True}  # the AMP scraper finds its pods' `http-metrics` port
    if cfg is None or not scraped(cfg):
        return {}
    kind = nth_monitor_kind(mode)
    if not has_kind(crds, kind):
        return {"enablePrometheusServer": True}
    monitor = {"create": True, "labels": dict(cfg.monitor_labels)}
    return {"enablePrometheusServer": True,
            **({"serviceMonitor": monitor} if kind == SERVICE_MONITOR else {"podMonitor": monitor})}


def left_out(cfg: ObservabilityConfig, crds: frozenset[str], nth_mode: str | None) -> list[tuple[str, str]]:
    """(kind, what) this stack would plan for the Prometheus Operator but leaves out for want of the kind's CRD
    (`nth_mode`: the termination handler's mode, None when it does not run)."""
    if not scraped(cfg):
        return []
    wanted = [(SERVICE_MONITOR, "the Karpenter chart's ServiceMonitor"),
              *([(nth_monitor_kind(nth_mode), f"the termination handler chart's {nth_monitor_kind(nth_mode)}")]
                if nth_mode else []),
              (PROMETHEUS_RULE, "the PrometheusRule `karpenter` (the alerts)")]
    return [(kind, what) for kind, what in wanted if not has_kind(crds, kind)]


def missing_warning(cfg: ObservabilityConfig, crds: frozenset[str], nth_mode: str | None,
                    reason: str = "") -> str | None:
    """The warning a plan without some of the operator's objects gives: what was left out and what to do."""
    missing = left_out(cfg, crds, nth_mode)
    if not missing:
        return None
    absent = ", ".join(sorted({OPERATOR_CRDS[kind] for kind, _ in missing}))
    what = [w for _, w in missing]
    listed = what[0] if len(what) == 1 else f"{', '.join(what[:-1])} and {what[-1]}"
    why = f" ({reason})" if reason else ""
    return (f"observability.metrics is prometheusOperator but the cluster lacks the Prometheus Operator's CRDs "
            f"{absent}{why}: planned without {listed}. Install the operator (e.g. kube-prometheus-stack) and run "
            "`pulumi up` again: the charts are upgraded with their monitors and the rule is created. Until then "
            "only the interruption queue's CloudWatch alarms alert")
