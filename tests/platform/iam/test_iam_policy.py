"""Karpenter IAM documents: equivalence with upstream's getting-started template, scoping, size, trust policies."""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from eks_karpenter.arns import partition_of
from eks_karpenter.platform.iam.policy import (
    NODE_MANAGED_POLICIES,
    PolicyScope,
    aws_managed_policy_arn,
    controller_policies,
    dns_suffix,
    irsa_trust_policy,
    node_trust_policy,
    pod_identity_trust_policy,
)

from tests.support import UPSTREAM, requires_upstream
from tests.support.iam import MANAGED_POLICY_SIZE_LIMIT, all_actions, policy_size

TEMPLATE = UPSTREAM / "karpenter" / "karpenter-getting-started-cloudformation.yaml"
ACCOUNT = "111122223333"
ALL_NAMES = ["NodeLifecycle", "IAMIntegration", "EKSIntegration", "Interruption", "ResourceDiscovery", "ZonalShift"]
REGIONS = ["eu-west-1", "cn-north-1", "us-gov-west-1"]
READ_VERBS = ("Describe", "Get", "List")


def make_scope(
    region: str = "eu-west-1",
    cluster: str = "prod-eu",
    *,
    queue: bool = True,
    zonal_shift: bool = True,
    role_path: str = "/",
) -> PolicyScope:
    partition = partition_of(region)
    return PolicyScope(
        cluster_name=cluster,
        region=region,
        account_id=ACCOUNT,
        node_role_arn=f"arn:{partition}:iam::{ACCOUNT}:role{role_path}KarpenterNodeRole-{cluster[:40]}",
        interruption_queue_arn=f"arn:{partition}:sqs:{region}:{ACCOUNT}:{cluster[:80]}" if queue else None,
        zonal_shift=zonal_shift,
    )


def as_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else value


def statements(scope: PolicyScope) -> Iterator[dict[str, Any]]:
    for document in controller_policies(scope).values():
        yield from document["Statement"]


def condition_entries(statement: dict[str, Any], operator: str) -> dict[str, Any]:
    return dict(statement.get("Condition", {}).get(operator, {}))


# --- upstream template -------------------------------------------------------------------------------------------


class CfnLoader(yaml.SafeLoader):
    """Safe YAML loader that reads CloudFormation's short-form intrinsics (!Sub, !Ref, !GetAtt...) as plain values."""


