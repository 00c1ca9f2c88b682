"""Installing onto an existing cluster: where the controller runs, the cluster's authentication mode, and the
existing nodes' security groups."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from eks_karpenter.config.errors import ConfigError
from eks_karpenter.tools import cli
from eks_karpenter.tools.engine import PlanDocument, plan_program, run_plan
from eks_karpenter.tools.engine import mocks as engine_mocks

from tests.support import REPO, invoke_tokens, plan_config, plan_stack, stack_config

RELEASE = "kubernetes:helm.sh/v3:Release"
GET_CLUSTER = "aws:eks/getCluster:getCluster"


def controller_values(doc: PlanDocument) -> dict[str, Any]:
    return dict(doc.get(RELEASE, "karpenter-controller").inputs["values"])


def required_expressions(values: dict[str, Any]) -> list[dict[str, Any]]:
    terms = values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    return [e for t in terms["nodeSelectorTerms"] for e in t["matchExpressions"]]


def test_controller_on_an_existing_cluster_runs_on_the_named_stable_group() -> None:
    values = controller_values(plan_stack("brownfield"))
    assert required_expressions(values) == [{"key": "karpenter.sh/nodepool", "operator": "DoesNotExist"}]
    assert values["nodeSelector"] == {"kubernetes.io/os": "linux", "eks.amazonaws.com/nodegroup": "core"}


@pytest.mark.slow
def test_controller_on_a_created_cluster_still_requires_the_system_group() -> None:
    keys = [e["key"] for e in required_expressions(controller_values(plan_stack("dev")))]
    assert keys == ["karpenter.sh/nodepool", "node-role/system"]


def test_stack_says_where_the_controller_runs() -> None:
    karpenter = {**stack_config("brownfield")["eks-karpenter:karpenter"],
                 "nodeSelector": {"eks.amazonaws.com/nodegroup": "system"},
                 "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "system",
                                  "effect": "NoSchedule"}]}
    doc = plan_program(REPO, "brownfield", config_overrides={"eks-karpenter:karpenter": json.dumps(karpenter)})
    values = controller_values(doc)
    assert values["nodeSelector"] == {"kubernetes.io/os": "linux", "eks.amazonaws.com/nodegroup": "system"}
    assert {"key": "dedicated", "operator": "Equal", "value": "system", "effect": "NoSchedule"} \
        in values["tolerations"]


def test_controller_on_fargate_on_an_existing_cluster_gets_its_profile() -> None:
    karpenter = {**stack_config("brownfield")["eks-karpenter:karpenter"], "controllerOnFargate": True}
    del karpenter["nodeSelector"]  # Fargate nodes carry no node group label
    doc = plan_program(REPO, "brownfield", config_overrides={"eks-karpenter:karpenter": json.dumps(karpenter)})
    [profile] = doc.by_type("aws:eks/fargateProfile:FargateProfile")
    assert profile.inputs["clusterName"] == "legacy-cas"
    assert profile.inputs["selectors"][0]["namespace"] == "kube-system"
    assert profile.urn in doc.get(RELEASE, "karpenter-controller").dependencies


# --- authentication mode -----------------------------------------------------------------------------------------

def cluster_answer(mode: str | None) -> Any:
    def answer(args: dict[str, Any]) -> dict[str, Any]:
        found = engine_mocks.placeholder_answer(GET_CLUSTER, args, "us-west-2", recorded=True)
        found["accessConfigs"] = [] if mode is None else [{"authenticationMode": mode}]
        return found
    return answer


@pytest.mark.parametrize("mode", ["CONFIG_MAP", None])
def test_config_map_only_cluster_is_refused_naming_the_key_before_anything_is_registered(mode: str | None) -> None:
    result = run_plan(REPO, "brownfield", invoke_results={GET_CLUSTER: cluster_answer(mode)})
    assert isinstance(result.error, ConfigError)
    text = str(result.error)
    assert text.startswith("invalid stack config, 1 problem:\nstacks/Pulumi.brownfield.yaml: "
                           "eks-karpenter:cluster.existing: the existing cluster 'legacy-cas' uses authentication "
                           "mode CONFIG_MAP")
    assert "authenticationMode=API_AND_CONFIG_MAP" in text
    assert result.document.resources == []


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["API", "API_AND_CONFIG_MAP"])
def test_access_entry_modes_are_accepted(mode: str) -> None:
    doc = plan_program(REPO, "brownfield", invoke_results={GET_CLUSTER: cluster_answer(mode)})
    assert invoke_tokens(doc).count(GET_CLUSTER) == 1  # looked up once, before anything is registered


def test_cli_prints_the_refusal_as_one_clean_error(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    real = engine_mocks._invoke

    def config_map_only(token: str, args: dict[str, Any], region: str) -> dict[str, Any]:
        found = real(token, args, region)
        if token == GET_CLUSTER:  # as the cluster answers it, not a placeholder
            found["accessConfigs"] = [{"authenticationMode": "CONFIG_MAP"}]
            found["tags"] = {}
        return found

    monkeypatch.setattr(engine_mocks, "_invoke", config_map_only)
    assert cli.main(["plan", "--stack", "brownfield"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("error: invalid stack config, 1 problem:\nstacks/Pulumi.brownfield.yaml: "
                          "eks-karpenter:cluster.existing:")
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 2


# --- existing node security groups -------------------------------------------------------------------------------

def test_existing_node_security_groups_are_attached_alongside_the_cluster_group() -> None:
    doc = plan_stack("brownfield")
    cluster_sg = engine_mocks._invoke(GET_CLUSTER, {"name": "legacy-cas"}, "us-west-2")["vpcConfig"][
        "clusterSecurityGroupId"]
    for node_class in doc.by_type("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"):
        # The adopted cluster's own group by ID (it is not tagged), then the existing nodes' groups.
        assert node_class.inputs["spec"]["securityGroupSelectorTerms"] == [
            {"id": cluster_sg}, {"id": "sg-0a1b2c3d4e5f60718"}]


@pytest.mark.parametrize(("stack", "cluster", "path", "fragment"), [
    ("brownfield", {"nodeSecurityGroupIds": ["sg-12345"]}, "nodeSecurityGroupIds[0]", "pattern"),
    ("brownfield", {"nodeSecurityGroupIds": ["subnet-0a1b2c3d4e5f60718"]}, "nodeSecurityGroupIds[0]", "pattern"),
    ("brownfield", {"nodeSecurityGroupIds": ["sg-0a1b2c3d", "sg-0a1b2c3d"]}, "nodeSecurityGroupIds[1]",
     "listed twice"),
    ("dev", {"nodeSecurityGroupIds": ["sg-0a1b2c3d"]}, "nodeSecurityGroupIds", "only applies to an existing"),
    ("dev", {"preflight": False}, "preflight", "only applies to an existing"),
])
def test_bad_node_security_groups_name_the_key(tmp_path: Path, stack: str, cluster: dict[str, Any], path: str,
                                               fragment: str) -> None:
    config = stack_config(stack)
    config["eks-karpenter:cluster"] = {**config["eks-karpenter:cluster"], **cluster}
    result = plan_config(config, tmp_path, stack=stack)
    assert isinstance(result.error, ConfigError)
    [issue] = result.error.issues
    # The line of the key, or of the list item it indexes, in the stack file as written.
    written = (tmp_path / "stacks" / f"Pulumi.{stack}.yaml").read_text().splitlines()
    key = path.split("[")[0]
    line = next(n for n, text in enumerate(written, start=1) if text.startswith(f"    {key}:"))
    if path.endswith("]"):
        line += int(path[path.index("[") + 1:-1]) + 1
    assert str(result.error).splitlines()[1].startswith(
        f"stacks/Pulumi.{stack}.yaml:{line}: eks-karpenter:cluster.{path}: ")
    assert fragment in issue.message
    assert result.document.resources == []
