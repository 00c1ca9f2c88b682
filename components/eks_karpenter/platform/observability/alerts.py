"""Alert rules as plain data: the PrometheusRule, the metric names each expression reads (tests check them against
the pinned Karpenter version's metrics list, and the labels it groups by against `metric_labels.py`), and the
interruption queue's CloudWatch alarms at the configured thresholds (defined in `interruption.alarms`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from eks_karpenter.platform.interruption.alarms import QueueAlarm
from eks_karpenter.platform.interruption.alarms import queue_alarms as interruption_queue_alarms
from eks_karpenter.platform.observability.config import ObservabilityConfig
from eks_karpenter.platform.observability.metric_labels import NODEPOOL

RULE_NAME = "karpenter"
"""Name of the PrometheusRule object (in the Karpenter namespace)."""
RUNBOOK = "docs/operations.md"


@dataclass(frozen=True)
class Alert:
    """One Prometheus alerting rule."""

    name: str
    expr: str
    for_: str
    severity: str
    summary: str
    """What it means, in one line (the operations guide has the first thing to do)."""

    def rule(self) -> dict[str, Any]:
        return {"alert": self.name, "expr": self.expr, "for": self.for_,
                "labels": {"severity": self.severity},
                "annotations": {"summary": self.summary,
                                "runbook": f"{RUNBOOK}#{self.name.lower()}"}}


def alerts(cfg: ObservabilityConfig) -> list[Alert]:
    """The platform's alerts. Each reads only metrics Karpenter itself exports (not `up` or kube-state-metrics),
    so they work with any Prometheus that scrapes the controller."""
    share = cfg.limit_usage_percent / 100
    return [
        # Every replica exports build info; none for 5 minutes: no controller is running (or none is scraped).
        Alert("KarpenterControllerDown", "absent(karpenter_build_info)", "5m", "critical",
              "No Karpenter controller has reported metrics for 5 minutes: nothing provisions or drains nodes."),
        # Replicas run but none holds the leader lease: nothing reconciles.
        Alert("KarpenterNoLeader", "sum(leader_election_master_status) < 1", "5m", "critical",
              "Karpenter replicas run but none is leader for 5 minutes: the controller is not ready."),
        Alert("KarpenterClusterStateUnsynced", "max(karpenter_cluster_state_synced) < 1", "15m", "warning",
              "Karpenter's view of nodes and NodeClaims has not matched the API server for 15 minutes."),
        Alert("KarpenterNodePoolNearLimit",
              'max by (nodepool, resource_type) (karpenter_nodepools_usage{resource_type=~"cpu|memory"}) '
              "/ on (nodepool, resource_type) "
              'max by (nodepool, resource_type) (karpenter_nodepools_limit{resource_type=~"cpu|memory"}) '
              f"> {share:g}", "15m", "warning",
              f"A NodePool has used {cfg.limit_usage_percent}% of its cpu or memory limit for 15 minutes: new "
              "pods will soon stay Pending."),
        # Per NodeClaim: a long scale-up always has some claim waiting, but none for long. Karpenter deletes a claim
        # not launched in 5 minutes or not registered in 15 and makes a new one, so each `for` is shorter.
        Alert("KarpenterNodeClaimsNotLaunched",
              f"max by (name, {NODEPOOL}) "
              '(operator_nodeclaim_status_condition_count{type="Launched",status!="True"}) > 0', "3m", "warning",
              f"NodeClaim {{{{ $labels.name }}}} of NodePool {{{{ $labels.{NODEPOOL} }}}} has had no instance for 3 "
              "minutes; Karpenter replaces it at 5 (capacity, quota, IAM or node class errors)."),
        Alert("KarpenterNodeClaimsNotRegistered",
              f"max by (name, {NODEPOOL}) "
              '(operator_nodeclaim_status_condition_count{type="Registered",status!="True"}) > 0', "10m", "warning",
              f"NodeClaim {{{{ $labels.name }}}} of NodePool {{{{ $labels.{NODEPOOL} }}}} has not joined the "
              "cluster for 10 minutes; Karpenter replaces it at 15 (bootstrap, access entry or networking)."),
        Alert("KarpenterEC2NodeClassNotReady",
              'max by (name) (operator_ec2nodeclass_status_condition_count{type="Ready",status!="True"}) > 0',
              "10m", "critical", "An EC2NodeClass is not Ready: its pools launch nothing (AMI, subnet, security "
              "group or instance profile not resolved)."),
        Alert("KarpenterPodsPendingTooLong",
              f"max(karpenter_pods_unbound_time_seconds) > {cfg.pending_pods_minutes * 60}", "5m", "warning",
              f"A pod has waited more than {cfg.pending_pods_minutes} minutes for a node."),
        Alert("KarpenterInterruptionHandlingSlow",
              "histogram_quantile(0.99, sum by (le) "
              "(rate(karpenter_interruption_message_queue_duration_seconds_bucket[10m]))) > 60", "10m", "warning",
              "Interruption messages wait over a minute before Karpenter handles them (a spot warning gives two)."),
    ]


def prometheus_rule(cfg: ObservabilityConfig, namespace: str) -> dict[str, Any]:
    """The `monitoring.coreos.com/v1` PrometheusRule with every alert, in the Karpenter namespace."""
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": RULE_NAME, "namespace": namespace,
                     "labels": {"app.kubernetes.io/part-of": "eks-karpenter", **cfg.monitor_labels}},
        "spec": {"groups": [{"name": "karpenter", "rules": [a.rule() for a in alerts(cfg)]}]},
    }


# --- PromQL metric names --------------------------------------------------------------------------------------

_KEYWORDS = frozenset({
    "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset",
    "inf", "nan",
})
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_MATCHERS = re.compile(r"\{[^{}]*\}")
_RANGE = re.compile(r"\[[^\]]*\]")
_GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)")
_IDENT = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads: identifiers that are not functions, keywords, label names
    (in matchers or grouping clauses) or durations."""
    text = _STRING.sub('""', expr)
    text = _MATCHERS.sub("{}", text)
    text = _RANGE.sub("", text)
    text = _GROUPING.sub(" ", text)
    names: set[str] = set()
    for match in _IDENT.finditer(text):
        word = match.group(0)
        following = text[match.end():].lstrip()
        if following.startswith("(") or word.lower() in _KEYWORDS:
            continue
        if match.start() > 0 and text[match.start() - 1].isdigit():
            continue  # the unit of a number such as 5m
        names.add(word)
    return names


def exposed(name: str, metrics: set[str]) -> bool:
    """Whether `name` is a listed metric or a histogram series of one (`_bucket`, `_sum`, `_count`)."""
    if name in metrics:
        return True
    return any(name.endswith(s) and name.removesuffix(s) in metrics for s in HISTOGRAM_SUFFIXES)


# --- CloudWatch alarms on the interruption queue ---------------------------------------------------------------

def queue_alarms(cfg: ObservabilityConfig) -> list[QueueAlarm]:
    """The interruption queue's alarms at this config's thresholds (`interruption.alarms`)."""
    return interruption_queue_alarms(cfg.queue_oldest_message_seconds, cfg.queue_depth)