def _plain(loader: yaml.SafeLoader, _suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    assert isinstance(node, yaml.MappingNode)
    return loader.construct_mapping(node, deep=True)


CfnLoader.add_multi_constructor("!", _plain)


@functools.cache
def upstream_template() -> dict[str, Any]:
    loaded = yaml.load(TEMPLATE.read_text(), Loader=CfnLoader)  # a SafeLoader subclass: safe
    assert isinstance(loaded, dict)
    return loaded


def substitute(text: str, scope: PolicyScope) -> str:
    """Fill a !Sub string with the scope's values; an unknown placeholder fails the test."""
    values = {
        "ClusterName": scope.cluster_name,
        "AWS::Partition": scope.partition,
        "AWS::Region": scope.region,
        "AWS::AccountId": scope.account_id,
        "AWS::URLSuffix": dns_suffix(scope.partition),
        "KarpenterNodeRole.Arn": scope.node_role_arn,
        "KarpenterInterruptionQueue.Arn": scope.interruption_queue_arn or "",
    }
    return re.sub(r"\$\{([^}]+)\}", lambda m: values[m.group(1)], text)


def upstream_policies(scope: PolicyScope) -> dict[str, dict[str, Any]]:
    """Upstream's controller policy documents by short name (logical id without "Policy"), filled for `scope`."""
    return {
        logical.removesuffix("Policy"): json.loads(substitute(resource["Properties"]["PolicyDocument"], scope))
        for logical, resource in upstream_template()["Resources"].items()
        if resource["Type"] == "AWS::IAM::ManagedPolicy"
    }


def normalise(statement: dict[str, Any]) -> dict[str, Any]:
    """A statement with every list sorted and every lone string made a list (IAM treats both the same)."""
    out: dict[str, Any] = {key: value for key, value in statement.items() if key not in ("Action", "Resource")}
    for key in ("Action", "Resource"):
        if key in statement:
            out[key] = sorted(as_list(statement[key]))
    if "Condition" in statement:
        out["Condition"] = {
            operator: {key: sorted(as_list(value)) for key, value in entries.items()}
            for operator, entries in statement["Condition"].items()
        }
    return out


@requires_upstream
def test_upstream_template_has_the_six_controller_policies() -> None:
    # Guards the comparisons below: a renamed or missing upstream policy must not make them vacuous.
    assert sorted(upstream_policies(make_scope())) == sorted(ALL_NAMES)


@requires_upstream
def test_actions_equal_upstream() -> None:
    ours = all_actions(controller_policies(make_scope()).values())
    theirs = all_actions(upstream_policies(make_scope()).values())
    assert len(theirs) > 30
    assert ours == theirs, f"missing: {sorted(theirs - ours)}, extra: {sorted(ours - theirs)}"


@requires_upstream
@pytest.mark.parametrize("name", ALL_NAMES)
def test_sids_actions_and_condition_keys_match_upstream(name: str) -> None:
    scope = make_scope()
    ours = controller_policies(scope)[name]
    theirs = upstream_policies(scope)[name]
    assert ours["Version"] == theirs["Version"] == "2012-10-17"
    assert [s["Sid"] for s in ours["Statement"]] == [s["Sid"] for s in theirs["Statement"]]
    for mine, upstream in zip(ours["Statement"], theirs["Statement"], strict=True):
        sid = mine["Sid"]
        assert mine["Effect"] == upstream["Effect"], sid
        assert set(as_list(mine["Action"])) == set(as_list(upstream["Action"])), sid
        mine_keys = {op: set(entries) for op, entries in mine.get("Condition", {}).items()}
        upstream_keys = {op: set(entries) for op, entries in upstream.get("Condition", {}).items()}
        assert mine_keys == upstream_keys, sid


@requires_upstream
@pytest.mark.parametrize("region", REGIONS)
def test_statements_equal_upstream_after_substitution(region: str) -> None:
    # Resources and condition values too, in the commercial, China and GovCloud partitions.
    scope = make_scope(region, role_path="/karpenter/")
    ours, theirs = controller_policies(scope), upstream_policies(scope)
    for name in ALL_NAMES:
        mine, upstream = ours[name]["Statement"], theirs[name]["Statement"]
        assert [normalise(s) for s in mine] == [normalise(s) for s in upstream], name


@requires_upstream
def test_node_role_matches_upstream() -> None:
    role = upstream_template()["Resources"]["KarpenterNodeRole"]["Properties"]
    for region in REGIONS:
        scope = make_scope(region)
        upstream = json.loads(substitute(json.dumps(role["AssumeRolePolicyDocument"]), scope))
        ours = node_trust_policy(scope.partition)
        assert ours["Version"] == upstream["Version"]
        assert [normalise(s) for s in ours["Statement"]] == [normalise(s) for s in upstream["Statement"]]
        managed = {substitute(arn, scope) for arn in role["ManagedPolicyArns"]}
        assert managed == {aws_managed_policy_arn(scope.partition, name) for name in NODE_MANAGED_POLICIES}


# --- partitions ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("region", "partition"),
    [
        ("us-east-1", "aws"),
        ("eu-west-1", "aws"),
        ("ap-southeast-7", "aws"),
        ("mx-central-1", "aws"),
        ("cn-north-1", "aws-cn"),
        ("cn-northwest-1", "aws-cn"),
        ("us-gov-west-1", "aws-us-gov"),
        ("us-gov-east-1", "aws-us-gov"),
        ("us-iso-east-1", "aws-iso"),
        ("us-isob-east-1", "aws-iso-b"),
        ("eu-isoe-west-1", "aws-iso-e"),
        ("us-isof-south-1", "aws-iso-f"),
        ("eusc-de-east-1", "aws-eusc"),
    ],
)
def test_partition_of(region: str, partition: str) -> None:
    assert partition_of(region) == partition
    assert dns_suffix(partition)  # every partition we name has a suffix


