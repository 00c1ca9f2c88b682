"""An adopted cluster's own node groups with teams on the cluster: a group whose nodes answer pods on IMDS is
refused unless a taint no team pod may tolerate keeps team pods off. The rule on its own, the look-up against
stubbed AWS answers, and the brownfield plan (offline placeholders warn; recorded answers refuse or pass)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from eks_karpenter.config.errors import ConfigError
from eks_karpenter.platform.access.guardrails import PlatformNodeAccess, platform_taint_keys, team_workload_policy
from eks_karpenter.platform.access.rules import adopted_group_imds_issue
from eks_karpenter.platform.adopted import NODE_GROUP_METADATA_TOKEN, AdoptedGroup

from tests.platform.access.test_tenancy import PLATFORM, TEAM, _pod
from tests.support import invoke_tokens, plan_config, plan_stack, stack_config
from tests.support.admission import admit

AT = ("eks-karpenter:access", "teams")
DEFAULT = "EKS's default launch template"
WORKLOADS = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"


def group(name: str = "core", taints: tuple[tuple[str, str], ...] = (), tokens: str = "optional", hop: int = 2,
          source: str = DEFAULT) -> AdoptedGroup:
    return AdoptedGroup(name, taints, tokens, hop, source)


# --- the rule ---------------------------------------------------------------------------------------------------

def test_an_untainted_group_at_hop_limit_2_is_refused_with_the_ways_out() -> None:
    issue = adopted_group_imds_issue(group(tokens="required"), "legacy-cas", ["batch"], AT)
    assert issue is not None
    assert issue.path == AT and issue.value == ["batch"]
    assert "node group 'core'" in issue.message and "hop limit 2" in issue.message
    for way_out in ("httpTokens required and httpPutResponseHopLimit 1", "taint it NoSchedule",
                    "configure no teams until the migration retires the group"):
        assert way_out in issue.message


def test_imdsv1_is_refused_whatever_the_hop_limit() -> None:
    # IMDSv1's GETs carry no token, so the hop limit does not bound them.
    assert adopted_group_imds_issue(group(hop=1), "legacy-cas", ["batch"], AT) is not None


def test_a_group_at_hop_limit_1_with_imdsv2_only_passes() -> None:
    assert adopted_group_imds_issue(group(tokens="required", hop=1), "legacy-cas", ["batch"], AT) is None


@pytest.mark.parametrize("taint", [("dedicated", "NO_SCHEDULE"), ("dedicated", "NO_EXECUTE")])
def test_a_tainted_group_passes_and_its_taint_is_refused_to_team_pods(taint: tuple[str, str]) -> None:
    tainted = group(taints=(taint,))
    assert adopted_group_imds_issue(tainted, "legacy-cas", ["batch"], AT) is None
    keys = platform_taint_keys(["CriticalAddonsOnly"], [], [tainted])
    assert keys == ("CriticalAddonsOnly", "dedicated")
    policy = team_workload_policy(TEAM, PlatformNodeAccess(**{**PLATFORM.__dict__, "taint_keys": keys}))
    pod = _pod(tolerations=[{"key": "dedicated", "operator": "Exists"}])
    decision = admit(policy, "CREATE", ["system:serviceaccount:kube-system:replicaset-controller"], pod,
                     resource="pods", namespace="batch")
    assert any("may not tolerate the platform's node taints" in m for m in decision.denied), decision.denied


@pytest.mark.parametrize("taint", [("dedicated", "PREFER_NO_SCHEDULE"), ("eks-karpenter/team", "NO_SCHEDULE"),
                                   ("kubernetes.io/arch", "NO_SCHEDULE")])
def test_a_taint_team_pods_may_tolerate_does_not_close_a_group(taint: tuple[str, str]) -> None:
    exposed = group(taints=(taint,))
    assert adopted_group_imds_issue(exposed, "legacy-cas", ["batch"], AT) is not None
    assert platform_taint_keys([], [], [exposed]) == ()


def test_a_closed_groups_taint_is_not_refused_to_team_pods() -> None:
    # Its nodes hand pods nothing, so the cluster owner may open them to teams.
    assert platform_taint_keys([], [], [group(taints=(("dedicated", "NO_SCHEDULE"),), tokens="required",
                                              hop=1)]) == ()


# --- the look-up ------------------------------------------------------------------------------------------------

def test_the_look_up_reads_every_group_and_its_launch_template_version() -> None:
    import boto3
    from botocore.stub import Stubber
    from eks_karpenter.platform.preflight.hook import node_group_metadata

    keys = {"region_name": "us-west-2", "aws_access_key_id": "x", "aws_secret_access_key": "y"}
    eks, ec2 = boto3.client("eks", **keys), boto3.client("ec2", **keys)
    with Stubber(eks) as eks_stub, Stubber(ec2) as ec2_stub:
        eks_stub.add_response("list_nodegroups", {"nodegroups": ["core"], "nextToken": "t"},
                              {"clusterName": "legacy-cas"})
        eks_stub.add_response("list_nodegroups", {"nodegroups": ["spot"]},
                              {"clusterName": "legacy-cas", "nextToken": "t"})
        eks_stub.add_response("describe_nodegroup", {"nodegroup": {
            "nodegroupName": "core", "launchTemplate": {"id": "lt-0abc", "version": "3"},
            "taints": [{"key": "dedicated", "value": "core", "effect": "NO_SCHEDULE"}]}},
            {"clusterName": "legacy-cas", "nodegroupName": "core"})
        ec2_stub.add_response("describe_launch_template_versions", {"LaunchTemplateVersions": [{
            "LaunchTemplateId": "lt-0abc", "VersionNumber": 3, "LaunchTemplateData": {
                "MetadataOptions": {"HttpTokens": "required", "HttpPutResponseHopLimit": 1}}}]},
            {"LaunchTemplateId": "lt-0abc", "Versions": ["3"]})
        eks_stub.add_response("describe_nodegroup", {"nodegroup": {"nodegroupName": "spot"}},
                              {"clusterName": "legacy-cas", "nodegroupName": "spot"})
        answer = node_group_metadata({"clusterName": "legacy-cas", "region": "us-west-2"}, eks, ec2)
    assert answer == {"groups": {
        "core": {"taints": [{"key": "dedicated", "effect": "NO_SCHEDULE"}], "httpTokens": "required", "hopLimit": 1,
                 "source": "launch template lt-0abc version 3"},
        "spot": {"taints": [], "source": DEFAULT}}}
    core, spot = (AdoptedGroup.from_answer(n, a) for n, a in sorted(answer["groups"].items()))
    assert not core.exposed
    # No launch template of the owner's: the least safe of EKS's and EC2's defaults.
    assert (spot.http_tokens, spot.hop_limit, spot.exposed) == ("optional", 2, True)


def test_the_look_up_says_what_failed() -> None:
    import boto3
    from botocore.stub import Stubber
    from eks_karpenter.platform.preflight.hook import node_group_metadata

    keys = {"region_name": "us-west-2", "aws_access_key_id": "x", "aws_secret_access_key": "y"}
    eks, ec2 = boto3.client("eks", **keys), boto3.client("ec2", **keys)
    with Stubber(eks) as stub:
        stub.add_client_error("list_nodegroups", "AccessDeniedException", "not authorized")
        answer = node_group_metadata({"clusterName": "legacy-cas", "region": "us-west-2"}, eks, ec2)
    assert "AccessDeniedException" in answer["error"]


# --- the brownfield plan ----------------------------------------------------------------------------------------

def with_team() -> dict[str, Any]:
    config = stack_config("brownfield")
    config["eks-karpenter:access"] = {**config.get("eks-karpenter:access", {}), "teams": [TEAM.dump()]}
    return config


def answered(**groups: dict[str, Any]) -> dict[str, Any]:
    return {NODE_GROUP_METADATA_TOKEN: {"groups": groups}}


def test_the_shipped_brownfield_stack_has_no_teams_and_reads_no_groups() -> None:
    assert NODE_GROUP_METADATA_TOKEN not in invoke_tokens(plan_stack("brownfield"))


def test_brownfield_with_teams_plans_offline_and_warns_of_each_made_up_group(tmp_path: Path) -> None:
    result = plan_config(with_team(), tmp_path, stack="brownfield")
    assert result.error is None, result.error
    warnings = "\n".join(result.document.warnings)
    for name in ("core", "spot-4vcpu-16gb", "spot-8vcpu-32gb"):
        assert f"offline placeholder facts: eks-karpenter:access.teams: node group {name!r}" in warnings
    assert "node group 'core' (untainted, on EKS's default launch template)" in warnings


def test_brownfield_with_teams_refuses_an_open_group_the_cluster_reports(tmp_path: Path) -> None:
    result = plan_config(with_team(), tmp_path, stack="brownfield", invoke_results=answered(
        core={"taints": [], "httpTokens": "required", "hopLimit": 1, "source": "launch template lt-1 version 1"},
        legacy={"taints": [], "source": DEFAULT}))
    assert isinstance(result.error, ConfigError), result.error
    assert result.document.resources == []
    (line,) = [x for x in str(result.error).splitlines() if "node group" in x]
    assert "eks-karpenter:access.teams" in line and "'legacy'" in line and "'core'" not in line


def test_brownfield_with_teams_passes_a_tainted_group_and_refuses_its_taint(tmp_path: Path) -> None:
    result = plan_config(with_team(), tmp_path, stack="brownfield", invoke_results=answered(
        legacy={"taints": [{"key": "legacy-only", "effect": "NO_SCHEDULE"}], "source": DEFAULT}))
    assert result.error is None, result.error
    (policy,) = [p for p in result.document.by_type(WORKLOADS)
                 if p.inputs["metadata"]["name"] == "eks-karpenter-team-batch-workloads"]
    assert "legacy-only" in json.dumps(policy.inputs["spec"]["validations"])


def test_a_facts_file_answers_with_the_recorded_groups() -> None:
    from eks_karpenter.tools.facts import facts_invoke_results

    found = {"groups": {"legacy": {"taints": [], "httpTokens": "required", "hopLimit": 1, "source": "lt-1"}}}
    results = facts_invoke_results({"nodeGroupMetadata": found}, "us-west-2")
    assert results[NODE_GROUP_METADATA_TOKEN]({}) == found


def test_groups_that_cannot_be_read_refuse_a_stack_with_teams(tmp_path: Path) -> None:
    result = plan_config(with_team(), tmp_path, stack="brownfield", invoke_results={
        NODE_GROUP_METADATA_TOKEN: {"error": "AccessDeniedException: not authorized"}})
    assert isinstance(result.error, ConfigError), result.error
    assert "could not be read (AccessDeniedException" in str(result.error)
    assert "ec2:DescribeLaunchTemplateVersions" in str(result.error)


def test_a_recorded_facts_file_holds_the_groups_with_teams_only() -> None:
    import boto3
    from botocore.stub import Stubber
    from eks_karpenter.tools.facts import record_facts
    from eks_karpenter.tools.project import load_project, validated_stack_config

    from tests.support import REPO

    cfg = validated_stack_config(load_project(REPO), "brownfield")
    keys = {"region_name": "us-west-2", "aws_access_key_id": "x", "aws_secret_access_key": "y"}
    eks, ec2 = boto3.client("eks", **keys), boto3.client("ec2", **keys)
    cluster = {"cluster": {"name": "legacy-cas", "version": "1.34", "endpoint": "https://ABC.example",
                           "certificateAuthority": {"data": "Q0E="}}}
    with Stubber(eks) as stub:
        stub.add_response("describe_cluster", cluster, {"name": "legacy-cas"})
        for _ in range(3):  # core and the migration's two groups, none there
            stub.add_client_error("describe_nodegroup", "ResourceNotFoundException", "none")
        assert "nodeGroupMetadata" not in record_facts(cfg, "eks-karpenter", "brownfield", eks, lambda r: {}, ec2)
    with_teams = cfg.model_copy(update={"access": cfg.access.model_copy(update={"teams": [TEAM]})})
    with Stubber(eks) as stub:
        stub.add_response("describe_cluster", cluster, {"name": "legacy-cas"})
        for _ in range(3):
            stub.add_client_error("describe_nodegroup", "ResourceNotFoundException", "none")
        stub.add_response("list_nodegroups", {"nodegroups": []}, {"clusterName": "legacy-cas"})
        facts = record_facts(with_teams, "eks-karpenter", "brownfield", eks, lambda r: {}, ec2)
    assert facts["nodeGroupMetadata"] == {"groups": {}}


def test_the_groups_are_read_with_the_stacks_aws_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    # A stack deployed through `aws:profile` and `aws:assumeRoles` reads the groups of the account it deploys to,
    # not of the runner's default credentials.
    from eks_karpenter.platform.preflight import hook, lookup
    from eks_karpenter.platform.stack import load_stack_config

    role = "arn:aws:iam::123456789012:role/platform-deploy"
    config = {**with_team(), "aws:assumeRoles": [{"roleArn": role}], "aws:profile": "platform"}
    cfg = load_stack_config({k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()},
                            "stacks/Pulumi.brownfield.yaml")
    asked: list[dict[str, Any]] = []
    monkeypatch.setattr(lookup, "ask_cluster", lambda request, token: asked.append(request) or {"groups": {}})
    assert lookup.adopted_groups(cfg) == ()
    assert (asked[0]["roleArn"], asked[0]["profile"]) == (role, "platform")

    sessions: list[tuple[Any, ...]] = []

    class Session:
        def client(self, service: str) -> Any:
            raise RuntimeError(f"no {service} here")

    monkeypatch.setattr("eks_karpenter.platform.cluster_access.aws_session",
                        lambda *args: sessions.append(args) or Session())
    answer = hook.node_group_metadata({"clusterName": "legacy-cas", "region": "us-west-2", "roleArn": role,
                                       "profile": "platform"})
    assert sessions == [("us-west-2", role, "platform")] and "no eks here" in answer["error"]
