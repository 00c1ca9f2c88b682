"""The offline plan says no less than a preview: replacements through remote components, provider outputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from eks_karpenter.tools.engine import PlanDocument
from eks_karpenter.tools.engine.diff import diff_plans, render_diff_markdown
from eks_karpenter.tools.engine.outputs import generation, provider_state

from tests.support import REPO, STACKS, plan_config, plan_stack, stack_config

EKS_CLUSTER = "eks:index:Cluster"
MNG = "eks:index:ManagedNodeGroup"


def _plan_with(stack: str, tmp_path: Path, edit: Any) -> PlanDocument:
    config = stack_config(stack)
    edit(config)
    result = plan_config(config, tmp_path, stack=stack)
    assert result.error is None, result.error
    return result.document


@pytest.fixture(scope="module")
def vpc_cidr_diff(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, str]:
    new = _plan_with("dev", tmp_path_factory.mktemp("cidr"),
                     lambda c: c["eks-karpenter:network"].update(vpcCidr="10.21.0.0/16"))
    diff = diff_plans(plan_stack("dev"), new)
    return diff, render_diff_markdown(diff)


@pytest.mark.slow
def test_a_vpc_cidr_change_replaces_the_eks_cluster(vpc_cidr_diff: tuple[Any, str]) -> None:
    diff, text = vpc_cidr_diff
    ops = {c.resource.name: c.op for c in diff.changes}
    assert ops["network-vpc"] == "replace"
    assert ops["cluster-eks"] == "replace"
    cluster = next(c for c in diff.changes if c.resource.name == "cluster-eks")
    assert any(p.replaces and p.label == "vpcId" for p in cluster.properties)
    # Its node groups are replaced with it (and by their own subnetIds).
    assert ops["cluster-system"] == ops["cluster-spot-workshop-spot"] == "replace"
    # Loudly: the stateful warning names the cluster and what is lost.
    warning = text.split("| | type |")[0]
    assert "Stateful resources are replaced" in warning
    assert "`cluster-eks` (Cluster: a new EKS control plane" in warning
    assert "`cluster-system` (ManagedNodeGroup" in warning


@pytest.mark.slow
def test_a_tag_change_replaces_nothing(tmp_path: Path) -> None:
    new = _plan_with("dev", tmp_path, lambda c: c["eks-karpenter:tags"].update(environment="qa"))
    diff = diff_plans(plan_stack("dev"), new)
    assert diff.counts()["replace"] == 0 and diff.counts()["update"] > 0
    assert "Stateful" not in render_diff_markdown(diff)


@pytest.mark.slow
def test_a_new_cluster_name_replaces_its_node_groups_through_the_cluster() -> None:
    plan = plan_stack("dev")
    copied = PlanDocument.from_json(plan.to_json())
    copied.get(EKS_CLUSTER, "cluster-eks").inputs["name"] = "dev-2"
    diff = diff_plans(plan, copied)
    by_name = {c.resource.name: c for c in diff.changes}
    assert by_name["cluster-eks"].op == "replace"
    assert by_name["cluster-system"].op == "replace"
    assert by_name["cluster-system"].replaced_with == (by_name["cluster-eks"].resource.urn,)
    assert "replaced with `cluster-eks`" in render_diff_markdown(diff)


def test_ids_change_exactly_when_the_resource_is_replaced() -> None:
    subnet = {"vpcId": "vpc-1", "cidrBlock": "10.0.0.0/19", "availabilityZone": "eu-west-1a", "tags": {"a": "b"}}
    first, _ = provider_state("aws:ec2/subnet:Subnet", "s", subnet, "eu-west-1")
    retagged, _ = provider_state("aws:ec2/subnet:Subnet", "s", {**subnet, "tags": {"a": "c"}}, "eu-west-1")
    moved, _ = provider_state("aws:ec2/subnet:Subnet", "s", {**subnet, "cidrBlock": "10.0.32.0/19"}, "eu-west-1")
    assert first == retagged and first != moved and first.startswith("subnet-")
    assert generation("aws:ec2/vpc:Vpc", "v", {"cidrBlock": "10.0.0.0/16"}) != \
        generation("aws:ec2/vpc:Vpc", "v", {"cidrBlock": "10.1.0.0/16"})


# --- mocks return what the provider would ----------------------------------------------------------------------

# Inputs that hold another resource's output: they must carry a value of the provider's shape.
FROM_OUTPUTS = {
    "aws:kms/alias:Alias": {"targetKeyId": r"^[0-9a-f]{8}-[0-9a-f]{4}-"},
    "eks:index:Cluster": {"vpcId": r"^vpc-", "encryptionConfigKeyArn": r"^arn:aws:kms:[a-z0-9-]+:\d{12}:key/"},
    "aws:ec2/subnet:Subnet": {"vpcId": r"^vpc-"},
    "aws:ec2/natGateway:NatGateway": {"subnetId": r"^subnet-", "allocationId": r"^eipalloc-"},
    "aws:ec2/route:Route": {"routeTableId": r"^rtb-"},
    "aws:ec2/routeTableAssociation:RouteTableAssociation": {"routeTableId": r"^rtb-", "subnetId": r"^subnet-"},
    "aws:ec2/tag:Tag": {"resourceId": r"^(sg|subnet)-"},
    "aws:cloudwatch/eventTarget:EventTarget": {"arn": r"^arn:aws:sqs:", "rule": r"."},
    "aws:sqs/queuePolicy:QueuePolicy": {"queueUrl": r"^https://sqs\."},
    "aws:eks/accessEntry:AccessEntry": {"principalArn": r"^arn:aws:iam::\d{12}:role/"},
    "aws:eks/podIdentityAssociation:PodIdentityAssociation": {"roleArn": r"^arn:aws:iam::\d{12}:role/"},
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": {"role": r".", "policyArn": r"^arn:aws:iam::"},
    "eks:index:ManagedNodeGroup": {"nodeRoleArn": r"^arn:aws:iam::\d{12}:role/"},
}


def _leaves(value: Any, path: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, f"{path}.{k}" if path else k)]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, f"{path}[{i}]")]
    return [(path, value)]


@pytest.mark.slow
@pytest.mark.parametrize("stack", STACKS)
def test_no_input_is_empty_where_the_provider_gives_a_value(stack: str) -> None:
    import re

    plan = plan_stack(stack)
    problems = []
    for r in plan.resources:
        for path, value in _leaves(r.inputs):
            core_group = value == "" and re.search(r"[rR]ules\[\d+\]\.apiGroups\[\d+\]$", path)  # the core API group
            if (value in ("", "[unknown]") and not core_group) or (isinstance(value, str) and value.endswith("-id")):
                problems.append(f"{r.name} {path}: {value!r}")
        for field, pattern in FROM_OUTPUTS.get(r.type, {}).items():
            value = r.inputs.get(field)
            if value is None and not (r.type == "eks:index:Cluster" and field == "encryptionConfigKeyArn"):
                problems.append(f"{r.name} {field}: missing")
            elif value is not None and not re.search(pattern, str(value)):
                problems.append(f"{r.name} {field}: {value!r} does not look like /{pattern}/")
    assert not problems, "\n".join(problems)


def test_a_kms_alias_gets_its_keys_key_id() -> None:
    plan = plan_stack("prod")
    (alias,) = plan.by_type("aws:kms/alias:Alias")
    (cluster,) = plan.by_type(EKS_CLUSTER)
    assert cluster.inputs["encryptionConfigKeyArn"].endswith("/" + alias.inputs["targetKeyId"])


@pytest.mark.slow
@pytest.mark.parametrize("stack", STACKS)
def test_plans_are_byte_identical(stack: str) -> None:
    from eks_karpenter.tools.engine import plan_program

    assert plan_program(REPO, stack).to_json() == plan_stack(stack).to_json()


def test_outputs_the_program_reads_have_the_providers_shape() -> None:
    region = "eu-west-1"
    _, key = provider_state("aws:kms/key:Key", "k", {}, region)
    assert key["keyId"] and key["arn"].endswith(key["keyId"])
    _, role = provider_state("aws:iam/role:Role", "r", {"name": "x"}, region)
    assert role["arn"] == "arn:aws:iam::123456789012:role/x" and role["uniqueId"].startswith("AROA")
    _, queue = provider_state("aws:sqs/queue:Queue", "q", {"name": "x"}, region)
    assert queue["url"].endswith("/x") and queue["arn"] == "arn:aws:sqs:eu-west-1:123456789012:x"
    lt_id, lt = provider_state("aws:ec2/launchTemplate:LaunchTemplate", "lt", {}, region)
    assert lt_id.startswith("lt-") and lt["latestVersion"] == 1 and lt["name"].startswith("lt-")
    sg_id, sg = provider_state("aws:ec2/securityGroup:SecurityGroup", "sg", {"vpcId": "vpc-1"}, region)
    assert sg_id.startswith("sg-") and sg["arn"].endswith(f"security-group/{sg_id}")
    _, logs = provider_state("aws:cloudwatch/logGroup:LogGroup", "l", {"name": "/aws/eks/x"}, region)
    assert logs["arn"] == "arn:aws:logs:eu-west-1:123456789012:log-group:/aws/eks/x"
    _, slr = provider_state("aws:iam/serviceLinkedRole:ServiceLinkedRole", "s",
                            {"awsServiceName": "spot.amazonaws.com"}, region)
    assert slr["arn"].endswith(":role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot")
    assert json.dumps(provider_state("aws:ec2/vpc:Vpc", "v", {"cidrBlock": "10.0.0.0/16"}, region)) == \
        json.dumps(provider_state("aws:ec2/vpc:Vpc", "v", {"cidrBlock": "10.0.0.0/16"}, region))


@pytest.mark.parametrize(("type_", "inputs_old", "inputs_new", "op"), [
    # pulumi-eks puts bootstrapSelfManagedAddons in the cluster's ignoreChanges: no replacement.
    (EKS_CLUSTER, {"name": "c", "bootstrapSelfManagedAddons": True}, {"name": "c", "bootstrapSelfManagedAddons": False},
     "update"),
    # The Terraform schema updates a cluster's subnets in place (same VPC).
    (EKS_CLUSTER, {"name": "c", "vpcId": "vpc-1", "privateSubnetIds": ["subnet-1"]},
     {"name": "c", "vpcId": "vpc-1", "privateSubnetIds": ["subnet-2"]}, "update"),
    (EKS_CLUSTER, {"name": "c", "kubernetesServiceIpAddressRange": "10.100.0.0/16"},
     {"name": "c", "kubernetesServiceIpAddressRange": "172.20.0.0/16"}, "replace"),
    # operatingSystem picks the amiType (ForceNew); a custom launch template's inputs give the group a template id.
    (MNG, {"operatingSystem": "AL2023"}, {"operatingSystem": "Bottlerocket"}, "replace"),
    (MNG, {"scalingConfig": {"maxSize": 3}}, {"scalingConfig": {"maxSize": 4}}, "update"),
    (MNG, {}, {"enableIMDSv2": True}, "replace"),
])
def test_remote_component_inputs_follow_the_provider_schemas(type_: str, inputs_old: dict[str, Any],
                                                             inputs_new: dict[str, Any], op: str) -> None:
    from eks_karpenter.tools.engine import PlannedResource

    def doc(inputs: dict[str, Any]) -> PlanDocument:
        return PlanDocument(project="p", stack="s", resources=[PlannedResource(
            urn=f"urn:pulumi:s::p::{type_}::x", type=type_, name="x", parent="", custom=False, inputs=inputs)])

    (change,) = diff_plans(doc(inputs_old), doc(inputs_new)).changes
    assert change.op == op
