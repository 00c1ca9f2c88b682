"""The labels of every metric the alerts read, as the code that exports it defines them: data.

Karpenter's metrics page (`metrics.md`, which the tests hold the names to) lists names, not labels. The labels
here were read at the source of each metric, for the supported releases (1.12.2, 1.13.1, 1.14.1: the same in
each):

- Karpenter's own metrics: kubernetes-sigs/karpenter (the core each release builds with: v1.12.1, v1.13.0,
  v1.14.1) and aws/karpenter-provider-aws at the release tag;
- the `operator_<kind>_status_condition_*` metrics: the operator package Karpenter uses, awslabs/operatorpkg
  (`status/metrics.go`: `namespace`, `name`, `type`, `status`, `reason`; `status/controller.go`: each label key
  a controller adds with `WithLabels`, its `/`, `.` and `-` turned to `_`). Karpenter's core registers the
  NodeClaim controller with the NodeClaim's `karpenter.sh/nodepool` and `karpenter.k8s.aws/ec2nodeclass` labels
  (`pkg/controllers/controllers.go`); the provider registers the EC2NodeClass controller with none. Read at
  operatorpkg 34e9a1898737 (what Karpenter 1.12.2 pins); 1.13.1 and 1.14.1 pin later commits (c49b4ca8d58d,
  4da4c353c5fa) that no snapshot available here holds; `status/metrics.go` is unchanged from 2025-06 to the
  newest one read (2026-02-17);
- `leader_election_master_status`: kubernetes-sigs/controller-runtime `pkg/metrics/leaderelection.go`
  (v0.22.4 in 1.12.2, v0.23.1 in 1.13.1 and 1.14.1).

Prometheus adds its target labels (`job`, `instance`, `pod`, ...) on scrape; alerts group only by these.
"""

from __future__ import annotations

from dataclasses import dataclass

from eks_karpenter.labels import NODECLASS_LABEL, NODEPOOL_LABEL

CORE = "kubernetes-sigs/karpenter"
PROVIDER = "aws/karpenter-provider-aws"
OPERATORPKG = "awslabs/operatorpkg"
CONTROLLER_RUNTIME = "kubernetes-sigs/controller-runtime"


def prometheus_label(key: str) -> str:
    """A Kubernetes label key as operatorpkg names the metric label it copies it to (`/`, `.`, `-` -> `_`)."""
    return key.replace("/", "_").replace(".", "_").replace("-", "_")


NODEPOOL = prometheus_label(NODEPOOL_LABEL)
"""`karpenter_sh_nodepool`: the NodeClaim's pool, on its status condition metrics."""
NODECLASS = prometheus_label(NODECLASS_LABEL)


@dataclass(frozen=True)
class MetricLabels:
    """One metric's labels and where they are defined."""

    labels: tuple[str, ...]
    repo: str
    path: str
    histogram: bool = False
    """A histogram: its `_bucket` series also carry `le`."""


_CONDITION = ("namespace", "name", "type", "status", "reason")

METRIC_LABELS: dict[str, MetricLabels] = {
    "karpenter_build_info": MetricLabels(("version", "goversion", "goarch", "commit"), CORE,
                                         "pkg/operator/operator.go"),
    "leader_election_master_status": MetricLabels(("name",), CONTROLLER_RUNTIME, "pkg/metrics/leaderelection.go"),
    "karpenter_cluster_state_synced": MetricLabels((), CORE, "pkg/controllers/state/metrics.go"),
    "karpenter_nodepools_usage": MetricLabels(("resource_type", "nodepool"), CORE,
                                              "pkg/controllers/metrics/nodepool/controller.go"),
    "karpenter_nodepools_limit": MetricLabels(("resource_type", "nodepool"), CORE,
                                              "pkg/controllers/metrics/nodepool/controller.go"),
    "operator_nodeclaim_status_condition_count": MetricLabels(
        (*_CONDITION, NODECLASS, NODEPOOL), OPERATORPKG,
        "status/metrics.go, status/controller.go; labels added in kubernetes-sigs/karpenter "
        "pkg/controllers/controllers.go"),
    "operator_ec2nodeclass_status_condition_count": MetricLabels(
        _CONDITION, OPERATORPKG, "status/metrics.go; registered in aws/karpenter-provider-aws "
        "pkg/controllers/controllers.go"),
    "karpenter_pods_unbound_time_seconds": MetricLabels(("name", "namespace"), CORE,
                                                        "pkg/controllers/metrics/pod/controller.go"),
    "karpenter_interruption_message_queue_duration_seconds": MetricLabels(
        (), PROVIDER, "pkg/controllers/interruption/metrics.go", histogram=True),
}
"""Metric name -> its labels, for every metric an alert reads (a test holds the alerts to it)."""


def labels_of(series: str) -> frozenset[str]:
    """The labels a series of a listed metric carries (a histogram's `_bucket` series add `le`); KeyError for a
    metric not listed."""
    for suffix in ("_bucket", "_sum", "_count"):
        base = series.removesuffix(suffix)
        if base != series and base in METRIC_LABELS and METRIC_LABELS[base].histogram:
            return frozenset(METRIC_LABELS[base].labels) | ({"le"} if suffix == "_bucket" else set())
    return frozenset(METRIC_LABELS[series].labels)
