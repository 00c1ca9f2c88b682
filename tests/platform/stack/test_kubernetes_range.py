"""The cluster's Kubernetes minor within the Karpenter release's compatibility matrix: from the stack
file for a created cluster, from the `eks:getCluster` look-up for an adopted one, before anything is registered."""

from __future__ import annotations

import json
from typing import Any

from eks_karpenter.config.errors import ConfigError
from eks_karpenter.platform.stack import load_stack_config
from eks_karpenter.platform.version_rules import kubernetes_outside_karpenter
from eks_karpenter.tools.engine import run_plan
from eks_karpenter.tools.engine.mocks import placeholder_answer

from tests.support import REPO, stack_config

CLU = "eks-karpenter:cluster"
KARP = "eks-karpenter:karpenter"
GET_CLUSTER = "aws:eks/getCluster:getCluster"


def problems(config: dict[str, Any]) -> list[str]:
    flat = {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}
    try:
        load_stack_config(flat, "stacks/Pulumi.x.yaml")
    except ConfigError as err:
        return str(err).splitlines()[1:]
    return []


def test_the_matrix() -> None:
    assert kubernetes_outside_karpenter("1.35", "1.12.2") is None
    assert kubernetes_outside_karpenter("1.36", "1.13.1") is None
    assert kubernetes_outside_karpenter("1.36", "1.12.2") == (
        "Karpenter 1.12.2 supports Kubernetes 1.26 to 1.35, not 1.36: use Karpenter 1.14.1")
    assert kubernetes_outside_karpenter("1.25", "1.14.1") == (
        "Karpenter 1.14.1 supports Kubernetes 1.26 to 1.36, not 1.25")
    assert kubernetes_outside_karpenter("1.36", "9.9.9") is None  # the unknown release has its own error


def test_a_created_cluster_beyond_the_karpenter_release_is_refused() -> None:
    config = stack_config("dev")
    config[CLU]["version"] = "1.36"
    config[KARP] = {**config.get(KARP, {}), "version": "1.12.2"}
    assert any(line.startswith(f"stacks/Pulumi.x.yaml: {CLU}.version: Karpenter 1.12.2 supports Kubernetes 1.26 "
                               "to 1.35, not 1.36") for line in problems(config)), problems(config)
    config[KARP]["version"] = "1.13.1"
    assert problems(config) == []


def _adopted(version: str) -> Any:
    def answer(args: dict[str, Any]) -> dict[str, Any]:
        # as the cluster answers it (a recorded fact), not the mocks' placeholder
        return {**placeholder_answer(GET_CLUSTER, dict(args), "eu-west-1", recorded=True), "version": version}
    return answer


def test_an_adopted_cluster_is_checked_from_its_look_up() -> None:
    override = {KARP: json.dumps({**stack_config("brownfield").get(KARP, {}), "version": "1.12.2"})}
    result = run_plan(REPO, "brownfield", invoke_results={GET_CLUSTER: _adopted("1.36")}, config_overrides=override)
    assert isinstance(result.error, ConfigError)
    assert f"{CLU}.existing: the existing cluster runs Kubernetes 1.36: Karpenter 1.12.2 supports" in str(result.error)
    assert [r for r in result.document.resources if r.custom] == []  # refused before anything is registered
    assert run_plan(REPO, "brownfield", invoke_results={GET_CLUSTER: _adopted("1.35")},
                    config_overrides=override).error is None


def test_an_adopted_cluster_without_amis_for_an_alias_is_refused() -> None:
    config = stack_config("brownfield")
    classes = config["eks-karpenter:nodeClasses"]
    classes[0]["amiSelectorTerms"] = [{"alias": "al2@v20250101"}]
    result = run_plan(REPO, "brownfield", invoke_results={GET_CLUSTER: _adopted("1.34")},
                      config_overrides={"eks-karpenter:nodeClasses": json.dumps(classes)})
    assert isinstance(result.error, ConfigError)
    assert "eks-karpenter:nodeClasses[0].amiSelectorTerms[0].alias: EKS publishes no Amazon Linux 2 AMIs" in str(
        result.error)
