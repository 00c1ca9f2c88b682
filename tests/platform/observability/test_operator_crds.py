"""Objects of the Prometheus Operator's kinds on a cluster that may not have its CRDs: looked up at preview (offline
the mocks answer as a new cluster, without them), left out with a warning when missing, and the charts' values
derived from the answer, so the first `up` after the operator lands upgrades the releases with their monitors.

On prod's plan, for both answers: no object of a kind whose CRD the cluster lacks is planned unless the CRD is
installed first by this stack (the object depends on the release that installs it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes
import pytest
from eks_karpenter.platform.adopted import CRDS_TOKEN
from eks_karpenter.platform.kube import KubeApi
from eks_karpenter.platform.observability.monitors import OPERATOR_CRDS, OPERATOR_GROUP
from eks_karpenter.platform.preflight.checks import CRD_GROUPS
from eks_karpenter.platform.preflight.probe import crds_answer
from eks_karpenter.tools.engine import PlanDocument, run_plan
from eks_karpenter.tools.engine.mocks import LookupFailed

from tests.support import REPO, invoke_tokens, plan_config, plan_stack, stack_config
from tests.support.fake_kube import FakeCluster

RELEASE, RULE = "kubernetes:helm.sh/v3:Release", "kubernetes:monitoring.coreos.com/v1:PrometheusRule"
GET_CLUSTER = "aws:eks/getCluster:getCluster"
WITH_OPERATOR = {CRDS_TOKEN: {"reachable": True, "crds": sorted(OPERATOR_CRDS.values())}}
ANSWERS = {"new cluster": {}, "operator installed": WITH_OPERATOR}
CRD_RELEASES = {"karpenter-crd": set(CRD_GROUPS)}
"""The releases of this stack that install CRDs, and the API groups of those CRDs."""


def _group(type_: str) -> str:
    """`kubernetes:karpenter.sh/v1:NodePool` -> `karpenter.sh` (core and built-in groups: "")."""
    package, _, _ = type_.removeprefix("kubernetes:").partition(":")
    group = package.rpartition("/")[0]
    return "" if "." not in group or group.endswith(".k8s.io") or group == "helm.sh" else group


def chart_kinds(release: Any) -> set[str]:
    """The operator kinds a release's chart renders from its values (the pinned charts' templates:
    karpenter/templates/servicemonitor.yaml, aws-node-termination-handler/templates/{service,pod}monitor.yaml).
    The Karpenter chart's is counted when asked for, whatever its `.Capabilities` check decides: rendered
    without it, the release would never be rendered again when the CRD appears."""
    values, chart = release.inputs.get("values", {}), str(release.inputs.get("chart", ""))
    kinds = set()
    if "node-termination-handler" in chart and values.get("enablePrometheusServer"):
        queue = values.get("enableSqsTerminationDraining")
        if queue and values.get("serviceMonitor", {}).get("create"):
            kinds.add("ServiceMonitor")
        if not queue and values.get("podMonitor", {}).get("create"):
            kinds.add("PodMonitor")
    elif chart.endswith("karpenter") and values.get("serviceMonitor", {}).get("enabled"):
        kinds.add("ServiceMonitor")
    return kinds


def _ancestors(doc: PlanDocument, urn: str) -> set[str]:
    """Every resource `urn` waits for: its dependencies, its parents' and theirs, transitively."""
    by_urn = {r.urn: r for r in doc.resources}
    seen: set[str] = set()
    todo = [urn]
    while todo:
        r = by_urn.get(todo.pop())
        if r is None:
            continue
        for dep in [*r.dependencies, *r.options.get("dependsOn", []), *([r.parent] if r.parent else [])]:
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


def unmet(doc: PlanDocument, cluster_crds: set[str]) -> list[str]:
    """Objects of a kind whose CRD neither the cluster has nor a release of this stack installs before them."""
    releases = {r.name: r.urn for r in doc.by_type(RELEASE)}
    have_groups = {name.partition(".")[2] for name in cluster_crds}
    problems = []
    for r in doc.resources:
        group = _group(r.type)
        if not group or group in have_groups:
            continue
        installers = {releases[n] for n, groups in CRD_RELEASES.items() if group in groups and n in releases}
        if not installers & _ancestors(doc, r.urn):
            problems.append(f"{r.type} {r.name}: nothing installs {group} first")
    kind_crds = set(cluster_crds)
    for release in doc.by_type(RELEASE):
        for kind in sorted(chart_kinds(release)):
            if OPERATOR_CRDS[kind] not in kind_crds:
                problems.append(f"release {release.name} renders a {kind} without its CRD")
    return problems


