"""Alerts group and match only by labels their metrics carry, as the code exporting each metric defines them
(observability/metric_labels.py): a label Karpenter does not set would silently collapse every object into one."""

from __future__ import annotations

import re

import pytest
from eks_karpenter.labels import NODECLASS_LABEL, NODEPOOL_LABEL
from eks_karpenter.platform.observability.alerts import Alert, alerts, metric_names
from eks_karpenter.platform.observability.config import ObservabilityConfig
from eks_karpenter.platform.observability.metric_labels import METRIC_LABELS, labels_of, prometheus_label

ON = ObservabilityConfig(enabled=True)
_MATCHERS = re.compile(r"\{([^{}]*)\}")
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring)\s*\(([^()]*)\)")


def used_labels(expr: str) -> set[str]:
    """The label names an expression matches on or groups by."""
    found = {k for m in _MATCHERS.finditer(expr) for k in re.findall(r"(\w+)\s*(?:=~|!~|!=|=)", m.group(1))}
    return found | {x.strip() for m in _GROUPING.finditer(expr) for x in m.group(1).split(",") if x.strip()}


def unknown_labels(expr: str) -> set[str]:
    carried = set.intersection(*(set(labels_of(n)) for n in metric_names(expr)))
    return used_labels(expr) - carried


@pytest.mark.parametrize("alert", alerts(ON), ids=lambda a: a.name)
def test_each_alert_uses_only_labels_its_metrics_carry(alert: Alert) -> None:
    expr = alert.expr
    assert metric_names(expr) <= {*METRIC_LABELS, *(f"{m}_bucket" for m in METRIC_LABELS)}
    assert unknown_labels(expr) == set()


def test_the_nodeclaim_alerts_are_per_claim_and_name_its_pool() -> None:
    by_name = {a.name: a for a in alerts(ON)}
    for name in ("KarpenterNodeClaimsNotLaunched", "KarpenterNodeClaimsNotRegistered"):
        assert used_labels(by_name[name].expr) >= {"name", "karpenter_sh_nodepool"}
        assert not by_name[name].expr.startswith("sum(")


def test_the_check_refuses_a_guessed_label() -> None:
    # `nodepool` is the label of Karpenter's own metrics, not of operatorpkg's status condition metrics.
    assert unknown_labels('max by (nodepool) (operator_nodeclaim_status_condition_count{type="Launched"})') == {
        "nodepool"}
    assert unknown_labels("histogram_quantile(0.9, sum by (le) (rate("
                          "karpenter_interruption_message_queue_duration_seconds_bucket[5m])))") == set()


def test_object_labels_are_the_kubernetes_keys_as_operatorpkg_spells_them() -> None:
    assert prometheus_label(NODEPOOL_LABEL) == "karpenter_sh_nodepool"
    assert prometheus_label(NODECLASS_LABEL) == "karpenter_k8s_aws_ec2nodeclass"
    assert labels_of("karpenter_interruption_message_queue_duration_seconds_bucket") == {"le"}
    with pytest.raises(KeyError):
        labels_of("up")
