"""The deploy role's policy: every AWS type of every shipped plan has its row in the one actions table (read from
the providers' source), the provider's delete paths are allowed, IAM is scoped to what the stack creates, a
configured permissions boundary is put on every role and required by the policy, and IAM accepts the documents."""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from eks_karpenter import ConfigError
from eks_karpenter.platform.cluster.component import permissions_boundary
from eks_karpenter.tools.deploy_actions import ACTIONS
from eks_karpenter.tools.deploy_role import ACCOUNT, IAM_RESOURCE, deploy_role_policy, needs_iam, plan_types, row
from eks_karpenter.tools.engine import plan_program

from tests.support import REPO, STACKS, plan_config, plan_stack, stack_config
from tests.support.iam import MANAGED_POLICY_SIZE_LIMIT, all_actions, policy_size

POLICY_FILE = REPO / "docs" / "deploy-role-policy.json"
BOUNDARY = "arn:aws:iam::123456789012:policy/platform/DeployBoundary"
BOUNDARY_KEY = "eks-karpenter:permissionsBoundary"


def document(stack: str) -> dict[str, Any]:
    return json.loads(plan_stack(stack).to_json())


@functools.cache
def bounded_json(stack: str) -> str:
    return plan_program(REPO, stack, config_overrides={BOUNDARY_KEY: BOUNDARY}).to_json()


def bounded(stack: str) -> dict[str, Any]:
    return json.loads(bounded_json(stack))


def statements(policy: dict[str, Any]) -> list[dict[str, Any]]:
    return list(policy["Statement"])


def as_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def granting(policy: dict[str, Any], action: str) -> list[dict[str, Any]]:
    return [s for s in statements(policy) if action in as_list(s["Action"])]


PLANS = [*(pytest.param(s, False, id=s) for s in STACKS),
         *(pytest.param(s, True, id=f"{s}-boundary", marks=pytest.mark.slow) for s in STACKS)]


@pytest.mark.parametrize(("stack", "with_boundary"), PLANS)
def test_every_aws_type_of_every_shipped_plan_has_its_row(stack: str, with_boundary: bool) -> None:
    doc = bounded(stack) if with_boundary else document(stack)
    aws = sorted(t for t in plan_types([doc]) if needs_iam(t))
    missing = [t for t in aws if t not in ACTIONS]
    assert aws and not missing, f"no row in tools/deploy_actions.py for {', '.join(missing)}"
    for type_ in aws:
        assert row(type_).evidence, f"{type_}: a row without the source it was read from"


def test_a_type_without_a_row_is_refused_by_name() -> None:
    doc = {"resources": [{"type": "aws:s3/bucket:Bucket", "name": "b", "inputs": {}},
                         {"type": "kubernetes:core/v1:Namespace", "name": "n", "inputs": {}}]}
    with pytest.raises(KeyError, match="aws:s3/bucket:Bucket"):
        deploy_role_policy([doc])


def test_the_committed_policy_is_the_plans() -> None:
    policy = deploy_role_policy(document(s) for s in STACKS)
    assert json.loads(POLICY_FILE.read_text()) == policy, "run .venv/bin/python scripts/gen_docs.py"
    assert json.dumps(policy, indent=2) in (REPO / "docs" / "deploy-role.md").read_text()


def test_each_action_comes_from_a_planned_types_row() -> None:
    docs = [document(s) for s in STACKS]
    needed = {a for t in plan_types(docs) if needs_iam(t) for a in row(t).actions} | {"iam:PassRole",
                                                                                     "iam:CreateServiceLinkedRole"}
    granted = all_actions([deploy_role_policy(docs)])
    assert granted <= needed, granted - needed
    assert not any(a.endswith("*") or a == "*" for a in granted)


def test_a_node_group_with_a_launch_template_may_launch_and_tag_with_it() -> None:
    """EKS checks that the caller of CreateNodegroup or UpdateNodegroupVersion may launch and tag instances with
    the group's launch template: without ec2:RunInstances the first `up` fails at the system group."""
    for stack in STACKS:
        doc = document(stack)
        templates = [r for r in doc["resources"] if r["type"] == "aws:ec2/launchTemplate:LaunchTemplate"
                     and r["inputs"].get("tagSpecifications")]
        if templates:
            granted = all_actions([deploy_role_policy([doc])])
            assert {"ec2:RunInstances", "ec2:CreateTags"} <= granted, stack


