"""The Grafana dashboard as plain data: capacity, cost per pool, disruption and interruption.

Live panels read only Karpenter's own metrics. Cost per pool has two sources: Karpenter's live price estimate
for the nodes each pool runs now, and a table from this library's catalogue (on-demand prices of the instance
types each pool admits), which says what a vCPU-hour costs in the pool and what an hour at its cpu limit costs.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from eks_karpenter.catalogue import admitted_for
from eks_karpenter.catalogue.model import vcpu_hour_prices
from eks_karpenter.catalogue.prices import region_prices
from eks_karpenter.platform.nodepool.config import NodePoolConfig
from eks_karpenter.platform.observability.alerts import metric_names
from eks_karpenter.quantities import cpu_millis

UID = "eks-karpenter"
CONFIGMAP_LABEL = ("grafana_dashboard", "1")
"""The label kube-prometheus-stack's Grafana sidecar looks for (its default `sidecar.dashboards.label`)."""


@dataclass(frozen=True)
class PoolPrice:
    """On-demand prices (USD) of what one pool admits, from the catalogue."""

    types: int
    """Admitted instance types with a price."""
    cheapest_vcpu_hour: float
    median_vcpu_hour: float
    cpu_limit: float | None
    """The pool's cpu limit in vCPUs (None: unlimited)."""

    @property
    def hour_at_limit(self) -> float | None:
        """What an hour with the pool at its cpu limit costs at the median on-demand vCPU price."""
        return None if self.cpu_limit is None else round(self.cpu_limit * self.median_vcpu_hour, 2)


def pool_price(prices_per_vcpu_hour: list[float], cpu_limit: float | None) -> PoolPrice | None:
    """Summary of the per-vCPU on-demand prices of a pool's admitted types; None when none is priced."""
    if not prices_per_vcpu_hour:
        return None
    return PoolPrice(len(prices_per_vcpu_hour), round(min(prices_per_vcpu_hour), 5),
                     round(statistics.median(prices_per_vcpu_hour), 5), cpu_limit)


def pool_prices(pools: Sequence[NodePoolConfig], region: str, pool_manifests: Mapping[str, dict[str, Any]],
                class_manifests: Mapping[str, dict[str, Any]]) -> dict[str, PoolPrice | None]:
    """Each pool's on-demand vCPU-hour prices in `region` (catalogue/prices.py, as `cost` prices them) over the
    types it admits, and its cpu limit."""
    prices = region_prices(region)
    out: dict[str, PoolPrice | None] = {}
    for pool in pools:
        admission = admitted_for(pool_manifests[pool.name], class_manifests.get(pool.node_class))
        limit = cpu_millis(cpu) / 1000 if (cpu := pool.limits.get("cpu")) is not None else None
        out[pool.name] = pool_price(vcpu_hour_prices(admission.types, lambda t: prices.price(t.name)), limit)
    return out


def _panel(id_: int, title: str, exprs: list[tuple[str, str]], x: int, y: int, unit: str = "short",
           kind: str = "timeseries") -> dict[str, Any]:
    return {
        "id": id_, "type": kind, "title": title, "datasource": {"type": "prometheus", "uid": "${datasource}"},
        "gridPos": {"h": 8, "w": 12, "x": x, "y": y},
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "targets": [{"refId": chr(ord("A") + i), "expr": expr, "legendFormat": legend}
                    for i, (expr, legend) in enumerate(exprs)],
    }