@pytest.mark.parametrize("region", ["", "useast1", "us-east-1a", "US-EAST-1", "us-east", " us-east-1", "cn-north-1\n"])
def test_partition_of_rejects_non_regions(region: str) -> None:
    with pytest.raises(ValueError, match="not an AWS region"):
        partition_of(region)


def test_dns_suffix() -> None:
    assert dns_suffix("aws") == "amazonaws.com"
    assert dns_suffix("aws-us-gov") == "amazonaws.com"
    assert dns_suffix("aws-cn") == "amazonaws.com.cn"
    with pytest.raises(ValueError, match="unknown AWS partition"):
        dns_suffix("aws-moon")


def test_aws_managed_policy_arn() -> None:
    assert aws_managed_policy_arn("aws", "AmazonEKS_CNI_Policy") == "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy"
    assert aws_managed_policy_arn("aws-cn", "AmazonSSMManagedInstanceCore") == (
        "arn:aws-cn:iam::aws:policy/AmazonSSMManagedInstanceCore"
    )
    assert NODE_MANAGED_POLICIES == (
        "AmazonEKSWorkerNodePolicy",
        "AmazonEKS_CNI_Policy",
        "AmazonEC2ContainerRegistryPullOnly",
        "AmazonSSMManagedInstanceCore",
    )


# --- scope validation ----------------------------------------------------------------------------------------------


def test_scope_accepts_role_paths_and_long_names() -> None:
    scope = make_scope("us-gov-west-1", "a" + "b" * 99, role_path="/platform/karpenter/")
    assert scope.partition == "aws-us-gov"
    assert scope.cluster_arn == f"arn:aws-us-gov:eks:us-gov-west-1:{ACCOUNT}:cluster/a{'b' * 99}"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"cluster_name": "-leading-hyphen"}, "EKS cluster name"),
        ({"cluster_name": "c" * 101}, "EKS cluster name"),
        ({"cluster_name": "has space"}, "EKS cluster name"),
        ({"cluster_name": "wild*"}, "EKS cluster name"),
        ({"region": "eu-west-1a"}, "AWS region"),
        ({"account_id": "12345678901"}, "12 digits"),
        ({"account_id": "12345678901a"}, "12 digits"),
        ({"account_id": "١١١١٢٢٢٢٣٣٣٣"}, "12 digits"),  # Unicode digits are not an account id
        ({"node_role_arn": "*"}, "IAM role ARN"),
        ({"node_role_arn": f"arn:aws:iam::{ACCOUNT}:role/*"}, "IAM role ARN"),
        ({"node_role_arn": f"arn:aws:iam::{ACCOUNT}:role/*/KarpenterNodeRole"}, "IAM role ARN"),
        ({"node_role_arn": f"arn:aws:iam::{ACCOUNT}:role/team?/KarpenterNodeRole"}, "IAM role ARN"),
        ({"node_role_arn": f"arn:aws:iam::{ACCOUNT}:user/KarpenterNodeRole"}, "IAM role ARN"),
        ({"node_role_arn": "arn:aws:iam::444455556666:role/KarpenterNodeRole"}, "IAM role ARN"),
        ({"node_role_arn": f"arn:aws-cn:iam::{ACCOUNT}:role/KarpenterNodeRole"}, "IAM role ARN"),
        ({"node_role_arn": f"arn:aws:iam::{ACCOUNT}:role/{'n' * 65}"}, "IAM role ARN"),
        ({"interruption_queue_arn": f"arn:aws:sqs:eu-west-2:{ACCOUNT}:q"}, "SQS queue ARN"),
        ({"interruption_queue_arn": "arn:aws:sqs:eu-west-1:444455556666:q"}, "SQS queue ARN"),
        ({"interruption_queue_arn": f"arn:aws:sqs:eu-west-1:{ACCOUNT}:*"}, "SQS queue ARN"),
        ({"interruption_queue_arn": ""}, "SQS queue ARN"),
    ],
)
def test_scope_rejects_bad_values(changes: dict[str, str], message: str) -> None:
    fields = {
        "cluster_name": "prod",
        "region": "eu-west-1",
        "account_id": ACCOUNT,
        "node_role_arn": f"arn:aws:iam::{ACCOUNT}:role/KarpenterNodeRole-prod",
        "interruption_queue_arn": f"arn:aws:sqs:eu-west-1:{ACCOUNT}:prod",
    }
    PolicyScope(**fields)  # the baseline is valid, so each case fails for its own change only
    with pytest.raises(ValueError, match=message):
        PolicyScope(**{**fields, **changes})


