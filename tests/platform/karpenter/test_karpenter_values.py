"""Karpenter install config, its rules, and the Helm values checked against the real 1.14.1 charts (as data)."""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from eks_karpenter import versions
from eks_karpenter.config.errors import Issue, issues_from_validation_error, render_path
from eks_karpenter.labels import IRSA_ANNOTATION, SYSTEM_NODE_LABEL
from eks_karpenter.platform.karpenter.config import (
    FeatureGates,
    KarpenterConfig,
    KarpenterSettings,
    duration_seconds,
    quantity_value,
)
from eks_karpenter.platform.karpenter.rules import validate_karpenter, validate_karpenter_placement
from eks_karpenter.platform.karpenter.values import (
    CRITICAL_ADDONS_TAINT_KEY,
    SERVICE_ACCOUNT,
    controller_values,
    crd_values,
)
from pydantic import ValidationError

from tests.support import UPSTREAM, requires_upstream
from tests.support.helm_keys import (
    KARPENTER_CRD_OPEN_MAPS,
    KARPENTER_OPEN_MAPS,
    MISSING,
    leaf_paths,
    lookup,
    template_reads,
    undefined_keys,
    unread_keys,
)

CHART = UPSTREAM / "charts" / "karpenter"
CRD_CHART = UPSTREAM / "charts" / "karpenter-crd"
AT = ("eks-karpenter:karpenter",)
ROLE_ARN = "arn:aws:iam::123456789012:role/eks-prod-karpenter-controller"
ENDPOINT = "https://0123456789ABCDEF0123456789ABCDEF.gr7.eu-west-1.eks.amazonaws.com"
QUEUE = "eks-prod"

ALL_GATES_FLIPPED = {"nodeRepair": True, "nodeOverlay": True, "reservedCapacity": False,
                     "spotToSpotConsolidation": True, "staticCapacity": True, "capacityBuffer": True}

# name -> (raw stack config for eks-karpenter:karpenter, IRSA role ARN to pass)
CONFIGS: dict[str, tuple[dict[str, Any], str | None]] = {
    "pod-identity": ({}, None),
    "irsa": ({"identity": "irsa"}, ROLE_ARN),
    "fargate-irsa": ({"identity": "irsa", "controllerOnFargate": True}, ROLE_ARN),
    "zonal-shift": ({"zonalShift": True}, None),
    "feature-gates": ({"featureGates": ALL_GATES_FLIPPED}, None),
    "tuned": ({
        "replicas": 3, "logLevel": "debug", "dnsPolicy": "Default", "priorityClassName": "platform-critical",
        "resources": {"requests": {"cpu": "500m", "memory": "768Mi"}, "limits": {"memory": "1Gi"}},
        "settings": {"batchMaxDuration": "20s", "batchIdleDuration": "2s", "preferencePolicy": "Ignore",
                     "minValuesPolicy": "BestEffort", "vmMemoryOverheadPercent": 0.1, "reservedENIs": 1,
                     "isolatedVPC": True, "amiRefreshInterval": "10m", "subnetRefreshInterval": "5m"},
        "nodeRole": {"instanceProfile": True},
    }, None),
}


def config(raw: dict[str, Any] | None = None) -> KarpenterConfig:
    return KarpenterConfig.model_validate(raw or {})


def values_of(name: str, queue: str | None = QUEUE) -> dict[str, Any]:
    raw, arn = CONFIGS[name]
    return controller_values(config(raw), cluster_name="eks-prod", cluster_endpoint=ENDPOINT,
                             interruption_queue_name=queue, irsa_role_arn=arn)


@pytest.fixture(scope="module")
def chart_values(upstream_module: Path) -> dict[str, Any]:
    return dict(yaml.safe_load((CHART / "values.yaml").read_text()))


@pytest.fixture(scope="module")
def crd_chart_values(upstream_module: Path) -> dict[str, Any]:
    return dict(yaml.safe_load((CRD_CHART / "values.yaml").read_text()))


@pytest.fixture(scope="module")
def chart_templates(upstream_module: Path) -> tuple[set[str], set[str]]:
    return template_reads(CHART / "templates")


# --- the values against the real chart ---------------------------------------------------------------------------

