"""Every Helm release installs a chart from where it is published: its chart reference (OCI URL and version) is one
that scripts/upstream.lock.json names, so a chart moved or renamed upstream fails here, not in a deploy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from eks_karpenter import versions
from eks_karpenter.tools.engine import PlanDocument
from eks_karpenter.tools.engine.document import PlannedResource

from tests.support import REPO, STACKS, plan_config, plan_stack, stack_config

RELEASE = "kubernetes:helm.sh/v3:Release"
LOCKED_CHARTS = frozenset(entry["oci"] for entry in json.loads(
    (REPO / "scripts" / "upstream.lock.json").read_text())["files"].values() if "oci" in entry)
"""`oci://REGISTRY/REPOSITORY:VERSION` of every chart the lock pulls (scripts/fetch_upstream.py fetches them)."""


def unlocked_releases(plan: PlanDocument) -> list[str]:
    """One line per Helm release whose chart is not a locked OCI chart at a locked version."""
    problems = []
    for release in plan.by_type(RELEASE):
        inputs = release.inputs
        ref = f"{inputs.get('chart')}:{inputs.get('version')}"
        if inputs.get("repositoryOpts"):
            problems.append(f"{release.name}: installs from the Helm repository {inputs['repositoryOpts']}, not "
                            "from a locked OCI chart")
        elif ref not in LOCKED_CHARTS:
            problems.append(f"{release.name}: {ref} is not in scripts/upstream.lock.json")
    return problems


def test_the_lock_names_the_published_charts() -> None:
    # Guards the comparison: the lock's OCI references are the charts' real homes, every supported release's.
    assert f"{versions.NTH_CHART}:{versions.NTH_VERSION}" in LOCKED_CHARTS
    for version in versions.KARPENTER_VERSIONS:
        assert {f"{versions.KARPENTER_CHART}:{version}", f"{versions.KARPENTER_CRD_CHART}:{version}"} <= LOCKED_CHARTS


@pytest.mark.parametrize("stack", STACKS)
def test_every_release_of_every_stack_is_a_locked_chart(stack: str) -> None:
    plan = plan_stack(stack)
    assert plan.by_type(RELEASE)
    assert unlocked_releases(plan) == []


def test_dev_and_brownfield_install_nth_from_its_oci_chart() -> None:
    for stack in ("dev", "brownfield"):
        (nth,) = [r for r in plan_stack(stack).by_type(RELEASE) if r.inputs["name"] == "aws-node-termination-handler"]
        assert nth.inputs["chart"] == "oci://public.ecr.aws/aws-ec2/helm/aws-node-termination-handler", stack


@pytest.mark.parametrize("version", versions.KARPENTER_VERSIONS)
def test_each_supported_karpenter_release_installs_locked_charts(version: str, tmp_path: Path) -> None:
    config = stack_config("dev")
    config["eks-karpenter:karpenter"] = {**config.get("eks-karpenter:karpenter", {}), "version": version}
    result = plan_config(config, tmp_path)
    assert result.error is None, result.error
    plan = result.document
    assert {r.inputs["version"] for r in plan.by_type(RELEASE) if "karpenter" in r.inputs["chart"]} == {version}
    assert unlocked_releases(plan) == []


def _release(**inputs: Any) -> PlannedResource:
    return PlannedResource(urn=f"urn:pulumi:s::p::{RELEASE}::x", type=RELEASE, name="x", parent="", custom=True,
                           inputs={"name": "x", **inputs})


@pytest.mark.parametrize(("inputs", "message"), [
    ({"chart": "aws-node-termination-handler", "version": "0.27.6",
      "repositoryOpts": {"repo": "https://aws.github.io/eks-charts"}}, "installs from the Helm repository"),
    ({"chart": versions.NTH_CHART, "version": "0.27.7"}, f"{versions.NTH_CHART}:0.27.7 is not in"),
    ({"chart": "oci://public.ecr.aws/karpenter/karpenter-renamed", "version": "1.14.1"}, "is not in"),
    ({"chart": versions.KARPENTER_CHART, "version": "1.11.0"}, "karpenter:1.11.0 is not in"),
])
def test_a_release_that_differs_from_the_lock_is_named(inputs: dict[str, Any], message: str) -> None:
    plan = PlanDocument(project="p", stack="s", resources=[_release(**inputs)])
    (problem,) = unlocked_releases(plan)
    assert message in problem