# --- size ------------------------------------------------------------------------------------------------------------


def test_policy_size_counts_compact_json() -> None:
    document = {"Version": "2012-10-17", "Statement": []}
    assert policy_size(document) == len('{"Version":"2012-10-17","Statement":[]}')
    assert policy_size({"a": "é"}) == 9  # characters, not escape sequences
    full = controller_policies(make_scope())["NodeLifecycle"]
    assert policy_size(full) < len(json.dumps(full, indent=2))


@pytest.mark.parametrize("region", ["ap-southeast-7", "us-gov-west-1", "cn-northwest-1"])
def test_worst_case_policies_fit_managed_policy_limit(region: str) -> None:
    partition = partition_of(region)
    cluster = "c" + "x" * 99  # EKS maximum: 100 characters
    role_path = "/" + "/".join(["p" * 50] * 10) + "/"  # 511 of IAM's 512 path characters
    scope = PolicyScope(
        cluster_name=cluster,
        region=region,
        account_id="999988887777",
        node_role_arn=f"arn:{partition}:iam::999988887777:role{role_path}{'r' * 64}",
        interruption_queue_arn=f"arn:{partition}:sqs:{region}:999988887777:{'q' * 80}",
        zonal_shift=True,
    )
    documents = controller_policies(scope)
    assert list(documents) == ALL_NAMES
    sizes = {name: policy_size(document) for name, document in documents.items()}
    assert all(size < MANAGED_POLICY_SIZE_LIMIT for size in sizes.values()), sizes
    # The long inputs really are in the documents (else this test would prove nothing).
    assert cluster in json.dumps(documents["NodeLifecycle"])
    assert scope.node_role_arn in json.dumps(documents["IAMIntegration"])


# --- scoping ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("region", REGIONS)
def test_pass_role_only_for_the_node_role_and_ec2(region: str) -> None:
    scope = make_scope(region, role_path="/nodes/")
    granting = [s for s in statements(scope) if "iam:PassRole" in as_list(s["Action"])]
    assert len(granting) == 1
    (statement,) = granting
    assert statement["Resource"] == scope.node_role_arn
    assert set(statement["Condition"]["StringEquals"]["iam:PassedToService"]) >= {
        f"ec2.{dns_suffix(scope.partition)}"
    }
    assert set(statement["Condition"]) == {"StringEquals"}


def test_pass_role_principals_in_isolated_partitions() -> None:
    scope = make_scope("us-iso-east-1", queue=False)
    (statement,) = [s for s in statements(scope) if s["Sid"] == "AllowPassingInstanceRole"]
    assert "ec2.c2s.ic.gov" in statement["Condition"]["StringEquals"]["iam:PassedToService"]


@pytest.mark.parametrize("region", REGIONS)
def test_no_wildcard_actions_and_star_resources_only_for_reads(region: str) -> None:
    for statement in statements(make_scope(region)):
        actions = as_list(statement["Action"])
        assert statement["Effect"] == "Allow"
        assert not any("*" in action for action in actions), statement["Sid"]
        if "*" in as_list(statement["Resource"]):
            reads = [a.split(":", 1)[1].startswith(READ_VERBS) for a in actions]
            assert all(reads), f"{statement['Sid']} grants writes on *"