@requires_upstream
def test_pinned_version_is_the_chart_the_tests_read() -> None:
    for chart in (CHART, CRD_CHART):
        meta = yaml.safe_load((chart / "Chart.yaml").read_text())
        assert (meta["version"], meta["appVersion"]) == (versions.KARPENTER_VERSION, versions.KARPENTER_VERSION)
    assert config().version == versions.KARPENTER_VERSION


@requires_upstream
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_every_values_key_exists_in_the_chart(name: str, chart_values: dict[str, Any]) -> None:
    assert undefined_keys(values_of(name), chart_values, KARPENTER_OPEN_MAPS) == []


@requires_upstream
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_every_values_key_is_read_by_a_template(name: str, chart_templates: tuple[set[str], set[str]]) -> None:
    reads, verbatim = chart_templates
    assert unread_keys(values_of(name), reads, verbatim) == []


@requires_upstream
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_value_types_match_the_chart_defaults(name: str, chart_values: dict[str, Any]) -> None:
    checked = 0
    for path, value in leaf_paths(values_of(name), KARPENTER_OPEN_MAPS):
        default = lookup(chart_values, path)
        if default is MISSING or default is None:
            continue
        # bool is an int in Python; Helm templates tell them apart (`with false` drops, "false" renders).
        assert type(value) is type(default), f"{path}: {value!r} is {type(value).__name__}, chart default " \
                                             f"{default!r} is {type(default).__name__}"
        checked += 1
    assert checked >= 25


@requires_upstream
def test_checker_reports_misspelt_keys(chart_values: dict[str, Any]) -> None:
    values = copy.deepcopy(values_of("pod-identity"))
    values["settings"]["interuptionQueue"] = QUEUE
    values["settings"]["featureGates"]["nodeRepairs"] = True  # not an open map: each gate is read by name
    values["podDisruptionBudget"]["minAvailable"] = 1          # the chart only knows maxUnavailable
    values["serviceAcount"] = {"name": "karpenter"}
    values["controller"]["resource"] = {"limits": {"memory": "1Gi"}}
    values["replicas"] = {"count": 2}                           # a map where the chart has a scalar
    assert sorted(undefined_keys(values, chart_values, KARPENTER_OPEN_MAPS)) == [
        "controller.resource", "podDisruptionBudget.minAvailable", "replicas.count", "serviceAcount",
        "settings.featureGates.nodeRepairs", "settings.interuptionQueue",
    ]


def test_checker_walks_maps_but_not_open_maps_or_lists() -> None:
    chart = {"a": {"b": 1, "open": {}, "items": [{"x": 1}]}, "c": None}
    values = {"a": {"b": 2, "open": {"anything": {"deep": 1}}, "items": [{"y": 2}], "bee": 3}, "c": {"d": 1}}
    assert undefined_keys(values, chart, {"a.open"}) == ["a.bee", "c.d"]
    assert undefined_keys(values, chart, set()) == ["a.open.anything", "a.bee", "c.d"]
    assert dict(leaf_paths(values, {"a.open"})) == {"a.b": 2, "a.open": {"anything": {"deep": 1}},
                                                   "a.items": [{"y": 2}], "a.bee": 3, "c.d": 1}


@requires_upstream
def test_open_maps_are_exactly_the_maps_the_templates_render_whole(
        chart_values: dict[str, Any], crd_chart_values: dict[str, Any],
        chart_templates: tuple[set[str], set[str]]) -> None:
    _reads, verbatim = chart_templates
    maps = {p for p in verbatim if isinstance(lookup(chart_values, p), dict)}
    # initContainers defaults to {} in values.yaml but is rendered as the pod's initContainers list.
    assert set(KARPENTER_OPEN_MAPS) == maps - {"initContainers"}
    assert "settings.featureGates" not in verbatim
    _crd_reads, crd_verbatim = template_reads(CRD_CHART / "templates")
    assert set(KARPENTER_CRD_OPEN_MAPS) == {p for p in crd_verbatim if isinstance(lookup(crd_chart_values, p), dict)}