def test_the_taken_name_look_ups_may_read_what_they_find() -> None:
    """A fresh account's plan only lists log groups and queues by name; in an account that has one, the preview
    reads it for its tags, and a denied read would hide the refusal that names it."""
    for stack in STACKS:
        granted = all_actions([deploy_role_policy([document(stack)])])
        assert {"sqs:ListQueues", "sqs:GetQueueUrl", "sqs:GetQueueAttributes", "sqs:ListQueueTags"} <= granted
        if stack != "brownfield":  # an adopted cluster's log group is not the stack's
            assert {"logs:DescribeLogGroups", "logs:ListTagsForResource"} <= granted


def test_the_destroy_paths_the_providers_take_are_allowed() -> None:
    """A subnet's delete lists and removes the network interfaces a service left in it; a role's delete takes the
    role out of its instance profiles and detaches and deletes its policies before the role goes."""
    subnet = set(ACTIONS["aws:ec2/subnet:Subnet"].delete)
    assert {"ec2:DescribeNetworkInterfaces", "ec2:DeleteNetworkInterface", "ec2:DeleteSubnet"} <= subnet
    role = set(ACTIONS["aws:iam/role:Role"].delete)
    assert {"iam:ListInstanceProfilesForRole", "iam:RemoveRoleFromInstanceProfile", "iam:ListAttachedRolePolicies",
            "iam:DetachRolePolicy", "iam:ListRolePolicies", "iam:DeleteRolePolicy", "iam:DeleteRole"} <= role
    for stack in ("dev", "prod"):
        granted = all_actions([deploy_role_policy([document(stack)])])
        assert subnet | role <= granted, (subnet | role) - granted
        # Karpenter adds its node role to instance profiles of its own: the role's delete may take it out of
        # those (tagged with their EC2NodeClass), and of no other profile.
        [profiles] = granting(deploy_role_policy([document(stack)]), "iam:RemoveRoleFromInstanceProfile")
        assert profiles["Condition"] == {"StringLike": {"aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass": "*"}}


@pytest.mark.parametrize("stack", STACKS)
def test_no_iam_role_write_reaches_beyond_the_stacks_own_roles(stack: str) -> None:
    policy = deploy_role_policy([document(stack)])
    for statement in statements(policy):
        iam = [a for a in as_list(statement["Action"]) if a.startswith("iam:")]
        writes = [a for a in iam if "Role" in a and not a.startswith(("iam:Get", "iam:List"))]
        resources = as_list(statement["Resource"])
        assert not (writes and "*" in resources), statement
        for resource in resources:
            if writes and ":role/" in resource:
                name = resource.split(":role/", 1)[1]
                assert name != "*" and (name.startswith("aws-service-role/") or len(name.rstrip("*")) > 8), resource
    assert not any(s["Resource"] == "*" and any(a.startswith("iam:") and a != "iam:ListRoles"
                                                and not a.startswith("iam:ListOpenIDConnectProviders")
                                                for a in as_list(s["Action"])) for s in statements(policy))


def test_roles_are_scoped_by_name_and_by_prefix_for_the_auto_named_ones() -> None:
    policy = deploy_role_policy([document("prod")])
    [roles] = [s for s in statements(policy) if s["Sid"] == "IamOnTheStacksRolesOnly"]
    names = {r.split(":role/", 1)[1] for r in roles["Resource"]}
    assert {"prod-karpenter-managed-nodes-us-east-1", "prod-karpenter-karpenter-node-us-east-1",
            "prod-karpenter-karpenter-controller-us-east-1", "network-flow-logs-*",
            "cluster-eks-eksRole-role-*"} <= names
    assert all(r.startswith(f"arn:aws:iam::{ACCOUNT}:role/") for r in roles["Resource"])


def test_only_the_stacks_policies_may_be_attached() -> None:
    policy = deploy_role_policy([document("prod")])
    [attach] = granting(policy, "iam:AttachRolePolicy")
    allowed = set(attach["Condition"]["ArnLike"]["iam:PolicyARN"])
    assert "arn:aws:iam::aws:policy/AmazonEKSClusterPolicy" in allowed  # pulumi-eks' cluster role
    assert "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy" in allowed
    assert f"arn:aws:iam::{ACCOUNT}:policy/prod-karpenter-KarpenterNodeLifecycle-us-east-1" in allowed
    assert not any("AdministratorAccess" in a or a.endswith("*") for a in allowed)