LIVE_PANELS: list[tuple[str, list[tuple[str, str]], str]] = [
    ("Capacity: cpu used / limit per NodePool",
     [('max by (nodepool) (karpenter_nodepools_usage{resource_type="cpu"})', "{{nodepool}} used"),
      ('max by (nodepool) (karpenter_nodepools_limit{resource_type="cpu"})', "{{nodepool}} limit")], "short"),
    ("Capacity: memory used / limit per NodePool",
     [('max by (nodepool) (karpenter_nodepools_usage{resource_type="memory"})', "{{nodepool}} used"),
      ('max by (nodepool) (karpenter_nodepools_limit{resource_type="memory"})', "{{nodepool}} limit")],
     "bytes"),
    ("Nodes and pending pods",
     [("max(karpenter_cluster_state_node_count)", "nodes"),
      ("max(karpenter_scheduler_unschedulable_pods_count)", "unschedulable pods")], "short"),
    ("Cost per NodePool now (Karpenter's price estimate, USD/h)",
     [('sum by (nodepool) (count by (nodepool, instance_type, capacity_type, zone) '
       '(karpenter_nodes_allocatable{resource_type="cpu"}) * on (instance_type, capacity_type, zone) '
       "group_left () max by (instance_type, capacity_type, zone) "
       "(karpenter_cloudprovider_instance_type_offering_price_estimate))", "{{nodepool}}")], "currencyUSD"),
    ("Disruption decisions per NodePool (per hour)",
     [("sum by (nodepool, reason) (increase(karpenter_voluntary_disruption_decisions_by_nodepool_total[1h]))",
       "{{nodepool}} {{reason}}")], "short"),
    ("NodeClaims disrupted per reason (per hour)",
     [("sum by (nodepool, reason) (increase(karpenter_nodeclaims_disrupted_total[1h]))",
       "{{nodepool}} {{reason}}")], "short"),
    ("Interruption messages received (per 5m)",
     [("sum by (message_type) (increase(karpenter_interruption_received_messages_total[5m]))",
       "{{message_type}}")], "short"),
    ("Interruption message wait, p99",
     [("histogram_quantile(0.99, sum by (le) (rate(karpenter_interruption_message_queue_duration_seconds_bucket"
       "[10m])))", "p99")], "s"),
]


def dashboard(prices: Mapping[str, PoolPrice | None], cluster_name: str) -> dict[str, Any]:
    """The dashboard JSON (Grafana schema 39), for the sidecar ConfigMap or a manual import."""
    panels: list[dict[str, Any]] = []
    for i, (title, exprs, unit) in enumerate(LIVE_PANELS):
        panels.append(_panel(i + 1, title, exprs, x=(i % 2) * 12, y=(i // 2) * 8, unit=unit))
    rows = ["| NodePool | priced types | cheapest $/vCPU-h | median $/vCPU-h | $/h at cpu limit (median) |",
            "|---|---|---|---|---|"]
    for pool, price in sorted(prices.items()):
        if price is None:
            rows.append(f"| {pool} | 0 | - | - | - |")
            continue
        at_limit = "unlimited" if price.hour_at_limit is None else f"{price.hour_at_limit:.2f}"
        rows.append(f"| {pool} | {price.types} | {price.cheapest_vcpu_hour:.5f} | {price.median_vcpu_hour:.5f} "
                    f"| {at_limit} |")
    panels.append({
        "id": len(panels) + 1, "type": "text", "title": "Cost per NodePool (on-demand prices, catalogue)",
        "gridPos": {"h": 8, "w": 24, "x": 0, "y": (len(LIVE_PANELS) + 1) // 2 * 8},
        "options": {"mode": "markdown", "content": "\n".join(rows) + "\n\nSpot usually costs less; the live "
                    "panel above uses Karpenter's own estimate for what runs."},
    })
    return {
        "uid": UID, "title": f"Karpenter: {cluster_name}", "schemaVersion": 39, "version": 1,
        "tags": ["karpenter", "eks-karpenter"], "time": {"from": "now-24h", "to": "now"}, "refresh": "1m",
        "templating": {"list": [{"name": "datasource", "type": "datasource", "query": "prometheus",
                                 "label": "Prometheus"}]},
        "panels": panels,
    }


def dashboard_metric_names(board: Mapping[str, Any]) -> set[str]:
    """Every metric name the dashboard's queries read."""
    return {name for panel in board["panels"] for target in panel.get("targets", [])
            for name in metric_names(target["expr"])}


def dashboard_configmap(board: Mapping[str, Any], namespace: str) -> dict[str, Any]:
    """The ConfigMap the Grafana sidecar imports (one JSON file)."""
    key, value = CONFIGMAP_LABEL
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "karpenter-dashboard", "namespace": namespace, "labels": {key: value}},
            "data": {"karpenter.json": json.dumps(board, sort_keys=True)}}