@requires_upstream
def test_crd_values_exist_in_the_crd_chart(crd_chart_values: dict[str, Any]) -> None:
    values = crd_values()
    assert undefined_keys(values, crd_chart_values, KARPENTER_CRD_OPEN_MAPS) == []
    assert values["additionalAnnotations"] == {"helm.sh/resource-policy": "keep"}


@requires_upstream
def test_feature_gates_are_the_charts(chart_values: dict[str, Any]) -> None:
    chart_gates = chart_values["settings"]["featureGates"]
    assert FeatureGates().dump() == chart_gates  # same keys, same defaults
    assert values_of("pod-identity")["settings"]["featureGates"] == chart_gates
    assert values_of("feature-gates")["settings"]["featureGates"] == ALL_GATES_FLIPPED
    assert set(ALL_GATES_FLIPPED) == set(chart_gates)


@requires_upstream
def test_settings_are_spelled_and_defaulted_as_in_the_chart(chart_values: dict[str, Any]) -> None:
    emitted = values_of("pod-identity")["settings"]
    for name, field in KarpenterSettings.model_fields.items():
        key = field.alias or name
        assert key in chart_values["settings"], key
        assert emitted[key] == chart_values["settings"][key], key
    assert emitted["enableZonalShift"] is chart_values["settings"]["enableZonalShift"] is False


# --- what the values say -----------------------------------------------------------------------------------------

def test_cluster_and_queue_are_wired_by_name() -> None:
    settings = values_of("pod-identity")["settings"]
    assert (settings["clusterName"], settings["clusterEndpoint"], settings["interruptionQueue"]) == (
        "eks-prod", ENDPOINT, QUEUE)
    assert "interruptionQueue" not in values_of("pod-identity", queue=None)["settings"]