def test_pass_role_names_each_role_and_the_service_it_goes_to() -> None:
    policy = deploy_role_policy([document("prod")])
    passes = granting(policy, "iam:PassRole")
    by_service = {s["Condition"]["StringEquals"]["iam:PassedToService"]: {r.split(":role/", 1)[1]
                                                                          for r in s["Resource"]} for s in passes}
    assert by_service == {
        "eks.amazonaws.com": {"cluster-eks-eksRole-role-*", "prod-karpenter-managed-nodes-us-east-1"},
        "pods.eks.amazonaws.com": {"prod-karpenter-karpenter-controller-us-east-1"},
        "vpc-flow-logs.amazonaws.com": {"network-flow-logs-*"},
    }


def test_service_linked_roles_only_for_the_services_that_need_them() -> None:
    policy = deploy_role_policy([document("prod")])
    [create] = granting(policy, "iam:CreateServiceLinkedRole")
    services = create["Condition"]["StringEquals"]["iam:AWSServiceName"]
    assert set(services) == {"eks.amazonaws.com", "eks-nodegroup.amazonaws.com", "spot.amazonaws.com"}
    assert all("/aws-service-role/" in r for r in create["Resource"])


@pytest.mark.slow
@pytest.mark.parametrize("stack", STACKS)
def test_a_boundary_goes_on_every_role_and_the_policy_requires_it(stack: str) -> None:
    doc = bounded(stack)
    roles = [r for r in doc["resources"] if r["type"] == "aws:iam/role:Role"]
    assert roles and all(r["inputs"].get("permissionsBoundary") == BOUNDARY for r in roles), \
        [r["name"] for r in roles if r["inputs"].get("permissionsBoundary") != BOUNDARY]
    policy = deploy_role_policy([doc])
    for action in ("iam:CreateRole", "iam:PutRolePermissionsBoundary", "iam:PutRolePolicy", "iam:AttachRolePolicy"):
        for statement in granting(policy, action):
            assert statement["Condition"]["StringEquals"]["iam:PermissionsBoundary"] == BOUNDARY, (action, statement)
    assert not granting(policy, "iam:DeleteRolePermissionsBoundary")


def test_without_a_boundary_nothing_in_the_plan_carries_one() -> None:
    for stack in STACKS:
        doc = document(stack)
        assert not [r["name"] for r in doc["resources"] if "permissionsBoundary" in (r.get("inputs") or {})]
        assert "iam:PermissionsBoundary" not in json.dumps(deploy_role_policy([doc]))


def test_the_boundary_reaches_pulumi_eks_roles_through_a_transform() -> None:
    """pulumi-eks' own roles (the cluster's service role) are children of a remote component: not in the offline
    plan, so the transform that sets their boundary is checked on its own."""
    import pulumi

    transform = permissions_boundary(BOUNDARY)
    role = transform(pulumi.ResourceTransformArgs(
        custom=True, type_="aws:iam/role:Role", name="cluster-eks-eksRole-role", props={"assumeRolePolicy": "{}"},
        opts=pulumi.ResourceOptions()))
    assert role is not None and role.props == {"assumeRolePolicy": "{}", "permissionsBoundary": BOUNDARY}
    assert transform(pulumi.ResourceTransformArgs(custom=True, type_="aws:eks/cluster:Cluster", name="c",
                                                  props={}, opts=pulumi.ResourceOptions())) is None


@pytest.mark.slow
def test_the_transform_is_on_pulumi_eks_cluster_only_with_a_boundary() -> None:
    cluster = next(r for r in document("prod")["resources"] if r["type"] == "eks:index:Cluster")
    assert cluster["options"]["transforms"] == ["eks_karpenter.platform.cluster.component.no_creator_admin"]
    cluster = next(r for r in bounded("prod")["resources"] if r["type"] == "eks:index:Cluster")
    assert any(t.endswith("permissions_boundary.<locals>.boundary") for t in cluster["options"]["transforms"])


@pytest.mark.parametrize(("value", "fragment"), [
    ("arn:aws:iam::aws:policy/PowerUserAccess", "a customer managed policy"),
    ("arn:aws:iam::123456789012:role/Boundary", "not a managed policy"),
    ("arn:aws-cn:iam::123456789012:policy/Boundary", "partition aws-cn does not match"),
    ("arn:aws:s3:::bucket", "not a iam ARN"),
    ("Boundary", "not an ARN"),
])
def test_a_boundary_that_is_not_a_customer_managed_policy_is_refused(tmp_path: Path, value: str,
                                                                      fragment: str) -> None:
    cfg = stack_config("dev")
    cfg[BOUNDARY_KEY] = value
    result = plan_config(cfg, tmp_path)
    assert isinstance(result.error, ConfigError), result.error
    assert re.search(rf"Pulumi\.bad\.yaml:\d+: {re.escape(BOUNDARY_KEY)}: .*{re.escape(fragment)}",
                     str(result.error)), str(result.error)
    assert result.document.resources == []


