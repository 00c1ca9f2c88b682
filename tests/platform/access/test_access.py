"""Who can reach the cluster: access entries, policy associations, team RBAC, and the provider's credentials."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pulumi
import pytest
from eks_karpenter.config.errors import ConfigError, render_path
from eks_karpenter.platform.access import AccessConfig, access_entries, validate_access
from eks_karpenter.platform.access.plan import parse_principal
from eks_karpenter.tools.engine import PlanDocument

from tests.support import plan_config, plan_stack, stack_config

ENTRY = "aws:eks/accessEntry:AccessEntry"
ASSOC = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
AT = ("eks-karpenter:access",)
SSO = ("arn:aws:iam::123456789012:role/aws-reserved/sso.amazonaws.com/eu-west-1/"
       "AWSReservedSSO_PlatformAdmin_0123456789abcdef")


def standard_entries(doc: PlanDocument) -> dict[str, Any]:
    return {r.inputs["principalArn"]: r for r in doc.by_type(ENTRY) if r.inputs["type"] == "STANDARD"}


def association_of(doc: PlanDocument, entry_urn: str) -> dict[str, Any]:
    [assoc] = [r for r in doc.by_type(ASSOC) if r.parent == entry_urn]
    return assoc.inputs


@pytest.mark.slow
@pytest.mark.parametrize("stack", ["prod"])
def test_stacks_declare_cluster_admins_with_cluster_scope(stack: str) -> None:
    doc = plan_stack(stack)
    admins = stack_config(stack)["eks-karpenter:access"]["clusterAdmins"]
    entries = standard_entries(doc)
    assert admins and set(admins) <= set(entries)
    for arn in admins:
        assoc = association_of(doc, entries[arn].urn)
        assert assoc["policyArn"] == "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
        assert assoc["accessScope"] == {"type": "cluster"}
        assert assoc["principalArn"] == arn
        assert entries[arn].urn in doc.get(ASSOC, assoc_name(doc, entries[arn].urn)).dependencies


def assoc_name(doc: PlanDocument, entry_urn: str) -> str:
    return next(r.name for r in doc.by_type(ASSOC) if r.parent == entry_urn)


def test_sso_role_arn_is_kept_with_its_path() -> None:
    # Access entries accept role ARNs with a path (aws-auth did not): the IAM Identity Center role's ARN is
    # given as IAM shows it (dev's laptop deployer).
    assert SSO in standard_entries(plan_stack("dev"))


@pytest.mark.slow
def test_team_is_scoped_to_its_namespaces_and_may_manage_pools() -> None:
    doc = plan_stack("dev")
    entry = standard_entries(doc)["arn:aws:iam::123456789012:role/team-batch-deploy"]
    assoc = association_of(doc, entry.urn)
    assert assoc["policyArn"] == "arn:aws:eks::aws:cluster-access-policy/AmazonEKSEditPolicy"
    assert assoc["accessScope"] == {"type": "namespace", "namespaces": ["batch"]}
    assert entry.inputs["kubernetesGroups"] == ["eks-karpenter:team:batch"]
    role = doc.get("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "access-team-batch-node-pools")
    resources = {r for rule in role.inputs["rules"] for r in rule["resources"] if "create" in rule["verbs"]}
    assert resources == {"nodepools", "ec2nodeclasses"}
    binding = doc.get("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", "access-team-batch-node-pools")
    assert binding.inputs["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                                           "name": "eks-karpenter:team:batch"}]
    ns = doc.get("kubernetes:core/v1:Namespace", "namespaces-batch")
    assert ns.options.get("retainOnDelete") is True  # the team's workloads live there
    assert doc.outputs["teamNamespaces"] == {"batch": ["batch"]}


def test_deployers_alone_register_no_other_entries(tmp_path: Path) -> None:
    config = stack_config("dev")
    config["eks-karpenter:access"] = {"deployers": config["eks-karpenter:access"]["deployers"]}
    result = plan_config(config, tmp_path)
    assert result.error is None, result.error
    assert {r.name for r in standard_entries(result.document).values()} == {
        "cluster-entry-123456789012-role-awsreservedsso_platformadmin_0123456789abcdef",
        "cluster-entry-123456789012-role-github-deploy", "cluster-entry-123456789012-role-github-preview-dev"}
    assert result.document.by_type("kubernetes:core/v1:Namespace") == []


# --- validation -------------------------------------------------------------------------------------------------

def issues(raw: dict[str, Any], region: str = "eu-west-1") -> list[tuple[str, str]]:
    return [(render_path(i.path), i.message) for i in validate_access(AccessConfig.model_validate(raw), AT, region)]


@pytest.mark.parametrize(("arn", "fragment"), [
    ("arn:aws:iam::123456789012:group/admins", "access entries take no groups"),
    ("arn:aws:sts::123456789012:assumed-role/admins/alice", "session ARN"),
    ("arn:aws-cn:iam::123456789012:role/admins", "partition must be 'aws'"),
    ("arn:aws:iam::12345:role/admins", "12 digits"),
    ("arn:aws:iam:eu-west-1:123456789012:role/admins", "12 digits"),
    ("arn:aws:s3:::bucket/admins", "not an IAM principal ARN"),
    ("admins", "not an IAM principal ARN"),
    ("arn:aws:iam::123456789012:role/aws-reserved/sso.amazonaws.com/PlatformAdmin", "AWSReservedSSO_"),
    ("arn:aws:iam::123456789012:role/bad name", "not a valid IAM role name"),
])
def test_bad_principal_arns_name_the_key(arn: str, fragment: str) -> None:
    found = issues({"clusterAdmins": [arn]})
    assert [p for p, _ in found] == ["eks-karpenter:access.clusterAdmins[0]"], found
    assert fragment in found[0][1]


def test_good_principals_pass() -> None:
    assert issues({"clusterAdmins": [SSO, "arn:aws:iam::123456789012:user/alice",
                                     "arn:aws:iam::123456789012:role/teams/ci/deploy",
                                     "arn:aws:iam::123456789012:role/aws-reserved/sso.amazonaws.com/"
                                     "AWSReservedSSO_ReadOnly_fedcba9876543210"]}) == []
    assert issues({"clusterAdmins": ["arn:aws-us-gov:iam::123456789012:role/a"]}, region="us-gov-west-1") == []


def test_one_entry_per_principal_and_team_namespaces() -> None:
    arn = "arn:aws:iam::123456789012:role/deploy"
    found = issues({"clusterAdmins": [arn], "teams": [
        {"name": "a", "namespaces": ["kube-system", "a", "a"], "principalArns": [arn]},
        {"name": "a", "namespaces": ["b"], "principalArns": ["arn:aws:iam::123456789012:role/b"]}]})
    assert [p for p, _ in found] == [
        "eks-karpenter:access.teams[0].namespaces[0]", "eks-karpenter:access.teams[0].namespaces[2]",
        "eks-karpenter:access.teams[0].principalArns[0]", "eks-karpenter:access.teams[1].name"]


def test_provider_role_must_be_a_role() -> None:
    found = issues({"providerCredentials": {"roleArn": "arn:aws:iam::123456789012:user/ci"}})
    assert [p for p, _ in found] == ["eks-karpenter:access.providerCredentials.roleArn"]


def test_team_may_not_share_the_platforms_namespace(tmp_path: Path) -> None:
    config = stack_config("dev")
    config["eks-karpenter:karpenter"] = {"namespace": "karpenter"}
    config["eks-karpenter:access"]["teams"][0]["namespaces"] = ["karpenter"]
    result = plan_config(config, tmp_path)
    assert isinstance(result.error, ConfigError)
    assert "eks-karpenter:access.teams[0].namespaces[0]: the platform's own namespace" in str(result.error)
    assert result.document.resources == []


def test_helpers() -> None:
    p = parse_principal(SSO)
    assert p is not None and p.is_sso and p.name.startswith("AWSReservedSSO_") and p.account == "123456789012"
    keys = [e.key for e in access_entries(AccessConfig.model_validate(
        {"clusterAdmins": [SSO], "teams": [{"name": "t", "namespaces": ["t"],
                                            "principalArns": ["arn:aws:iam::123456789012:role/x"]}]}))]
    assert keys == ["entry-123456789012-role-awsreservedsso_platformadmin_0123456789abcdef",
                    "entry-123456789012-role-x"]


# --- the Kubernetes provider's credentials --------------------------------------------------------------------

def _exec_args(kubeconfig: str) -> list[str]:
    return list(json.loads(kubeconfig)["users"][0]["user"]["exec"]["args"])


def test_provider_credentials_reach_the_token_command_but_not_the_exported_kubeconfig() -> None:
    from eks_karpenter.platform.cluster.plan import exec_kubeconfig

    args = _exec_args(exec_kubeconfig("c", "https://x", "Q0E=", "eu-west-1",
                                      role_arn="arn:aws:iam::123456789012:role/ci", profile="platform"))
    assert args[-4:] == ["--role-arn", "arn:aws:iam::123456789012:role/ci", "--profile", "platform"]
    assert "--role-arn" not in _exec_args(exec_kubeconfig("c", "https://x", "Q0E=", "eu-west-1"))


def test_provider_credentials_config_changes_the_provider() -> None:
    from eks_karpenter.platform.access import ProviderCredentials
    from eks_karpenter.platform.cluster import Cluster
    from eks_karpenter.platform.stack import load_stack_config
    from eks_karpenter.tools.engine import plan_components

    flat = {k: v if isinstance(v, str) else json.dumps(v) for k, v in stack_config("brownfield").items()}
    cfg = load_stack_config(flat, "stacks/Pulumi.brownfield.yaml")
    seen: dict[str, str] = {}

    def build() -> Any:
        cluster = Cluster("c", {
            "config": cfg.cluster, "region": "us-west-2", "vpcId": "vpc-1", "privateSubnetIds": [], "tags": {},
            "awsAuthRoleArns": [], "lookupOidcProvider": False, "deletionProtection": False,
            "providerCredentials": ProviderCredentials(role_arn="arn:aws:iam::123456789012:role/ci",
                                                       profile="ops")})
        return pulumi.Output.all(cluster.provider_kubeconfig, cluster.kubeconfig).apply(
            lambda k: seen.update(provider=k[0], exported=k[1]))

    result = plan_components(build, region="us-west-2")
    assert result.error is None, result.error
    assert _exec_args(seen["provider"])[-4:] == ["--role-arn", "arn:aws:iam::123456789012:role/ci",
                                                 "--profile", "ops"]
    assert "--role-arn" not in _exec_args(seen["exported"])  # other stacks connect with their own credentials