@pytest.mark.parametrize(("queue", "fragment"), [
    ("arn:aws:sqs:eu-west-1:123456789012:eks-prod", "not its ARN"),
    ("https://sqs.eu-west-1.amazonaws.com/123456789012/eks-prod", "not its URL"),
    ("123456789012/eks-prod", "not its URL"),
    ("eks-prod.fifo", "standard SQS queue name"),
    ("", "standard SQS queue name"),
    ("q" * 81, "standard SQS queue name"),
])
def test_queue_arns_urls_and_bad_names_are_refused(queue: str, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        values_of("pod-identity", queue=queue)


@pytest.mark.parametrize(("kwargs", "fragment"), [
    ({"cluster_name": ""}, "cluster_name"),
    ({"cluster_endpoint": "0123.gr7.eu-west-1.eks.amazonaws.com"}, "https://"),
    ({"cluster_endpoint": "http://0123.gr7.eu-west-1.eks.amazonaws.com"}, "https://"),
])
def test_cluster_inputs_are_checked(kwargs: dict[str, str], fragment: str) -> None:
    args: dict[str, Any] = {"cluster_name": "eks-prod", "cluster_endpoint": ENDPOINT,
                            "interruption_queue_name": QUEUE, "irsa_role_arn": None} | kwargs
    with pytest.raises(ValueError, match=fragment):
        controller_values(config(), **args)


def test_irsa_annotation_only_with_irsa() -> None:
    for name in ("irsa", "fargate-irsa"):
        account = values_of(name)["serviceAccount"]
        assert account == {"create": True, "name": SERVICE_ACCOUNT, "annotations": {IRSA_ANNOTATION: ROLE_ARN}}
    for name in ("pod-identity", "zonal-shift", "feature-gates", "tuned"):
        assert values_of(name)["serviceAccount"] == {"create": True, "name": "karpenter"}


def test_identity_and_role_arn_must_agree() -> None:
    irsa = config({"identity": "irsa"})
    common: dict[str, Any] = {"cluster_name": "eks-prod", "cluster_endpoint": ENDPOINT,
                              "interruption_queue_name": QUEUE}
    with pytest.raises(ValueError, match="no controller role ARN"):
        controller_values(irsa, irsa_role_arn=None, **common)
    with pytest.raises(ValueError, match="not an IAM role ARN"):
        controller_values(irsa, irsa_role_arn="arn:aws:iam::123456789012:policy/x", **common)
    with pytest.raises(ValueError, match="podIdentity"):
        controller_values(config(), irsa_role_arn=ROLE_ARN, **common)


def _expression_matches(expr: dict[str, Any], labels: dict[str, str]) -> bool:
    key, op = expr["key"], expr["operator"]
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if op == "In":
        return labels.get(key) in expr["values"]
    if op == "NotIn":
        return labels.get(key) not in expr["values"]
    raise AssertionError(f"operator {op} not simulated")


def schedulable(values: dict[str, Any], labels: dict[str, str], taints: list[dict[str, str]]) -> bool:
    """Whether the pod may land on a node with these labels and taints (required rules only)."""
    if any(labels.get(k) != v for k, v in values["nodeSelector"].items()):
        return False
    terms = values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    if not any(all(_expression_matches(e, labels) for e in term["matchExpressions"]) for term in terms):
        return False  # terms are ORed, expressions within a term ANDed
    for taint in taints:
        if taint["effect"] in ("NoSchedule", "NoExecute") and not any(
                t["key"] == taint["key"] and (t["operator"] == "Exists" or t.get("value") == taint.get("value"))
                for t in values["tolerations"]):
            return False
    return True


Node = tuple[dict[str, str], list[dict[str, str]]]
LINUX = {"kubernetes.io/os": "linux"}
SYSTEM_NODE: Node = (LINUX | {SYSTEM_NODE_LABEL: "true"},
               [{"key": CRITICAL_ADDONS_TAINT_KEY, "value": "true", "effect": "NoSchedule"}])
KARPENTER_NODE: Node = (LINUX | {"karpenter.sh/nodepool": "default"}, [])
KARPENTER_NODE_WITH_SYSTEM_LABEL: Node = (LINUX | {"karpenter.sh/nodepool": "system", SYSTEM_NODE_LABEL: "true"}, [])
SPOT_GROUP_NODE: Node = (LINUX | {"lifecycle": "Ec2Spot"}, [{"key": "spotInstance", "value": "true",
                                                       "effect": "PreferNoSchedule"}])
FARGATE_NODE: Node = (LINUX | {"eks.amazonaws.com/compute-type": "fargate"}, [])


@pytest.mark.parametrize("name", ["pod-identity", "irsa", "zonal-shift", "tuned"])
def test_controller_runs_on_the_system_group_only(name: str) -> None:
    values = values_of(name)
    assert schedulable(values, *SYSTEM_NODE)
    for node in (KARPENTER_NODE, KARPENTER_NODE_WITH_SYSTEM_LABEL, SPOT_GROUP_NODE, FARGATE_NODE):
        assert not schedulable(values, *node), node
    terms = values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [{"matchExpressions": [{"key": "karpenter.sh/nodepool", "operator": "DoesNotExist"},
                                           {"key": "node-role/system", "operator": "In", "values": ["true"]}]}]


def test_controller_on_fargate_drops_the_system_group_term() -> None:
    values = values_of("fargate-irsa")
    assert schedulable(values, *FARGATE_NODE)
    assert not schedulable(values, *KARPENTER_NODE)
    terms = values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [{"matchExpressions": [{"key": "karpenter.sh/nodepool", "operator": "DoesNotExist"}]}]


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_replicas_spread_over_nodes_and_zones(name: str) -> None:
    values = values_of(name)
    assert values["affinity"]["podAntiAffinity"] == {
        "requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "kubernetes.io/hostname"}]}
    assert values["topologySpreadConstraints"] == [
        {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"}]
    assert values["podDisruptionBudget"] == {"name": "karpenter", "maxUnavailable": 1}
    assert values["replicas"] == config(CONFIGS[name][0]).replicas


def test_defaults_render_as_upstream_recommends() -> None:
    values = values_of("pod-identity")
    assert values["controller"] == {"resources": {"requests": {"cpu": "1", "memory": "1Gi"},
                                                  "limits": {"cpu": "1", "memory": "1Gi"}}}
    assert (values["priorityClassName"], values["dnsPolicy"], values["logLevel"], values["replicas"]) == (
        "system-cluster-critical", "ClusterFirst", "info", 2)
    assert values["fullnameOverride"] == "karpenter"
    assert values["settings"]["enableZonalShift"] is False
    assert values_of("zonal-shift")["settings"]["enableZonalShift"] is True


def test_tuned_settings_render() -> None:
    values = values_of("tuned")
    assert values["controller"]["resources"] == {"requests": {"cpu": "500m", "memory": "768Mi"},
                                                 "limits": {"memory": "1Gi"}}
    assert {k: values["settings"][k] for k in ("vmMemoryOverheadPercent", "reservedENIs", "isolatedVPC",
                                               "preferencePolicy", "amiRefreshInterval")} == {
        "vmMemoryOverheadPercent": 0.1, "reservedENIs": "1", "isolatedVPC": True, "preferencePolicy": "Ignore",
        "amiRefreshInterval": "10m"}
    assert (values["dnsPolicy"], values["logLevel"], values["priorityClassName"]) == (
        "Default", "debug", "platform-critical")


def test_values_are_plain_fresh_data() -> None:
    first = values_of("irsa")
    assert json.loads(json.dumps(first)) == first
    first["settings"]["featureGates"]["nodeRepair"] = True
    first["tolerations"].append({"key": "x"})
    assert values_of("irsa") != first
    crd = crd_values()
    crd["additionalAnnotations"].clear()
    assert crd_values()["additionalAnnotations"]


# --- config types and defaults -----------------------------------------------------------------------------------

def test_config_defaults() -> None:
    cfg = config()
    assert cfg.dump() == {
        "version": versions.KARPENTER_VERSION, "namespace": "kube-system", "identity": "podIdentity",
        "controllerOnFargate": False, "nodeSelector": {}, "tolerations": [], "adoptExistingCrds": False,
        "replicas": 2, "logLevel": "info",
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}},
        "featureGates": {"nodeRepair": False, "nodeOverlay": False, "reservedCapacity": True,
                         "spotToSpotConsolidation": False, "staticCapacity": False, "capacityBuffer": False},
        "settings": {"batchMaxDuration": "10s", "batchIdleDuration": "1s", "preferencePolicy": "Respect",
                     "minValuesPolicy": "Strict", "vmMemoryOverheadPercent": 0.075, "reservedENIs": 0,
                     "isolatedVPC": False, "amiRefreshInterval": "1m", "subnetRefreshInterval": "1m"},
        "zonalShift": False, "nodeRole": {"additionalPolicyArns": [], "instanceProfile": False},
        "spotServiceLinkedRole": "auto", "priorityClassName": "system-cluster-critical",
        "deleteTimeout": "15m", "dnsPolicy": "ClusterFirst",
    }
    assert validate_karpenter(cfg, AT) == []


def test_config_round_trips_through_its_own_dump() -> None:
    for raw, _arn in CONFIGS.values():
        cfg = config(raw)
        assert config(cfg.dump()) == cfg


@pytest.mark.parametrize(("raw", "path", "fragment"), [
    ({"version": "v1.14.1"}, "version", "no leading 'v'"),
    ({"version": "1.14"}, "version", "1.14.1"),
    ({"replicas": 0}, "replicas", "greater than or equal to 1"),
    ({"replicas": 11}, "replicas", "less than or equal to 10"),
    ({"logLevel": "warn"}, "logLevel", "'debug', 'info' or 'error'"),
    ({"identity": "irsa2"}, "identity", "'podIdentity' or 'irsa'"),
    ({"namespace": "Kube_System"}, "namespace", "pattern"),
    ({"resources": {"limits": {"memory": "1 GB"}}}, "resources.limits.memory", "quantity"),
    ({"resources": {"requests": {"cpu": "0"}}}, "resources.requests.cpu", "greater than zero"),
    ({"resources": {"requests": {"cpu": True}}}, "resources.requests.cpu", "string"),
    ({"settings": {"batchMaxDuration": "10"}}, "settings.batchMaxDuration", "Go duration"),
    ({"settings": {"interruptionQueue": "x"}}, "settings.interruptionQueue", "Extra inputs"),
    ({"settings": {"vmMemoryOverheadPercent": 1.5}}, "settings.vmMemoryOverheadPercent", "less than 1"),
    ({"settings": {"reservedENIs": -1}}, "settings.reservedENIs", "greater than or equal to 0"),
    ({"featureGates": {"nodeRepairs": True}}, "featureGates.nodeRepairs", "Extra inputs"),
    ({"nodeRole": {"additionalPolicyArns": ["AmazonS3ReadOnlyAccess"]}}, "nodeRole.additionalPolicyArns[0]",
     "pattern"),
    ({"spotServiceLinkedRole": "skip"}, "spotServiceLinkedRole", "'auto', 'create' or 'exists'"),
    ({"zonalshift": True}, "zonalshift", "Extra inputs"),
])
def test_field_errors_name_the_key(raw: dict[str, Any], path: str, fragment: str) -> None:
    with pytest.raises(ValidationError) as err:
        config(raw)
    issues = issues_from_validation_error(err.value, AT)
    assert [render_path(i.path) for i in issues] == [f"eks-karpenter:karpenter.{path}"]
    assert fragment in issues[0].message


def test_numbers_are_accepted_as_quantities() -> None:
    cfg = config({"resources": {"requests": {"cpu": 2, "memory": "2Gi"}, "limits": {"cpu": 2.5, "memory": "2Gi"}}})
    assert (cfg.resources.requests.cpu, cfg.resources.limits.cpu) == ("2", "2.5")


@pytest.mark.parametrize(("text", "amount"), [
    ("1", Decimal(1)), ("500m", Decimal("0.5")), ("1.5", Decimal("1.5")), ("1Gi", Decimal(2**30)),
    ("768Mi", Decimal(768 * 2**20)), ("1G", Decimal(10**9)), ("1e3", Decimal(1000)), ("100k", Decimal(100000)),
])
def test_quantity_value(text: str, amount: Decimal) -> None:
    assert quantity_value(text) == amount


@pytest.mark.parametrize(("text", "seconds"), [
    ("10s", Decimal(10)), ("1m30s", Decimal(90)), ("1.5h", Decimal(5400)), ("250ms", Decimal("0.25")),
    ("0s", Decimal(0)),
])
def test_duration_seconds(text: str, seconds: Decimal) -> None:
    assert duration_seconds(text) == seconds


# --- rules -------------------------------------------------------------------------------------------------------

def issues_of(raw: dict[str, Any]) -> list[tuple[str, str, Any]]:
    return [(render_path(i.path), i.message, i.value) for i in validate_karpenter(config(raw), AT)]


@pytest.mark.parametrize(("raw", "path", "fragment"), [
    ({"controllerOnFargate": True}, "identity", "needs IRSA"),
    ({"version": "1.13.4"}, "version", "supports (its IAM policies, Helm values and CRDs are known for these only): "
     "1.12.2, 1.13.1, 1.14.1"),
    ({"version": "1.14.0"}, "version", "1.12.2, 1.13.1, 1.14.1"),
    ({"version": "0.37.7"}, "version", "1.12.2, 1.13.1, 1.14.1"),
    ({"version": "2.0.0"}, "version", "1.12.2, 1.13.1, 1.14.1"),
    ({"version": "1.12.2", "zonalShift": True}, "zonalShift", "no zonal-shift permission"),
    ({"version": "1.12.2", "settings": {"amiRefreshInterval": "5m"}}, "settings.amiRefreshInterval",
     "Karpenter 1.12.2's chart has no settings.amiRefreshInterval"),
    ({"version": "1.12.2", "settings": {"subnetRefreshInterval": "1m"}}, "settings.subnetRefreshInterval",
     "has no settings.subnetRefreshInterval"),
    ({"version": "1.13.1", "featureGates": {"capacityBuffer": True}}, "featureGates.capacityBuffer",
     "no capacityBuffer feature gate"),
    ({"resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}, "resources.requests.cpu", "above the limit"),
    ({"resources": {"requests": {"cpu": "1", "memory": "1025Mi"}}}, "resources.requests.memory",
     "above the limit"),
    ({"resources": {"limits": {"cpu": "1"}}}, "resources.limits.memory", "GC soft limit"),
    ({"resources": {"requests": {"memory": "1Gi"}, "limits": {"memory": "1Gi"}}}, "resources.requests.cpu",
     "worker pools"),
    ({"settings": {"vmMemoryOverheadPercent": 0}}, "settings.vmMemoryOverheadPercent", "silently uses 0.075"),
    ({"settings": {"batchMaxDuration": "0s"}}, "settings.batchMaxDuration", "longer than zero"),
    ({"settings": {"batchIdleDuration": "0ms"}}, "settings.batchIdleDuration", "longer than zero"),
    ({"settings": {"batchIdleDuration": "15s"}}, "settings.batchIdleDuration", "never takes effect"),
    ({"settings": {"amiRefreshInterval": "30s"}}, "settings.amiRefreshInterval", "at least 1m"),
    ({"settings": {"subnetRefreshInterval": "59s"}}, "settings.subnetRefreshInterval", "at least 1m"),
    ({"settings": {"isolatedVPC": True}}, "nodeRole.instanceProfile", "IAM API"),
    ({"nodeRole": {"additionalPolicyArns": ["arn:aws:iam::123456789012:policy/extra",
                                            "arn:aws:iam::123456789012:policy/extra"]}},
     "nodeRole.additionalPolicyArns[1]", "listed twice"),
    ({"nodeRole": {"additionalPolicyArns": ["arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"]}},
     "nodeRole.additionalPolicyArns[0]", "already attached"),
    ({"deleteTimeout": "30s"}, "deleteTimeout", "between 1m"),
    ({"deleteTimeout": "25h"}, "deleteTimeout", "between 1m"),
])
def test_rules(raw: dict[str, Any], path: str, fragment: str) -> None:
    issues = issues_of(raw)
    assert [p for p, _m, _v in issues] == [f"eks-karpenter:karpenter.{path}"], issues
    assert fragment in issues[0][1]


def test_fargate_with_irsa_and_every_supported_release_are_fine() -> None:
    assert issues_of({"controllerOnFargate": True, "identity": "irsa"}) == []
    for version in versions.KARPENTER_VERSIONS:  # a dev stack may canary another supported release
        assert issues_of({"version": version}) == []
    assert issues_of({"version": "1.13.1", "zonalShift": True, "settings": {"amiRefreshInterval": "5m"}}) == []
    for raw, _arn in CONFIGS.values():
        assert issues_of(raw) == []


def test_fargate_pod_identity_issue_carries_the_value() -> None:
    [issue] = validate_karpenter(config({"controllerOnFargate": True}), AT)
    assert issue == Issue(AT + ("identity",), issue.message, "podIdentity")
    assert issue.render("Pulumi.prod.yaml").startswith("Pulumi.prod.yaml: eks-karpenter:karpenter.identity: ")


@pytest.mark.parametrize(("raw", "min_size", "expected"), [
    ({}, 2, []),
    ({"replicas": 3}, 3, []),
    ({"replicas": 3}, 2, ["eks-karpenter:karpenter.replicas"]),
    ({"replicas": 3, "controllerOnFargate": True, "identity": "irsa"}, 2, []),
])
def test_placement_needs_a_system_node_per_replica(raw: dict[str, Any], min_size: int, expected: list[str]) -> None:
    issues = validate_karpenter_placement(config(raw), system_node_min_size=min_size, at=AT)
    assert [render_path(i.path) for i in issues] == expected


def test_upstream_dir_layout_is_what_the_tests_expect() -> None:
    # Guards the skip marker: if the shared checkout exists, the chart files these tests read must too.
    if UPSTREAM.is_dir():
        for path in (CHART / "values.yaml", CHART / "templates" / "deployment.yaml", CRD_CHART / "values.yaml"):
            assert Path(path).is_file(), path


def test_the_controller_gets_its_region_from_the_environment_not_imds() -> None:
    values = controller_values(config(), cluster_name="eks-prod", cluster_endpoint=ENDPOINT,
                               interruption_queue_name=None, irsa_role_arn=None, region="eu-west-1")
    assert values["controller"]["env"] == [{"name": "AWS_REGION", "value": "eu-west-1"}]


@pytest.mark.parametrize("stack", ["dev", "prod", "brownfield"])
def test_every_stack_gives_the_controller_its_region(stack: str) -> None:
    from tests.support import plan_stack, stack_config

    release = plan_stack(stack).get("kubernetes:helm.sh/v3:Release", "karpenter-controller")
    env = release.inputs["values"]["controller"]["env"]
    assert {"name": "AWS_REGION", "value": stack_config(stack)["aws:region"]} in env