def test_the_iam_resource_types_are_iams_own() -> None:
    """Each IAM action's resource type, as the generator scopes it, is the one IAM's service authorization
    reference gives (cfn-lint ships a copy)."""
    cfnlint = pytest.importorskip("cfnlint", reason="cfn-lint is in the `dev` extra")
    data = json.loads((Path(cfnlint.__file__).parent / "data" / "AdditionalSpecs" / "Policies.json").read_text())
    iam = data["iam"]["Actions"]
    table = {a.split(":")[1] for spec in ACTIONS.values() for a in spec.actions if a.startswith("iam:")}
    assert table <= set(IAM_RESOURCE), table - set(IAM_RESOURCE)
    for name, kind in IAM_RESOURCE.items():
        assert (iam[name.lower()].get("Resources") or ["*"]) == [kind], name


@pytest.mark.slow
def test_the_command_prints_the_stacks_policy() -> None:
    proc = subprocess.run([sys.executable, "-m", "infra", "deploy-policy", "--stack", "dev"], cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == deploy_role_policy([document("dev")])


@pytest.mark.slow
def test_the_command_writes_it_as_managed_policies_iam_accepts(tmp_path: Path) -> None:
    """A stack's policy is larger than one managed policy may be: `--out` writes it as several, each within IAM's
    limit, that together grant exactly the policy (and a shorter run leaves no stale part behind)."""
    (tmp_path / "deploy-role-policy-9.json").write_text("{}")
    proc = subprocess.run([sys.executable, "-m", "infra", "deploy-policy", "--stack", "prod", "--out", str(tmp_path)],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    parts = [json.loads(p.read_text()) for p in sorted(tmp_path.glob("deploy-role-policy-*.json"))]
    assert len(parts) == len(proc.stdout.split()) >= 2
    assert all(policy_size(part) <= MANAGED_POLICY_SIZE_LIMIT for part in parts)
    assert [s for part in parts for s in part["Statement"]] == deploy_role_policy([document("prod")])["Statement"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["committed", "prod-boundary"])
def test_the_policies_pass_cfn_lint(tmp_path: Path, name: str) -> None:
    """cfn-lint knows every IAM action name and each action's resource types: a misspelt action or an ARN of the
    wrong type fails here."""
    pytest.importorskip("cfnlint", reason="cfn-lint is in the `dev` extra")
    policy = json.loads(POLICY_FILE.read_text()) if name == "committed" else deploy_role_policy([bounded("prod")])
    template = tmp_path / "deploy.json"
    template.write_text(json.dumps({"AWSTemplateFormatVersion": "2010-09-09", "Resources": {"Deploy": {
        "Type": "AWS::IAM::ManagedPolicy", "Properties": {"PolicyDocument": policy}}}}))
    result = subprocess.run([sys.executable, "-c", "import sys; from cfnlint.runner import main; sys.exit(main())",
                             "--format", "parseable", str(template)], capture_output=True, text=True, timeout=300)
    assert (result.returncode, result.stdout.strip()) == (0, ""), result.stdout + result.stderr


def test_an_adopted_cluster_with_teams_may_read_its_node_groups_launch_templates(tmp_path: Path) -> None:
    """With teams, the preflight reads every node group of an adopted cluster and the launch template version each
    launches from; a denied read refuses the plan."""
    config = stack_config("brownfield")
    config["eks-karpenter:access"] = {**config.get("eks-karpenter:access", {}), "teams": [
        {"name": "batch", "namespaces": ["batch"], "principalArns": ["arn:aws:iam::123456789012:role/team-batch"]}]}
    result = plan_config(config, tmp_path, stack="brownfield")
    assert result.error is None, result.error
    granted = all_actions([deploy_role_policy([json.loads(result.document.to_json())])])
    assert {"eks:ListNodegroups", "eks:DescribeNodegroup", "ec2:DescribeLaunchTemplateVersions"} <= granted
    assert "eks:ListNodegroups" not in all_actions([deploy_role_policy([document("brownfield")])])