@pytest.mark.parametrize("region", REGIONS)
def test_sqs_only_on_the_queue(region: str) -> None:
    scope = make_scope(region)
    sqs = [s for s in statements(scope) if any(a.startswith("sqs:") for a in as_list(s["Action"]))]
    assert sqs
    for statement in sqs:
        assert statement["Resource"] == scope.interruption_queue_arn
        assert all(a.startswith("sqs:") for a in as_list(statement["Action"]))


@pytest.mark.parametrize("region", REGIONS)
def test_ssm_only_public_parameters(region: str) -> None:
    scope = make_scope(region)
    ssm = [s for s in statements(scope) if any(a.startswith("ssm:") for a in as_list(s["Action"]))]
    assert [as_list(s["Action"]) for s in ssm] == [["ssm:GetParameter"]]
    assert ssm[0]["Resource"] == f"arn:{scope.partition}:ssm:{region}::parameter/aws/service/*"


@pytest.mark.parametrize("region", REGIONS)
def test_describe_cluster_only_on_the_cluster(region: str) -> None:
    scope = make_scope(region)
    eks = [s for s in statements(scope) if any(a.startswith("eks:") for a in as_list(s["Action"]))]
    assert [as_list(s["Action"]) for s in eks] == [["eks:DescribeCluster"]]
    assert eks[0]["Resource"] == f"arn:{scope.partition}:eks:{region}:{ACCOUNT}:cluster/prod-eu"


@pytest.mark.parametrize("region", REGIONS)
def test_launches_with_templates_or_instances_need_the_cluster_tag(region: str) -> None:
    scope = make_scope(region)
    owned_keys = {f"aws:{kind}/kubernetes.io/cluster/prod-eu" for kind in ("ResourceTag", "RequestTag")}
    checked = 0
    for statement in statements(scope):
        launches = {"ec2:RunInstances", "ec2:CreateFleet"} & set(as_list(statement["Action"]))
        owned_types = [r for r in as_list(statement["Resource"]) if re.search(r":(launch-template|instance)/", r)]
        if launches and owned_types:
            checked += 1
            equals = condition_entries(statement, "StringEquals")
            assert any(equals.get(key) == "owned" for key in owned_keys), statement["Sid"]
            like = condition_entries(statement, "StringLike")
            assert any(key.endswith("/karpenter.sh/nodepool") and v == "*" for key, v in like.items()), statement["Sid"]
    assert checked == 2  # the launch-template statement and the tagged-creation statement


@pytest.mark.parametrize("region", REGIONS)
def test_every_write_on_owned_resource_types_is_tag_scoped(region: str) -> None:
    # Writes may skip the ownership tag only on what a launch merely references (images, subnets, ...)
    # and for PassRole, which is scoped by ARN instead.
    referenced = ("image", "snapshot", "security-group", "subnet", "capacity-reservation", "placement-group")
    scope = make_scope(region)
    for statement in statements(scope):
        actions = as_list(statement["Action"])
        writes = [a for a in actions if not a.split(":", 1)[1].startswith(READ_VERBS)]
        resources = as_list(statement["Resource"])
        if not writes or actions == ["iam:PassRole"] or resources == [scope.interruption_queue_arn]:
            continue
        if all(re.search(rf":({'|'.join(referenced)})/\*$", r) for r in resources):
            continue
        equals = condition_entries(statement, "StringEquals")
        assert any(k.endswith("kubernetes.io/cluster/prod-eu") and v == "owned" for k, v in equals.items()), (
            statement["Sid"]
        )


@pytest.mark.parametrize(
    ("region", "partition"),
    [
        ("eu-west-1", "aws"),
        ("ap-southeast-7", "aws"),
        ("cn-north-1", "aws-cn"),
        ("us-gov-west-1", "aws-us-gov"),
        ("us-isob-east-1", "aws-iso-b"),
    ],
)
def test_arns_use_the_partition_region_and_account(region: str, partition: str) -> None:
    scope = make_scope(region)
    assert scope.partition == partition
    for statement in statements(scope):
        for arn in as_list(statement["Resource"]):
            if arn == "*":
                continue
            assert arn.startswith(f"arn:{partition}:"), arn
            service = arn.split(":")[2]
            if service in ("ec2", "ssm", "eks", "sqs"):
                assert arn.split(":")[3] == region, arn
            if service in ("iam", "eks", "sqs"):
                assert arn.split(":")[4] == ACCOUNT, arn
    text = json.dumps(controller_policies(scope))
    other_partitions = {"aws", "aws-cn", "aws-us-gov", "aws-iso-b"} - {partition}
    assert not any(f"arn:{p}:" in text for p in other_partitions)