def plan(config: dict[str, Any], tmp_path: Path, answer: dict[str, Any]) -> PlanDocument:
    result = plan_config(config, tmp_path, stack="prod", invoke_results=answer)
    assert result.error is None, result.error
    return result.document


def prod_with_nth(mode: str) -> dict[str, Any]:
    config = stack_config("prod")
    config["eks-karpenter:nodeTerminationHandler"] = {"enabled": True, "mode": mode}
    return config


@pytest.mark.slow
@pytest.mark.parametrize("answer", ANSWERS.values(), ids=ANSWERS.keys())
def test_prod_plans_no_object_whose_crd_the_cluster_lacks(answer: dict[str, Any]) -> None:
    doc = run_plan(REPO, "prod", invoke_results=answer).document if answer else plan_stack("prod")
    assert doc.by_type("kubernetes:karpenter.sh/v1:NodePool")  # the check covers the CRDs this stack installs
    crds = set(answer.get(CRDS_TOKEN, {}).get("crds", []))
    assert unmet(doc, crds) == []
    assert bool(doc.by_type(RULE)) == bool(crds)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["queue", "imds"])
@pytest.mark.parametrize("answer", ANSWERS.values(), ids=ANSWERS.keys())
def test_the_termination_handlers_monitor_waits_for_its_crd(mode: str, answer: dict[str, Any],
                                                            tmp_path: Path) -> None:
    doc = plan(prod_with_nth(mode), tmp_path, answer)
    crds = set(answer.get(CRDS_TOKEN, {}).get("crds", []))
    assert unmet(doc, crds) == []
    nth = doc.get(RELEASE, "node-termination-handler-release")
    assert chart_kinds(nth) == ({"ServiceMonitor" if mode == "queue" else "PodMonitor"} if crds else set())


def test_a_new_cluster_is_planned_without_them_and_the_warning_says_what_to_do() -> None:
    doc = plan_stack("prod")
    assert not doc.by_type(RULE)
    assert "serviceMonitor" not in doc.get(RELEASE, "karpenter-controller").inputs["values"]
    [warning] = [w for w in doc.warnings if OPERATOR_GROUP in w]
    assert "planned without the Karpenter chart's ServiceMonitor and the PrometheusRule `karpenter`" in warning
    assert "servicemonitors.monitoring.coreos.com" in warning and "podmonitors" not in warning
    assert "run `pulumi up` again" in warning
    assert invoke_tokens(doc).count(CRDS_TOKEN) == 1


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["queue", "imds"])
def test_the_releases_inputs_change_when_the_operator_lands(mode: str, tmp_path: Path) -> None:
    before = plan(prod_with_nth(mode), tmp_path / "before", {})
    after = plan(prod_with_nth(mode), tmp_path / "after", WITH_OPERATOR)
    for name in ("karpenter-controller", "node-termination-handler-release"):
        assert before.get(RELEASE, name).inputs != after.get(RELEASE, name).inputs, name
    assert after.get(RELEASE, "karpenter-controller").inputs["values"]["serviceMonitor"] == {
        "enabled": True, "additionalLabels": {"release": "kube-prometheus-stack"}}
    assert not [w for w in after.warnings if OPERATOR_GROUP in w]
    # Nothing else moves: the CRD release and the pools are the same.
    assert before.get(RELEASE, "karpenter-crd").inputs == after.get(RELEASE, "karpenter-crd").inputs


@pytest.mark.slow
def test_a_cluster_not_created_yet_is_not_asked() -> None:
    def missing(args: dict[str, Any]) -> dict[str, Any]:
        raise LookupFailed("ResourceNotFoundException: No cluster found for name: prod-karpenter.")

    doc = run_plan(REPO, "prod", invoke_results={GET_CLUSTER: missing}).document
    assert CRDS_TOKEN not in invoke_tokens(doc)
    [warning] = [w for w in doc.warnings if OPERATOR_GROUP in w]
    assert "cluster prod-karpenter is not there to ask (ResourceNotFoundException" in warning
    assert not doc.by_type(RULE)


