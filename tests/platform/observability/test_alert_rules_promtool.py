"""The planned alert rules, run by Prometheus' own `promtool`: every rule file parses (`promtool check rules`), and
each alert fires on synthetic series of the failure it is for and stays quiet on normal churn (`promtool test
rules`). The rule files are written at test time from the planned PrometheusRule objects and the AMP rule group
namespace (an `ampScraper` stack); synthetic series carry exactly the labels their metric's source defines
(`observability/metric_labels.py`). Without promtool these tests skip, naming the install command (they fail
instead under EKS_KARPENTER_NO_SKIPS=1, as in CI)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from eks_karpenter.platform.observability.metric_labels import labels_of

from tests.support import INSTALL_PROMTOOL, NO_SKIPS, STACKS, plan_config, plan_stack, stack_config

PROMETHEUS_RULE = "kubernetes:monitoring.coreos.com/v1:PrometheusRule"
RULE_GROUP_NAMESPACE = "aws:amp/ruleGroupNamespace:RuleGroupNamespace"
MISSING_PROMTOOL = f"needs Prometheus' promtool: run `{INSTALL_PROMTOOL}` (as root)"


@pytest.fixture(scope="module")
def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        if os.environ.get(NO_SKIPS) == "1":
            pytest.fail(f"{MISSING_PROMTOOL} ({NO_SKIPS}=1: the alert rule tests may not be skipped)", pytrace=False)
        pytest.skip(MISSING_PROMTOOL)
    return found


def planned_rule_groups() -> list[dict[str, Any]]:
    """The groups of every PrometheusRule the shipped stacks plan (prod's: the others have observability off)."""
    rules = [r for stack in STACKS for r in plan_stack(stack).by_type(PROMETHEUS_RULE)]
    assert rules, "no stack plans a PrometheusRule"
    groups = list({json.dumps(g, sort_keys=True): g for r in rules for g in r.inputs["spec"]["groups"]}.values())
    names = [rule["alert"] for g in groups for rule in g["rules"]]
    assert len(names) == len(set(names)), "stacks plan different rules: the cases below are per alert name"
    return groups


def planned_alerts() -> dict[str, dict[str, Any]]:
    return {rule["alert"]: rule for g in planned_rule_groups() for rule in g["rules"] if "alert" in rule}


def run(promtool: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([promtool, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


# --- synthetic series -------------------------------------------------------------------------------------------

def series(metric: str, pod: str | None = None, **labels: str) -> str:
    """A series selector for promtool's input, with exactly the labels the metric's source gives it (and, with
    `pod`, the scrape target's label Prometheus adds, to tell two replicas apart)."""
    assert set(labels) == labels_of(metric), f"{metric}: labels {sorted(labels)} != {sorted(labels_of(metric))}"
    target = {"pod": pod} if pod else {}
    return metric + "{" + ",".join(f'{k}="{v}"' for k, v in sorted({**labels, **target}.items())) + "}"


def claim(name: str, condition: str, status: str, reason: str = "") -> str:
    return series("operator_nodeclaim_status_condition_count", namespace="", name=name, type=condition,
                  status=status, reason=reason, karpenter_sh_nodepool="general",
                  karpenter_k8s_aws_ec2nodeclass="default")


def during(start: int, minutes: int, value: str = "1") -> str:
    """A series scraped from minute `start` for `minutes` (>= 2) minutes at `value` (`a` or `a+b`, promtool's
    notation), then gone: a staleness marker, as Prometheus writes when a series leaves its target."""
    return " ".join([*([f"_x{start}"] if start else []), f"{value}x{minutes - 1}", "stale"])


def scale_up(condition: str, minutes_each: int, count: int = 30) -> dict[str, str]:
    """A long scale-up: a new NodeClaim every minute, each `condition`=Unknown for `minutes_each` minutes, then
    True; at every minute some claim is still waiting (a sum over claims never drops to 0)."""
    out = {}
    for i in range(count):
        out[claim(f"general-{i:03d}", condition, "Unknown", "AwaitingReconciliation")] = during(i, minutes_each)
        out[claim(f"general-{i:03d}", condition, "True")] = during(i + minutes_each, 40)
    return out


def bucket(le: str, values: str) -> tuple[str, str]:
    return series("karpenter_interruption_message_queue_duration_seconds_bucket", le=le), values


@dataclass
class Case:
    """Input series (selector -> promtool values, one sample a minute), and what the alert does at `at`."""

    series: dict[str, str]
    at: tuple[str, ...]
    fires: list[dict[str, str]] = field(default_factory=list)
    """The labels of each alert firing at every time in `at` (besides the rule's own); empty: quiet."""


BUILD = series("karpenter_build_info", version="1.14.1", goversion="go1.26.6", goarch="amd64", commit="bde0065")
LEADER = "leader_election_master_status"
LEASE = "karpenter-leader-election"
SYNCED = series("karpenter_cluster_state_synced")
USAGE_CPU = series("karpenter_nodepools_usage", resource_type="cpu", nodepool="general")
LIMIT_CPU = series("karpenter_nodepools_limit", resource_type="cpu", nodepool="general")
USAGE_MEMORY = series("karpenter_nodepools_usage", resource_type="memory", nodepool="general")
LIMIT_MEMORY = series("karpenter_nodepools_limit", resource_type="memory", nodepool="general")


def node_class(status: str) -> str:
    return series("operator_ec2nodeclass_status_condition_count", namespace="", name="default", type="Ready",
                  status=status, reason="" if status == "True" else "SubnetsNotFound")


def pod(name: str) -> str:
    return series("karpenter_pods_unbound_time_seconds", name=name, namespace="batch")


CASES: dict[str, dict[str, Case]] = {
    "KarpenterControllerDown": {
        "no replica reports for 10 minutes": Case({BUILD: "1x5 stale"}, ("20m",), [{}]),
        "a restart's two-minute gap": Case({BUILD: "1x10 stale _ 1x20"}, ("12m", "16m", "25m")),
    },
    "KarpenterNoLeader": {
        "both replicas follow": Case({series(LEADER, pod="a", name=LEASE): "0x20",
                                      series(LEADER, pod="b", name=LEASE): "0x20"}, ("10m",), [{}]),
        "a leader hand-over": Case({series(LEADER, pod="a", name=LEASE): "1x5 0x20",
                                    series(LEADER, pod="b", name=LEASE): "0x7 1x20"}, ("7m", "9m", "20m")),
    },
    "KarpenterClusterStateUnsynced": {
        "unsynced for 20 minutes": Case({SYNCED: "0x30"}, ("20m",), [{}]),
        "unsynced while starting": Case({SYNCED: "0x5 1x30"}, ("10m", "20m")),
    },
    "KarpenterNodePoolNearLimit": {
        "cpu at 95% for 20 minutes": Case({USAGE_CPU: "95x30", LIMIT_CPU: "100x30", USAGE_MEMORY: "100x30",
                                           LIMIT_MEMORY: "400x30"}, ("20m",),
                                          [{"nodepool": "general", "resource_type": "cpu"}]),
        "a ten-minute spike": Case({USAGE_CPU: "95x10 50x20", LIMIT_CPU: "100x30"}, ("9m", "25m")),
    },
    "KarpenterNodeClaimsNotLaunched": {
        "one claim without an instance for 4 minutes": Case(
            {claim("general-x1", "Launched", "Unknown", "LaunchFailed"): during(0, 5)}, ("4m",),
            [{"name": "general-x1", "karpenter_sh_nodepool": "general"}]),
        "a 30-minute scale-up, each claim launched within 2 minutes": Case(
            scale_up("Launched", 2), ("5m", "10m", "15m", "20m", "25m")),
    },
    "KarpenterNodeClaimsNotRegistered": {
        "one launched instance not joining for 12 minutes": Case(
            {claim("general-x2", "Launched", "True"): during(0, 15),
             claim("general-x2", "Registered", "Unknown", "AwaitingReconciliation"): during(0, 15)}, ("12m",),
            [{"name": "general-x2", "karpenter_sh_nodepool": "general"}]),
        "a 30-minute scale-up, each node joining within 3 minutes": Case(
            scale_up("Registered", 3), ("10m", "15m", "20m", "25m")),
    },
    "KarpenterEC2NodeClassNotReady": {
        "subnets not found for 15 minutes": Case({node_class("False"): "1x20"}, ("12m",), [{"name": "default"}]),
        "Unknown for 2 minutes after creation": Case({node_class("Unknown"): during(0, 2),
                                                      node_class("True"): during(2, 30)}, ("5m", "15m")),
    },
    "KarpenterPodsPendingTooLong": {
        "a pod pending for 18 minutes": Case({pod("stuck"): "0+60x20"}, ("18m",), [{}]),
        "pods each bound within 3 minutes over half an hour": Case(
            {pod(f"web-{i}"): during(i, 4, "0+60") for i in range(30)}, ("10m", "20m", "30m")),
    },
    "KarpenterInterruptionHandlingSlow": {
        "messages wait about two minutes": Case(dict([
            bucket("1", "0x20"), bucket("60", "0x20"), bucket("120", "0+10x20"), bucket("+Inf", "0+10x20")]),
            ("15m",), [{}]),
        "messages handled within a second": Case(dict([
            bucket("1", "0+10x20"), bucket("60", "0+10x20"), bucket("120", "0+10x20"), bucket("+Inf", "0+10x20")]),
            ("15m",)),
    },
}


def expected(rule: dict[str, Any], labels: dict[str, str]) -> dict[str, Any]:
    """promtool's `exp_alerts` entry: the rule's labels and its annotations with `{{ $labels.x }}` filled in."""
    def fill(text: str) -> str:
        return re.sub(r"\{\{\s*\$labels\.(\w+)\s*\}\}", lambda m: labels.get(m.group(1), ""), text)

    return {"exp_labels": {**rule.get("labels", {}), **labels},
            "exp_annotations": {k: fill(v) for k, v in rule.get("annotations", {}).items()}}


def unit_tests(alerts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    tests = []
    for alert, cases in CASES.items():
        for case in cases.values():
            tests.append({
                "interval": "1m",
                "input_series": [{"series": s, "values": v} for s, v in case.series.items()],
                "alert_rule_test": [{"eval_time": t, "alertname": alert,
                                     "exp_alerts": [expected(alerts[alert], f) for f in case.fires]}
                                    for t in case.at],
            })
    return {"rule_files": ["rules.yml"], "evaluation_interval": "1m", "tests": tests}


# --- tests ------------------------------------------------------------------------------------------------------

def test_every_planned_alert_has_a_failure_and_a_quiet_case() -> None:
    assert set(CASES) == set(planned_alerts())
    for alert, cases in CASES.items():
        assert any(c.fires for c in cases.values()), f"{alert}: no case where it fires"
        assert any(not c.fires for c in cases.values()), f"{alert}: no case where it stays quiet"


@pytest.mark.slow
def test_the_prometheus_rule_passes_promtool_check(promtool: str, tmp_path: Path) -> None:
    (tmp_path / "rules.yml").write_text(yaml.safe_dump({"groups": planned_rule_groups()}))
    result = run(promtool, "check", "rules", "rules.yml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_each_alert_fires_on_its_failure_and_stays_quiet_on_churn(promtool: str, tmp_path: Path) -> None:
    (tmp_path / "rules.yml").write_text(yaml.safe_dump({"groups": planned_rule_groups()}))
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(unit_tests(planned_alerts()), sort_keys=False))
    result = run(promtool, "test", "rules", "tests.yml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]


@pytest.mark.slow
def test_promtool_test_fails_when_a_quiet_case_would_page(promtool: str, tmp_path: Path) -> None:
    """The harness can fail: the summed NodeClaim expression the alerts replaced pages on a long scale-up."""
    groups = planned_rule_groups()
    for group in groups:
        for rule in group["rules"]:
            if rule.get("alert") == "KarpenterNodeClaimsNotLaunched":
                rule["expr"] = 'sum(operator_nodeclaim_status_condition_count{type="Launched",status!="True"}) > 0'
    (tmp_path / "rules.yml").write_text(yaml.safe_dump({"groups": groups}))
    (tmp_path / "tests.yml").write_text(yaml.safe_dump(unit_tests(planned_alerts()), sort_keys=False))
    result = run(promtool, "test", "rules", "tests.yml", cwd=tmp_path)
    assert result.returncode != 0 and "KarpenterNodeClaimsNotLaunched" in result.stdout + result.stderr


@pytest.mark.slow
def test_the_amp_rule_group_namespace_passes_promtool_check(promtool: str, tmp_path: Path) -> None:
    config = stack_config("prod")
    config["eks-karpenter:observability"] = {"enabled": True, "metrics": "ampScraper"}
    (tmp_path / "project").mkdir()
    result = plan_config(config, tmp_path / "project")
    assert result.error is None, result.error
    doc = result.document
    (namespace,) = doc.by_type(RULE_GROUP_NAMESPACE)
    (tmp_path / "rules.yml").write_text(namespace.inputs["data"])
    result = run(promtool, "check", "rules", "rules.yml", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert yaml.safe_load(namespace.inputs["data"])["groups"] == planned_rule_groups()