@pytest.mark.parametrize("region", REGIONS)
def test_reads_are_pinned_to_the_region_and_zonal_shift_to_the_cluster(region: str) -> None:
    scope = make_scope(region)
    by_sid = {s["Sid"]: s for s in statements(scope)}
    assert by_sid["AllowRegionalReadActions"]["Condition"] == {"StringEquals": {"aws:RequestedRegion": region}}
    assert by_sid["AllowZonalShiftStatusReadOnly"]["Condition"] == {
        "StringEquals": {"arc-zonal-shift:ResourceIdentifier": scope.cluster_arn}
    }
    profile_tags = condition_entries(by_sid["AllowScopedInstanceProfileCreationActions"], "StringEquals")
    assert profile_tags["aws:RequestTag/topology.kubernetes.io/region"] == region
    assert profile_tags["aws:RequestTag/eks:eks-cluster-name"] == "prod-eu"


# --- optional policies -----------------------------------------------------------------------------------------------


def test_interruption_policy_only_with_a_queue() -> None:
    without = controller_policies(make_scope(queue=False, zonal_shift=True))
    assert list(without) == ["NodeLifecycle", "IAMIntegration", "EKSIntegration", "ResourceDiscovery", "ZonalShift"]
    assert not any(a.startswith("sqs:") for a in all_actions(without.values()))
    with_queue = controller_policies(make_scope(queue=True, zonal_shift=True))
    assert list(with_queue) == ALL_NAMES


def test_zonal_shift_policy_only_when_enabled() -> None:
    default = controller_policies(
        PolicyScope("prod", "eu-west-1", ACCOUNT, f"arn:aws:iam::{ACCOUNT}:role/KarpenterNodeRole-prod")
    )
    assert list(default) == ["NodeLifecycle", "IAMIntegration", "EKSIntegration", "ResourceDiscovery"]
    assert not any(a.startswith("arc-zonal-shift:") for a in all_actions(default.values()))
    assert "ZonalShift" in controller_policies(make_scope(queue=False, zonal_shift=True))


# --- trust policies ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("partition", "principal"),
    [("aws", "ec2.amazonaws.com"), ("aws-us-gov", "ec2.amazonaws.com"), ("aws-cn", "ec2.amazonaws.com.cn")],
)
def test_node_trust_policy(partition: str, principal: str) -> None:
    assert node_trust_policy(partition) == {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": principal}, "Action": "sts:AssumeRole"}],
    }