@pytest.mark.slow
def test_a_preview_whose_api_cannot_be_read_plans_without_them_and_says_why() -> None:
    answer = {CRDS_TOKEN: {"reachable": False, "error": "cannot reach the Kubernetes API"}}
    doc = run_plan(REPO, "prod", invoke_results=answer, preview=True).document
    [warning] = [w for w in doc.warnings if OPERATOR_GROUP in w]
    assert "its CRDs could not be listed: cannot reach the Kubernetes API" in warning


@pytest.mark.slow
def test_an_up_that_cannot_tell_stops_before_deleting_the_rule() -> None:
    """A passing error must not read as "no operator": on a running stack that would delete the alert rule and
    the charts' monitors. Only a cluster that is not there (NotFound) is taken as one without the CRDs."""
    unreadable = {CRDS_TOKEN: {"reachable": False, "error": "the server is currently unable to handle the request"}}
    result = run_plan(REPO, "prod", invoke_results=unreadable)
    assert result.error is not None and "would delete the alert rule" in str(result.error)
    assert not result.document.by_type(RULE)

    def throttled(args: dict[str, Any]) -> dict[str, Any]:
        raise LookupFailed("ThrottlingException: Rate exceeded")

    result = run_plan(REPO, "prod", invoke_results={GET_CLUSTER: throttled})
    assert result.error is not None and "could not be looked up (ThrottlingException" in str(result.error)


@pytest.fixture
def fake() -> Iterator[tuple[FakeCluster, KubeApi]]:
    cluster = FakeCluster([])
    with cluster.serving() as url:
        config = kubernetes.client.Configuration()
        config.host = url
        yield cluster, KubeApi(kubernetes.client.ApiClient(config))


def _crd(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"group": name.partition(".")[2], "versions": [{"name": "v1"}]}}


def test_the_look_up_reads_only_the_groups_asked_for(fake: tuple[FakeCluster, KubeApi]) -> None:
    cluster, api = fake
    assert crds_answer(api, {"groups": [OPERATOR_GROUP]}) == {"reachable": True, "crds": []}
    cluster.crds += [_crd(OPERATOR_CRDS["ServiceMonitor"]), _crd("nodepools.karpenter.sh")]
    assert crds_answer(api, {"groups": [OPERATOR_GROUP]}) == {
        "reachable": True, "crds": ["servicemonitors.monitoring.coreos.com"]}


@pytest.mark.slow
def test_an_adopted_cluster_is_asked_through_its_api_and_planned_with_what_it_has(tmp_path: Path) -> None:
    config = stack_config("brownfield")
    config["eks-karpenter:observability"] = {"enabled": True, "monitorLabels": {"release": "prom"}}
    only_monitors = {CRDS_TOKEN: {"reachable": True, "crds": [OPERATOR_CRDS["ServiceMonitor"],
                                                             OPERATOR_CRDS["PodMonitor"]]}}
    doc = plan(config, tmp_path, only_monitors)
    [ask] = [i for i in doc.invokes if i.token == CRDS_TOKEN]
    assert ask.args["groups"] == [OPERATOR_GROUP] and ask.args["endpoint"].startswith("https://")
    assert unmet(doc, set(only_monitors[CRDS_TOKEN]["crds"])) == []
    assert doc.get(RELEASE, "karpenter-controller").inputs["values"]["serviceMonitor"]["enabled"] is True
    assert chart_kinds(doc.get(RELEASE, "node-termination-handler-release")) == {"PodMonitor"}
    assert not doc.by_type(RULE)
    [warning] = [w for w in doc.warnings if OPERATOR_GROUP in w]
    assert "lacks the Prometheus Operator's CRDs prometheusrules.monitoring.coreos.com:" in warning


@pytest.mark.slow
def test_without_the_operator_nothing_is_looked_up(tmp_path: Path) -> None:
    config = stack_config("prod")
    config["eks-karpenter:observability"] = {"enabled": True, "metrics": "ampScraper"}
    doc = plan(config, tmp_path, {})
    assert CRDS_TOKEN not in invoke_tokens(doc)
    assert not [w for w in doc.warnings if OPERATOR_GROUP in w]
