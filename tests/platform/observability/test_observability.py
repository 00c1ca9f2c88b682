"""Observability: alert rules, the queue alarms, the dashboard and the charts' monitors, on the plan and on the
pure functions. Every metric an expression reads is checked against the pinned Karpenter version's list."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from eks_karpenter import versions
from eks_karpenter.platform.observability import (
    ObservabilityConfig,
    alerts,
    exposed,
    metric_names,
    pool_price,
    prometheus_rule,
    queue_alarms,
)
from eks_karpenter.platform.observability.dashboard import dashboard, dashboard_metric_names
from eks_karpenter.platform.observability.monitors import karpenter_monitor_values, nth_monitor_values

from tests.support import UPSTREAM, plan_config, plan_stack, requires_upstream, stack_config

ON = ObservabilityConfig(enabled=True, monitor_labels={"release": "kube-prometheus-stack"})


def listed_metrics(path: Path) -> set[str]:
    """Metric names of an upstream metrics reference page (`### \\`name\\`` headings)."""
    return set(re.findall(r"^### `([a-z_:][a-z0-9_:]*)`", path.read_text(), flags=re.MULTILINE))


def metrics_pages() -> list[Path]:
    """metrics.md of the pinned version, and of the older versions kept for upgrades when present."""
    return [p for p in [UPSTREAM / "karpenter" / "metrics.md",
                        *sorted(UPSTREAM.glob("karpenter-*/metrics.md"))] if p.exists()]


def all_exprs(cfg: ObservabilityConfig) -> list[str]:
    return [a.expr for a in alerts(cfg)]


# --- metric names ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("expr", "names"), [
    ("absent(karpenter_build_info)", {"karpenter_build_info"}),
    ('max by (nodepool, resource_type) (a{resource_type=~"cpu|memory"}) / on (nodepool) b > 0.9', {"a", "b"}),
    ("histogram_quantile(0.99, sum by (le) (rate(x_bucket[10m]))) > 60", {"x_bucket"}),
    ('sum(c{type="Launched",status!="True"}) > 0', {"c"}),
    ("count by (nodepool, instance_type) (d) * on (instance_type) group_left () e", {"d", "e"}),
])
def test_metric_names_reads_only_metrics(expr: str, names: set[str]) -> None:
    assert metric_names(expr) == names


def test_exposed_accepts_histogram_series_only_of_listed_metrics() -> None:
    listed = {"karpenter_x_seconds", "operator_y_count"}
    assert exposed("karpenter_x_seconds_bucket", listed)
    assert exposed("operator_y_count", listed)  # a metric whose own name ends in _count
    assert not exposed("karpenter_z_bucket", listed)
    assert not exposed("up", listed)


@requires_upstream
def test_every_alert_and_dashboard_metric_is_exposed_by_the_pinned_karpenter() -> None:
    pages = metrics_pages()
    assert pages, "no metrics.md in the upstream files"
    board = dashboard({"general": pool_price([0.05], 100.0)}, "demo")
    used = {n for e in all_exprs(ON) for n in metric_names(e)} | dashboard_metric_names(board)
    assert "karpenter_nodepools_usage" in used and "karpenter_nodepools_limit" in used
    for page in pages:
        listed = listed_metrics(page)
        assert len(listed) > 50, page
        missing = sorted(n for n in used if not exposed(n, listed))
        assert not missing, f"{page}: not exposed: {missing}"


@requires_upstream
def test_metric_check_fails_for_a_name_karpenter_does_not_export() -> None:
    listed = listed_metrics(UPSTREAM / "karpenter" / "metrics.md")
    assert not exposed("karpenter_nodepool_usage", listed)  # singular: the pre-1.0 spelling
    assert not exposed("up", listed)


# --- the PrometheusRule ----------------------------------------------------------------------------------------

# The parts of the Prometheus Operator's PrometheusRule CRD (monitoring.coreos.com/v1, the pinned
# versions.PROMETHEUS_OPERATOR_VERSION) the rendered rule uses. The CRD is not available offline, so this is
# its structure for these fields, written from the operator's API reference: required keys, the duration
# pattern, string maps, no unknown fields.
DURATION = "^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"
STRINGS = {"type": "object", "additionalProperties": {"type": "string"}}
PROMETHEUS_RULE_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "monitoring.coreos.com/v1"}, "kind": {"const": "PrometheusRule"},
        "metadata": {"type": "object", "required": ["name", "namespace"],
                     "properties": {"name": {"type": "string"}, "namespace": {"type": "string"},
                                    "labels": STRINGS}},
        "spec": {"type": "object", "additionalProperties": False, "properties": {"groups": {
            "type": "array", "items": {
                "type": "object", "required": ["name"], "additionalProperties": False,
                "properties": {
                    "name": {"type": "string", "minLength": 1}, "interval": {"type": "string", "pattern": DURATION},
                    "rules": {"type": "array", "items": {
                        "type": "object", "required": ["expr"], "additionalProperties": False,
                        "oneOf": [{"required": ["alert"]}, {"required": ["record"]}],
                        "properties": {
                            "alert": {"type": "string", "minLength": 1}, "record": {"type": "string"},
                            "expr": {"type": "string", "minLength": 1},
                            "for": {"type": "string", "pattern": DURATION},
                            "keep_firing_for": {"type": "string", "pattern": DURATION},
                            "labels": STRINGS, "annotations": STRINGS}}}}}}}},
    },
}


def test_prometheus_rule_matches_the_operator_schema() -> None:
    rule = prometheus_rule(ON, "kube-system")
    jsonschema.Draft7Validator(PROMETHEUS_RULE_SCHEMA).validate(rule)
    names = [r["alert"] for r in rule["spec"]["groups"][0]["rules"]]
    assert len(names) == len(set(names))
    assert rule["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    assert versions.PROMETHEUS_OPERATOR_VERSION.count(".") == 2


def test_schema_refuses_a_bad_rule() -> None:
    rule = prometheus_rule(ON, "kube-system")
    rule["spec"]["groups"][0]["rules"][0]["for"] = "5 minutes"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(PROMETHEUS_RULE_SCHEMA).validate(rule)


def test_alerts_cover_controller_launch_limit_and_pending_pod_failures() -> None:
    by_name = {a.name: a for a in alerts(ObservabilityConfig(pending_pods_minutes=7, limit_usage_percent=80))}
    assert {"KarpenterControllerDown", "KarpenterNoLeader", "KarpenterNodePoolNearLimit",
            "KarpenterNodeClaimsNotLaunched", "KarpenterNodeClaimsNotRegistered", "KarpenterEC2NodeClassNotReady",
            "KarpenterPodsPendingTooLong"} <= set(by_name)
    assert by_name["KarpenterPodsPendingTooLong"].expr.endswith("> 420")
    assert by_name["KarpenterNodePoolNearLimit"].expr.endswith("> 0.8")


def test_operations_guide_explains_every_alert() -> None:
    from tests.support import REPO
    guide = (REPO / "docs" / "operations.md").read_text()
    for alert in alerts(ON):
        assert f"### {alert.name}" in guide, alert.name
    assert "### Interruption queue backing up" in guide


# --- queue alarms -----------------------------------------------------------------------------------------------

def test_queue_alarms_exist_in_every_stack_with_a_queue_and_notify_prods_topic() -> None:
    for stack in ("dev", "prod"):
        doc = plan_stack(stack)
        alarms = {r.inputs["metricName"]: r.inputs for r in doc.by_type("aws:cloudwatch/metricAlarm:MetricAlarm")
                  if r.inputs["namespace"] == "AWS/SQS"}
        assert set(alarms) == {"ApproximateAgeOfOldestMessage", "ApproximateNumberOfMessagesVisible"}, stack
        queue = doc.by_type("aws:sqs/queue:Queue")[0].inputs["name"]
        for inputs in alarms.values():
            assert inputs["namespace"] == "AWS/SQS" and inputs["dimensions"] == {"QueueName": queue}
    prod = plan_stack("prod").by_type("aws:cloudwatch/metricAlarm:MetricAlarm")
    assert all(a.inputs["alarmActions"] == ["arn:aws:sns:us-east-1:123456789012:platform-oncall"] for a in prod)


def test_queue_alarm_thresholds_follow_config() -> None:
    cfg = ObservabilityConfig(queue_oldest_message_seconds=120, queue_depth=10)
    assert {a.metric_name: a.threshold for a in queue_alarms(cfg)} == {
        "ApproximateAgeOfOldestMessage": 120, "ApproximateNumberOfMessagesVisible": 10}


def test_no_queue_no_alarms(tmp_path: Path) -> None:
    config = stack_config("dev")
    config["eks-karpenter:interruption"] = {"enabled": False, "acknowledgeSpotWithoutInterruptionHandling": True}
    result = plan_config(config, tmp_path)
    assert result.error is None, result.error
    doc = result.document
    assert not doc.by_type("aws:cloudwatch/metricAlarm:MetricAlarm")


# --- prod's plan: monitors, rule, dashboard ------------------------------------------------------------------------

def test_prod_plans_monitors_rule_and_dashboard() -> None:
    doc = plan_stack("prod")
    rule = doc.by_type("kubernetes:monitoring.coreos.com/v1:PrometheusRule")
    assert len(rule) == 1
    jsonschema.Draft7Validator(PROMETHEUS_RULE_SCHEMA).validate(rule[0].inputs)
    controller = doc.get("kubernetes:helm.sh/v3:Release", "karpenter-controller")
    assert controller.inputs["values"]["serviceMonitor"] == {
        "enabled": True, "additionalLabels": {"release": "kube-prometheus-stack"}}
    cm = doc.get("kubernetes:core/v1:ConfigMap", "observability-dashboard")
    assert cm.inputs["metadata"]["labels"] == {"grafana_dashboard": "1"}
    board = json.loads(cm.inputs["data"]["karpenter.json"])
    table = board["panels"][-1]["options"]["content"]
    for pool in ("general", "critical", "arm64"):
        assert f"| {pool} |" in table


def test_dev_has_no_rule_and_no_monitor() -> None:
    doc = plan_stack("dev")
    assert not doc.by_type("kubernetes:monitoring.coreos.com/v1:PrometheusRule")
    controller = doc.get("kubernetes:helm.sh/v3:Release", "karpenter-controller")
    assert "serviceMonitor" not in controller.inputs["values"]


def test_metrics_none_keeps_the_dashboard_but_no_rule(tmp_path: Path) -> None:
    config = stack_config("prod")
    config["eks-karpenter:observability"] = {"enabled": True, "metrics": "none"}
    result = plan_config(config, tmp_path)
    assert result.error is None, result.error
    doc = result.document
    assert not doc.by_type("kubernetes:monitoring.coreos.com/v1:PrometheusRule")
    assert doc.by_type("kubernetes:core/v1:ConfigMap")


def test_dashboard_cost_table_from_catalogue_prices() -> None:
    price = pool_price([0.04, 0.05, 0.06], 100.0)
    assert price is not None and price.cheapest_vcpu_hour == 0.04 and price.median_vcpu_hour == 0.05
    assert price.hour_at_limit == 5.0
    assert pool_price([], 10.0) is None


# --- chart monitor values ----------------------------------------------------------------------------------------

@requires_upstream
def test_monitor_values_use_the_charts_own_keys() -> None:
    karpenter = yaml.safe_load((UPSTREAM / "karpenter" / "karpenter-chart-values.yaml").read_text())
    nth = yaml.safe_load((UPSTREAM / "charts" / "aws-node-termination-handler" / "values.yaml").read_text())
    for key, sub in karpenter_monitor_values(ON).items():
        assert set(sub) <= set(karpenter[key])
    for mode in ("queue", "imds"):
        for key, sub in nth_monitor_values(ON, mode).items():
            assert key in nth
            if isinstance(sub, dict):
                assert set(sub) <= set(nth[key])
    assert "serviceMonitor" in nth_monitor_values(ON, "queue")
    assert "podMonitor" in nth_monitor_values(ON, "imds")
    assert karpenter_monitor_values(ObservabilityConfig()) == {}


# --- Amazon Managed Prometheus (no Prometheus in the cluster) -------------------------------------------------------

def test_amp_scraper_plans_workspace_scraper_access_and_rules(tmp_path: Path) -> None:
    config = stack_config("prod")
    topic = "arn:aws:sns:us-east-1:123456789012:platform-oncall"
    config["eks-karpenter:observability"] = {"enabled": True, "metrics": "ampScraper", "alarmTopicArn": topic}
    result = plan_config(config, tmp_path)
    assert result.error is None, result.error
    doc = result.document
    alertmanager = yaml.safe_load(yaml.safe_load(doc.get(
        "aws:amp/alertManagerDefinition:AlertManagerDefinition", "observability-alerts").inputs["definition"])[
        "alertmanager_config"])
    assert alertmanager["receivers"][0]["sns_configs"][0]["topic_arn"] == topic
    scraper = doc.get("aws:amp/scraper:Scraper", "observability-scraper").inputs
    assert scraper["source"]["eks"]["clusterArn"] == "arn:aws:eks:us-east-1:123456789012:cluster/prod-karpenter"
    assert len(scraper["source"]["eks"]["subnetIds"]) == 3
    scrape = yaml.safe_load(scraper["scrapeConfiguration"])
    assert [j["job_name"] for j in scrape["scrape_configs"]] == ["karpenter"]
    assert doc.get("aws:eks/accessEntry:AccessEntry", "observability-amp-collector").inputs["userName"] == \
        "aps-collector-user"
    binding = doc.get("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", "observability-amp-collector")
    assert binding.inputs["subjects"][0]["name"] == "aps-collector-user"
    rules = yaml.safe_load(doc.get("aws:amp/ruleGroupNamespace:RuleGroupNamespace", "observability-rules")
                           .inputs["data"])
    assert rules == {"groups": prometheus_rule(ON, "x")["spec"]["groups"]}
    assert not doc.by_type("kubernetes:monitoring.coreos.com/v1:PrometheusRule")
    controller = doc.get("kubernetes:helm.sh/v3:Release", "karpenter-controller")
    assert "serviceMonitor" not in controller.inputs["values"]  # no Prometheus Operator: no CRD for it


def test_amp_workspace_given_is_used_not_created(tmp_path: Path) -> None:
    config = stack_config("prod")
    arn = "arn:aws:aps:us-east-1:123456789012:workspace/ws-0123abcd-4567-89ef-0123-456789abcdef"
    config["eks-karpenter:observability"] = {"enabled": True, "metrics": "ampScraper", "ampWorkspaceArn": arn,
                                             "alarmTopicArn": "arn:aws:sns:us-east-1:123456789012:oncall"}
    result = plan_config(config, tmp_path)
    assert result.error is None, result.error
    doc = result.document
    assert not doc.by_type("aws:amp/workspace:Workspace")
    assert not doc.by_type("aws:amp/alertManagerDefinition:AlertManagerDefinition")  # the workspace's own
    assert doc.get("aws:amp/scraper:Scraper", "observability-scraper").inputs["destination"] == {
        "amp": {"workspaceArn": arn}}
    assert doc.get("aws:amp/ruleGroupNamespace:RuleGroupNamespace", "observability-rules").inputs[
        "workspaceId"] == "ws-0123abcd-4567-89ef-0123-456789abcdef"


def test_amp_scrapes_the_termination_handler_when_it_runs() -> None:
    from eks_karpenter.platform.observability.amp import scrape_configuration

    jobs = yaml.safe_load(scrape_configuration("karpenter", "nth"))["scrape_configs"]
    assert [j["job_name"] for j in jobs] == ["karpenter", "aws-node-termination-handler"]
    assert jobs[1]["kubernetes_sd_configs"] == [{"role": "pod", "namespaces": {"names": ["nth"]}}]
    assert nth_monitor_values(ObservabilityConfig(enabled=True, metrics="ampScraper"), "imds") == {
        "enablePrometheusServer": True}