def test_pod_identity_trust_policy() -> None:
    (statement,) = pod_identity_trust_policy()["Statement"]
    assert statement["Effect"] == "Allow"
    assert statement["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert sorted(statement["Action"]) == ["sts:AssumeRole", "sts:TagSession"]
    assert "Condition" not in statement


@pytest.mark.parametrize("issuer_prefix", ["", "https://"])
def test_irsa_trust_policy(issuer_prefix: str) -> None:
    issuer = "oidc.eks.eu-west-1.amazonaws.com/id/ABCDEF0123456789"
    provider = f"arn:aws:iam::{ACCOUNT}:oidc-provider/{issuer}"
    document = irsa_trust_policy(provider, issuer_prefix + issuer, "kube-system", "karpenter")
    (statement,) = document["Statement"]
    assert document["Version"] == "2012-10-17"
    assert statement["Principal"] == {"Federated": provider}
    assert statement["Action"] == "sts:AssumeRoleWithWebIdentity"
    assert statement["Condition"] == {
        "StringEquals": {
            f"{issuer}:sub": "system:serviceaccount:kube-system:karpenter",
            f"{issuer}:aud": "sts.amazonaws.com",
        }
    }


@pytest.mark.parametrize(
    "args",
    [
        ("arn:aws:iam::111122223333:oidc-provider/x", "", "kube-system", "karpenter"),
        ("arn:aws:iam::111122223333:oidc-provider/x", "oidc.example/id/1", "", "karpenter"),
        ("arn:aws:iam::111122223333:oidc-provider/x", "oidc.example/id/1", "kube-system", ""),
        ("arn:aws:iam::111122223333:role/not-a-provider", "oidc.example/id/1", "kube-system", "karpenter"),
    ],
)
def test_irsa_trust_policy_rejects_incomplete_input(args: tuple[str, str, str, str]) -> None:
    with pytest.raises(ValueError):
        irsa_trust_policy(*args)


# --- shape ------------------------------------------------------------------------------------------------------------


def test_documents_are_json_and_deterministic() -> None:
    first, second = controller_policies(make_scope()), controller_policies(make_scope())
    assert json.loads(json.dumps(first)) == first  # only JSON types (a tuple would come back as a list)
    assert json.dumps(first) == json.dumps(second)
    for document in first.values():
        sids = [s["Sid"] for s in document["Statement"]]
        assert len(sids) == len(set(sids))
        assert all(re.fullmatch(r"[A-Za-z0-9]+", sid) for sid in sids)  # IAM's Sid alphabet


def test_documents_share_no_mutable_state() -> None:
    first = controller_policies(make_scope())
    containers: list[int] = []

    def collect(value: Any) -> None:
        if isinstance(value, dict | list):
            containers.append(id(value))
            for child in value.values() if isinstance(value, dict) else value:
                collect(child)

    collect(first)
    assert len(containers) == len(set(containers)), "a list or dict is reused inside the documents"
    first["NodeLifecycle"]["Statement"][0]["Resource"].append("*")
    assert "*" not in controller_policies(make_scope())["NodeLifecycle"]["Statement"][0]["Resource"]


def test_all_actions_reads_allow_statements_only() -> None:
    document = {
        "Statement": [
            {"Effect": "Allow", "Action": "a:One", "Resource": "*"},
            {"Effect": "Allow", "Action": ["a:Two", "a:Three"], "Resource": "*"},
            {"Effect": "Deny", "Action": "a:Four", "Resource": "*"},
        ]
    }
    assert all_actions([document]) == {"a:One", "a:Two", "a:Three"}


# --- cfn-lint (a dev dependency: it knows every IAM action and condition operator) -------------------------------


@pytest.mark.slow
def test_documents_pass_cfn_lint(tmp_path: Path) -> None:
    """cfn-lint knows every IAM action name and condition operator: the documents must pass it."""
    pytest.importorskip("cfnlint", reason="cfn-lint is in the `dev` extra: .venv/bin/pip install -c constraints.txt "
                                          "-e '.[dev]'")
    resources: dict[str, Any] = {}
    for region in ("eu-west-1", "cn-north-1"):
        for name, document in controller_policies(make_scope(region)).items():
            resources[f"{name}{region.replace('-', '')}"] = {
                "Type": "AWS::IAM::ManagedPolicy",
                "Properties": {"PolicyDocument": document},
            }
    resources["NodeRole"] = {
        "Type": "AWS::IAM::Role",
        "Properties": {
            "AssumeRolePolicyDocument": node_trust_policy("aws"),
            "ManagedPolicyArns": [aws_managed_policy_arn("aws", name) for name in NODE_MANAGED_POLICIES],
        },
    }
    template = tmp_path / "iam.json"
    template.write_text(json.dumps({"AWSTemplateFormatVersion": "2010-09-09", "Resources": resources}, indent=2))
    result = subprocess.run(
        [sys.executable, "-c", "import sys; from cfnlint.runner import main; sys.exit(main())", "--format",
         "parseable", str(template)], capture_output=True, text=True, timeout=300, check=False
    )
    assert (result.returncode, result.stdout.strip()) == (0, ""), result.stdout + result.stderr
