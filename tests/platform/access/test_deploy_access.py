"""Reaching the API server and who may run `pulumi up`: endpoint ingress rules, the
declared deployers' access entries and what waits for them, no bootstrap creator admin, and one identity for
both providers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pulumi
import pytest
from eks_karpenter.config.errors import ConfigError
from eks_karpenter.platform.access import AccessConfig, aws_provider_identity, provider_identity_issues
from eks_karpenter.platform.cluster.component import no_creator_admin
from eks_karpenter.platform.cluster.config import ApiAccessConfig
from eks_karpenter.platform.cluster.plan import api_ingress_rules, without_creator_admin
from eks_karpenter.platform.stack import load_stack_config
from eks_karpenter.tools.engine import PlanDocument

from tests.support import plan_config, plan_stack, stack_config

ENTRY = "aws:eks/accessEntry:AccessEntry"
ASSOC = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"
RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
PROVIDER = "pulumi:providers:kubernetes"
CI = "arn:aws:iam::123456789012:role/github-deploy"
PREVIEW = "arn:aws:iam::123456789012:role/github-preview-dev"
SSO_ADMIN = ("arn:aws:iam::123456789012:role/aws-reserved/sso.amazonaws.com/eu-west-1/"
             "AWSReservedSSO_PlatformAdmin_0123456789abcdef")
TEAM_BATCH = "arn:aws:iam::123456789012:role/team-batch-deploy"
POLICY = "arn:aws:eks::aws:cluster-access-policy/"


def flat(config: dict[str, Any]) -> dict[str, str]:
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()}


def load(config: dict[str, Any]) -> Any:
    return load_stack_config(flat(config), "stacks/Pulumi.x.yaml")


def refusal(config: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as err:
        load(config)
    return str(err.value)


def provider(doc: PlanDocument) -> Any:
    [found] = [r for r in doc.resources if r.type == PROVIDER and r.name == "cluster-k8s"]
    return found


def in_cluster(r: Any) -> bool:
    """A resource of the Cluster component (where the deployers' entries live)."""
    return str(r.urn).split("::")[2].startswith("eks-karpenter:index:Cluster$")


def deployer_resources(doc: PlanDocument) -> dict[str, Any]:
    return {r.urn: r for r in doc.resources if r.type in (ENTRY, ASSOC) and in_cluster(r)}


# --- 1. reaching the API server --------------------------------------------------------------------------------

def private_only(config: dict[str, Any]) -> dict[str, Any]:
    cluster = config["eks-karpenter:cluster"]
    cluster.update({"endpointPrivateAccess": True, "endpointPublicAccess": False})
    cluster.pop("publicAccessCidrs", None)
    cluster.pop("apiAccess", None)
    return config


def test_a_private_endpoint_nothing_can_reach_is_refused_naming_the_key() -> None:
    text = refusal(private_only(stack_config("dev")))
    assert "eks-karpenter:cluster.apiAccess: the API endpoint is private-only and nothing is admitted" in text
    assert "apiAccess.cidrs" in text and "endpointPublicAccess: true" in text


def test_the_default_endpoint_is_refused_too(tmp_path: Path) -> None:
    # The defaults are private-only: a stack that says nothing about the endpoint plans nothing.
    config = {"aws:region": "eu-west-1", "eks-karpenter:clusterName": "c",
              "eks-karpenter:access": {"deployers": [{"name": "ci", "principalArn": CI}]}}
    result = plan_config(config, tmp_path)
    assert isinstance(result.error, ConfigError) and "cluster.apiAccess" in str(result.error)
    assert result.document.resources == []


def test_admitted_sources_become_one_443_rule_each_on_the_cluster_security_group(tmp_path: Path) -> None:
    config = private_only(stack_config("dev"))
    config["eks-karpenter:cluster"]["apiAccess"] = {"cidrs": ["10.100.0.0/24", "2001:db8::/56"],
                                                    "securityGroupIds": ["sg-0123456789abcdef0"]}
    result = plan_config(config, tmp_path)
    assert result.error is None, result.error
    doc = result.document
    rules = {r.name: r.inputs for r in doc.by_type(RULE)}
    assert set(rules) == {"cluster-api-from-10-100-0-0-24", "cluster-api-from-2001-db8---56",
                          "cluster-api-from-sg-0123456789abcdef0"}
    sg = doc.outputs["clusterSecurityGroupId"]
    for inputs in rules.values():
        assert (inputs["ipProtocol"], inputs["fromPort"], inputs["toPort"]) == ("tcp", 443, 443)
        assert inputs["securityGroupId"] == sg
    assert rules["cluster-api-from-10-100-0-0-24"]["cidrIpv4"] == "10.100.0.0/24"
    assert rules["cluster-api-from-2001-db8---56"]["cidrIpv6"] == "2001:db8::/56"
    assert rules["cluster-api-from-sg-0123456789abcdef0"]["referencedSecurityGroupId"] == "sg-0123456789abcdef0"
    # The provider (so every in-cluster resource) waits for the rules: no Helm release times out racing them.
    assert {r.urn for r in doc.by_type(RULE)} <= set(provider(doc).options["dependsOn"])
    # Rules are resources of their own: the cluster's inputs do not mention them.
    [cluster] = doc.by_type("eks:index:Cluster")
    assert "10.100.0.0/24" not in json.dumps(cluster.inputs)


def test_rule_names_follow_the_source_not_its_position() -> None:
    one = api_ingress_rules(ApiAccessConfig.model_validate({"cidrs": ["10.0.0.0/24", "10.1.0.0/24"]}), "c")
    two = api_ingress_rules(ApiAccessConfig.model_validate({"cidrs": ["10.1.0.0/24", "10.0.0.0/24"]}), "c")
    assert sorted(k for k, _ in one) == sorted(k for k, _ in two)


def test_prod_admits_its_runner_subnet_on_the_private_endpoint() -> None:
    doc = plan_stack("prod")
    [rule] = doc.by_type(RULE)
    assert rule.inputs["cidrIpv4"] == stack_config("prod")["eks-karpenter:cluster"]["apiAccess"]["cidrs"][0]


def test_api_access_needs_the_private_endpoint() -> None:
    config = stack_config("dev")
    config["eks-karpenter:cluster"].update({"endpointPrivateAccess": False,
                                            "apiAccess": {"cidrs": ["10.0.0.0/24"]}})
    assert "cluster.apiAccess: admits sources to the private endpoint" in refusal(config)


def test_an_open_public_endpoint_is_a_warning_not_an_error() -> None:
    doc = plan_stack("dev")
    assert doc.by_type("eks:index:Cluster")[0].inputs["publicAccessCidrs"] == ["0.0.0.0/0"]
    assert any("open to the internet (0.0.0.0/0)" in w for w in doc.warnings)
    assert not any("open to the internet" in w for w in plan_stack("prod").warnings)


# --- 2. who may run `pulumi up` --------------------------------------------------------------------------------

def test_every_declared_deployer_gets_a_cluster_scoped_entry_and_a_deploy_one_the_admin_policy() -> None:
    doc = plan_stack("dev")
    declared = {d["principalArn"]: d.get("role", "deploy")
                for d in stack_config("dev")["eks-karpenter:access"]["deployers"]}
    entries = {r.inputs["principalArn"]: r for r in doc.by_type(ENTRY) if in_cluster(r)}
    assert set(entries) == set(declared) and {CI, PREVIEW} <= set(entries)
    for arn, role in declared.items():
        assocs = [r for r in doc.by_type(ASSOC) if r.parent == entries[arn].urn]
        assert entries[arn].inputs["type"] == "STANDARD"
        if role == "preview":  # its Kubernetes group's read-only roles alone (test_preview_access.py)
            assert assocs == []
            continue
        [assoc] = assocs
        assert assoc.inputs["policyArn"] == POLICY + "AmazonEKSClusterAdminPolicy"
        assert assoc.inputs["accessScope"] == {"type": "cluster"}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_kubernetes_provider_waits_for_every_deployer_entry_and_association(stack: str) -> None:
    doc = plan_stack(stack)
    deployers = deployer_resources(doc)
    assert deployers and {r.type for r in deployers.values()} == {ENTRY, ASSOC}
    k8s = provider(doc)
    # Create: the provider after every entry and association. Destroy runs the graph backwards: everything that
    # uses the provider goes first, then the provider, then the entries (no 401 while NodePools drain).
    assert set(deployers) <= set(k8s.options["dependsOn"])
    in_cluster = [r for r in doc.resources if r.custom and r.type.startswith("kubernetes:")]
    assert in_cluster
    assert all(r.options.get("provider") == k8s.urn for r in in_cluster), \
        [r.urn for r in in_cluster if r.options.get("provider") != k8s.urn]
    # And the entries wait for the cluster itself.
    [cluster] = doc.by_type("eks:index:Cluster")
    for entry in (r for r in deployers.values() if r.type == ENTRY):
        assert cluster.urn in entry.options["dependsOn"]


def test_the_creator_gets_no_bootstrap_admin() -> None:
    doc = plan_stack("dev")
    [cluster] = doc.by_type("eks:index:Cluster")
    assert cluster.options["transforms"] == [f"{no_creator_admin.__module__}.{no_creator_admin.__qualname__}"]
    # pulumi-eks 4.x hard-codes the bootstrap admin on its aws.eks.Cluster child; the transform turns it off
    # there and touches nothing else.
    props = {"name": "c", "accessConfig": {"authenticationMode": "API",
                                           "bootstrapClusterCreatorAdminPermissions": True}}
    assert without_creator_admin(props) == {"name": "c", "accessConfig": {
        "authenticationMode": "API", "bootstrapClusterCreatorAdminPermissions": False}}
    opts = pulumi.ResourceOptions()
    child = no_creator_admin(pulumi.ResourceTransformArgs(True, "aws:eks/cluster:Cluster", "c-eksCluster",
                                                          props, opts))
    assert child is not None
    assert child.props["accessConfig"]["bootstrapClusterCreatorAdminPermissions"] is False and child.opts is opts
    assert no_creator_admin(pulumi.ResourceTransformArgs(True, "aws:iam/role:Role", "r", {"name": "r"},
                                                         opts)) is None


def test_a_created_cluster_needs_deployers() -> None:
    config = stack_config("dev")
    del config["eks-karpenter:access"]["deployers"]
    text = refusal(config)
    assert "eks-karpenter:access.deployers: required for a cluster this stack creates" in text


def test_a_principal_is_a_deployer_or_an_admin_not_both() -> None:
    config = stack_config("dev")
    config["eks-karpenter:access"]["clusterAdmins"] = [CI]
    assert "EKS allows one access entry per principal" in refusal(config)
    # The same role under another path (or case) is the same principal, and would be the same entry.
    config["eks-karpenter:access"]["clusterAdmins"] = ["arn:aws:iam::123456789012:role/ci/GitHub-Deploy"]
    assert "clusterAdmins[0]: EKS allows one access entry per principal, and this one is already at " \
           "deployers.1.principalArn" in refusal(config)


def test_the_caller_is_never_refused_on_a_later_up() -> None:
    # The CI role is a deployer and is the identity running `up`: the plan goes through, every time.
    from eks_karpenter.tools.engine import run_plan

    from tests.support import REPO

    caller = {"aws:index/getCallerIdentity:getCallerIdentity": {
        "accountId": "123456789012", "userId": "AROA:ci", "arn": "arn:aws:sts::123456789012:assumed-role/"
        "github-deploy/ci-run-1"}}
    result = run_plan(REPO, "dev", invoke_results=caller)
    assert result.error is None, result.error
    assert CI in {r.inputs["principalArn"] for r in result.document.by_type(ENTRY)}


ACCESS_URN = "urn:pulumi:dev::eks-karpenter::eks-karpenter:index:Access$aws:eks/accessEntry:AccessEntry::"
CLUSTER_URN = "urn:pulumi:dev::eks-karpenter::eks-karpenter:index:Cluster$aws:eks/accessEntry:AccessEntry::"
SSO_SLUG = "123456789012-role-awsreservedsso_platformadmin_0123456789abcdef"


def test_an_entry_is_named_by_its_principal_and_aliases_every_former_name() -> None:
    # The deployer `laptop` (dev's SSO admin): its entry is named by the principal, and aliases the same entry
    # under Access (a move to clusterAdmins or a team and back), the names of releases that named entries by
    # list (`cluster-deployer-laptop`, `access-admin-...`, `access-team-batch-...`).
    doc = plan_stack("dev")
    [entry] = [r for r in doc.by_type(ENTRY) if r.inputs["principalArn"] == SSO_ADMIN]
    assert entry.name == f"cluster-entry-{SSO_SLUG}"
    assert entry.options["aliases"] == sorted([
        f"{ACCESS_URN}access-admin-{SSO_SLUG}", f"{ACCESS_URN}access-entry-{SSO_SLUG}",
        f"{ACCESS_URN}access-team-batch-{SSO_SLUG}", f"{CLUSTER_URN}cluster-deployer-laptop"])
    [assoc] = [r for r in doc.by_type(ASSOC) if r.parent == entry.urn]
    assert len(assoc.options["aliases"]) == 4
    assert all(a.startswith(("urn:pulumi:dev::eks-karpenter::eks-karpenter:index:Access$aws:eks/accessEntry:"
                             "AccessEntry$", "urn:pulumi:dev::eks-karpenter::eks-karpenter:index:Cluster$aws:eks/"
                             "accessEntry:AccessEntry$")) for a in assoc.options["aliases"])
    # A team's entry aliases the deployers' home too, so a move the other way keeps it as well.
    [team] = [r for r in doc.by_type(ENTRY) if r.inputs["principalArn"].endswith("role/team-batch-deploy")]
    assert f"{CLUSTER_URN}cluster-entry-123456789012-role-team-batch-deploy" in team.options["aliases"]
    assert f"{ACCESS_URN}access-team-batch-123456789012-role-team-batch-deploy" in team.options["aliases"]


@pytest.mark.parametrize(("move", "home"), [("clusterAdmins", "Cluster"), ("teams", "Access"),
                                            ("deployers", "Cluster")])
def test_a_principal_moved_between_lists_keeps_its_one_entry(move: str, home: str, tmp_path: Path) -> None:
    from eks_karpenter.tools.engine.diff import diff_plans

    config = stack_config("dev")
    access = config["eks-karpenter:access"]
    if move == "deployers":  # the team's principal becomes a deployer (its team keeps another principal)
        access["teams"][0]["principalArns"] = ["arn:aws:iam::123456789012:role/team-batch-ci"]
        access["deployers"].append({"name": "batch", "principalArn": TEAM_BATCH})
        moved = TEAM_BATCH
    else:  # the CI deployer becomes a cluster admin, or a team member
        access["deployers"] = [d for d in access["deployers"] if d["principalArn"] != CI]
        if move == "clusterAdmins":
            access["clusterAdmins"] = [CI]
        else:
            access["teams"][0]["principalArns"].append(CI)
        moved = CI
    result = plan_config(config, tmp_path, stack="dev")
    assert result.error is None, result.error
    diff = diff_plans(plan_stack("dev"), result.document)
    assert not diff.refused
    # Kept, not recreated: the entry is updated in place at most (a team's Kubernetes groups), and only the
    # association of a new policy is replaced (EKS associates several policies with one entry).
    touched = {(c.resource.type, c.op) for c in diff.changes if c.resource.inputs.get("principalArn") == moved}
    assert touched <= {(ENTRY, "update"), (ASSOC, "update"), (ASSOC, "replace")}, touched
    [entry] = [r for r in result.document.by_type(ENTRY) if r.inputs["principalArn"] == moved]
    assert entry.urn.split("::")[2].startswith(f"eks-karpenter:index:{home}$")
    # A move within one home (a deployer who becomes a cluster admin) keeps the very URN; across homes, an alias.
    assert entry.urn in {r.urn for r in plan_stack("dev").resources} or \
        any(new == entry.urn for _, new in diff.aliased)


# --- one identity for both providers ---------------------------------------------------------------------------

def test_the_token_follows_the_aws_provider_identity() -> None:
    config = stack_config("dev")
    config["aws:assumeRoles"] = [{"roleArn": CI, "sessionName": "pulumi"}]
    config["aws:profile"] = "platform"
    cfg = load(config)
    assert cfg.access.provider_credentials.role_arn == CI
    assert cfg.access.provider_credentials.profile == "platform"
    # What the Cluster component turns into the provider's `aws eks get-token` arguments (test_access.py
    # checks that step on the component).
    del config["aws:assumeRoles"], config["aws:profile"]
    assert load(config).access.provider_credentials.role_arn is None


def test_a_token_role_other_than_the_aws_provider_role_is_refused() -> None:
    config = stack_config("dev")
    config["aws:assumeRoles"] = [{"roleArn": CI}]
    config["eks-karpenter:access"]["providerCredentials"] = {"roleArn": PREVIEW}
    text = refusal(config)
    assert "eks-karpenter:access.providerCredentials.roleArn: the AWS provider acts as " + CI in text


def test_a_token_role_without_an_aws_provider_role_is_refused() -> None:
    config = stack_config("dev")
    config["eks-karpenter:access"]["providerCredentials"] = {"roleArn": CI}
    assert "the AWS provider acts as the process's own credentials" in refusal(config)


def test_a_token_profile_other_than_aws_profile_is_refused() -> None:
    config = stack_config("dev")
    config["aws:profile"] = "platform"
    config["eks-karpenter:access"]["providerCredentials"] = {"profile": "other"}
    assert "access.providerCredentials.profile: the AWS provider uses profile 'platform'" in refusal(config)


def test_the_aws_provider_role_must_be_a_declared_deployer() -> None:
    config = stack_config("dev")
    config["aws:assumeRoles"] = [{"roleArn": "arn:aws:iam::123456789012:role/someone-else"}]
    assert "role/someone-else (aws:assumeRoles) runs `pulumi up` here but is not a declared deployer" in \
        refusal(config)


def test_the_aws_provider_role_may_be_a_cluster_admin() -> None:
    config = stack_config("prod")
    config["aws:assumeRoles"] = [{"roleArn": "arn:aws:iam::123456789012:role/platform-break-glass"}]
    load(config)


def test_identity_helpers() -> None:
    identity = aws_provider_identity({"aws:assumeRoles": json.dumps([{"roleArn": "arn:aws:iam::1:role/a"},
                                                                     {"roleArn": CI}]), "aws:profile": "p"})
    assert (identity.role_arn, identity.profile) == (CI, "p")
    assert aws_provider_identity({}).role_arn is None
    cfg = AccessConfig.model_validate({"deployers": [{"name": "ci", "principalArn": CI}],
                                       "providerCredentials": {"roleArn": CI}})
    assert provider_identity_issues(cfg, identity, ("a",), cluster_created=True) == []


# --- the template --------------------------------------------------------------------------------------------

def test_the_template_shortcuts_give_a_laptop_deployer_and_a_reachable_endpoint(tmp_path: Path) -> None:
    config = {"aws:region": "eu-west-1", "eks-karpenter:clusterName": "platform",
              "eks-karpenter:deployerArn": "arn:aws:iam::123456789012:role/Admin",
              "eks-karpenter:deployerCidr": "198.51.100.7/32"}
    result = plan_config(config, tmp_path)
    assert result.error is None, result.error
    doc = result.document
    [cluster] = doc.by_type("eks:index:Cluster")
    assert cluster.inputs["endpointPublicAccess"] is True
    assert cluster.inputs["publicAccessCidrs"] == ["198.51.100.7/32"]
    [entry] = [r for r in doc.by_type(ENTRY) if in_cluster(r)]
    assert entry.name == "cluster-entry-123456789012-role-admin"
    assert entry.inputs["principalArn"] == "arn:aws:iam::123456789012:role/Admin"
    assert entry.urn in provider(doc).options["dependsOn"]


def test_a_shortcut_that_disagrees_with_its_section_is_refused() -> None:
    config = stack_config("dev")
    config["eks-karpenter:deployerCidr"] = "198.51.100.7/32"
    config["eks-karpenter:deployerArn"] = "arn:aws:iam::123456789012:role/Admin"
    text = refusal(config)
    assert "eks-karpenter:deployerCidr: eks-karpenter:cluster sets the public endpoint itself" in text
    assert "eks-karpenter:deployerArn: is not among eks-karpenter:access deployers" in text


# --- the diff: routine access changes never touch the cluster ------------------------------------------------------

def test_adding_an_api_source_or_a_deployer_changes_no_cluster_resource(tmp_path: Path) -> None:
    from eks_karpenter.tools.engine.diff import diff_plans

    base = plan_stack("prod")
    config = stack_config("prod")
    config["eks-karpenter:cluster"]["apiAccess"]["cidrs"].append("10.101.0.0/24")
    config["eks-karpenter:access"]["deployers"].append(
        {"name": "laptop", "principalArn": "arn:aws:iam::123456789012:role/platform-oncall"})
    result = plan_config(config, tmp_path, stack="prod")
    assert result.error is None, result.error
    diff = diff_plans(base, result.document)
    ops = {(c.resource.type, c.resource.name): c.op for c in diff.changes}
    assert ops[(RULE, "cluster-api-from-10-101-0-0-24")] == "create"
    assert ops[(ENTRY, "cluster-entry-123456789012-role-platform-oncall")] == "create"
    assert ops[(ASSOC, "cluster-entry-123456789012-role-platform-oncall")] == "create"
    assert all(op != "replace" and op != "delete" for op in ops.values()), ops
    assert not any(t in ("eks:index:Cluster", "eks:index:ManagedNodeGroup") for t, _ in ops), ops


def test_an_ingress_rule_moves_to_another_group_only_by_replacement() -> None:
    from eks_karpenter.tools.engine.replacements import REPLACE_ON_CHANGE, replacing_paths

    assert replacing_paths(RULE, REPLACE_ON_CHANGE) == ("securityGroupId",)


# --- access that cannot work is refused at plan time ----------------------------------------------------------

SSO_NAME = "AWSReservedSSO_AdministratorAccess_0123456789abcdef"
SSO_NO_PATH = f"arn:aws:iam::111122223333:role/{SSO_NAME}"
SSO_SESSION = f"arn:aws:sts::111122223333:assumed-role/{SSO_NAME}/jane.doe@example.com"


def with_deployers(*deployers: dict[str, Any]) -> dict[str, Any]:
    config = stack_config("dev")
    config["eks-karpenter:access"]["deployers"] = list(deployers)
    return config


def test_an_identity_center_role_without_its_path_is_refused_with_the_path_form() -> None:
    config = with_deployers({"name": "laptop", "principalArn": SSO_NO_PATH.replace("111122223333", "123456789012")})
    text = refusal(config)
    assert "eks-karpenter:access.deployers[0].principalArn: an IAM Identity Center role without its path" in text
    assert "principalArn is invalid" in text
    assert f"arn:aws:iam::123456789012:role/aws-reserved/sso.amazonaws.com/[<region>/]{SSO_NAME}" in text
    assert f"aws iam get-role --role-name {SSO_NAME} --query Role.Arn" in text
    assert "aws iam list-roles --path-prefix /aws-reserved/sso.amazonaws.com/" in text


def test_an_identity_center_role_without_its_path_is_refused_as_admin_and_team_principal() -> None:
    config = stack_config("prod")
    config["eks-karpenter:access"]["clusterAdmins"][0] = SSO_NO_PATH.replace("111122223333", "123456789012")
    assert "eks-karpenter:access.clusterAdmins[0]: an IAM Identity Center role without its path" in refusal(config)


def test_an_identity_center_session_arn_is_refused_with_the_role_and_its_path() -> None:
    config = with_deployers({"name": "laptop", "principalArn": SSO_SESSION.replace("111122223333", "123456789012")})
    text = refusal(config)
    assert "access.deployers[0].principalArn: a session ARN (assumed-role, as `aws sts get-caller-identity` " \
           "prints it)" in text
    assert f"arn:aws:iam::123456789012:role/aws-reserved/sso.amazonaws.com/[<region>/]{SSO_NAME}" in text


def test_a_plain_session_arn_names_the_role_behind_it() -> None:
    config = with_deployers({"name": "ci", "principalArn": "arn:aws:sts::123456789012:assumed-role/github-deploy/"
                             "GitHubActions"})
    text = refusal(config)
    assert "a session ARN (assumed-role) changes with every login: give the role, " \
           "arn:aws:iam::123456789012:role/github-deploy" in text


def test_the_template_prompt_names_the_key_it_wrote() -> None:
    config = {"aws:region": "eu-west-1", "eks-karpenter:clusterName": "platform",
              "eks-karpenter:deployerArn": SSO_NO_PATH.replace("111122223333", "123456789012"),
              "eks-karpenter:deployerCidr": "198.51.100.7/32"}
    assert "eks-karpenter:deployerArn: an IAM Identity Center role without its path" in refusal(config)


def test_the_template_prompt_says_how_to_find_the_role_with_its_path() -> None:
    import yaml

    from tests.support import REPO

    project = yaml.safe_load((REPO / "templates" / "eks-karpenter" / "Pulumi.yaml").read_text())
    prompt = project["template"]["config"]["deployerArn"]["description"]
    assert "aws-reserved/sso.amazonaws.com/" in prompt and "aws iam get-role" in prompt
    assert "Not the assumed-role ARN `aws sts get-caller-identity` prints" in prompt


def test_a_created_cluster_whose_only_deployer_is_read_only_is_refused() -> None:
    text = refusal(with_deployers({"name": "preview", "principalArn": PREVIEW, "role": "preview"}))
    assert "eks-karpenter:access.deployers: no `deploy` deployer" in text and "role: deploy" in text


def test_an_adopted_cluster_may_list_only_a_preview_deployer() -> None:
    config = stack_config("brownfield")
    config["eks-karpenter:access"] = {"deployers": [{"name": "preview", "principalArn": PREVIEW,
                                                     "role": "preview"}]}
    load(config)


def test_assuming_the_preview_role_for_every_run_is_refused() -> None:
    config = stack_config("dev")
    config["aws:assumeRoles"] = [{"roleArn": PREVIEW}]
    text = refusal(config)
    assert "aws:assumeRoles: the last role is the read-only preview deployer 'preview'" in text
    config["aws:assumeRoles"] = [{"roleArn": CI}]
    load(config)


# --- the identity running the program, resolved at preview ------------------------------------------------------

CALLER = "aws:index/getCallerIdentity:getCallerIdentity"


def as_caller(arn: str) -> dict[str, Any]:
    return {CALLER: {"accountId": "123456789012", "userId": "AROAEXAMPLE:session", "arn": arn}}


def run_as(stack: str, arn: str, preview: bool = False) -> Any:
    from eks_karpenter.tools.engine import run_plan

    from tests.support import REPO

    return run_plan(REPO, stack, invoke_results=as_caller(arn), preview=preview)


def test_offline_the_plan_runs_as_the_first_deploy_deployer_session() -> None:
    doc = plan_stack("dev")
    assert CALLER in [i.token for i in doc.invokes]
    from eks_karpenter.tools.engine.mocks import plan_caller

    laptop = stack_config("dev")["eks-karpenter:access"]["deployers"][0]["principalArn"]
    name = laptop.rsplit("/", 1)[1]
    assert plan_caller(flat(stack_config("dev")), "eks-karpenter") == \
        f"arn:aws:sts::123456789012:assumed-role/{name}/eks-karpenter-plan"


def test_an_identity_center_session_matches_its_declared_role_by_name() -> None:
    # The session ARN has no IAM path; the declared role has aws-reserved/sso.amazonaws.com/eu-west-1/.
    result = run_as("dev", "arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_PlatformAdmin_0123456789abcdef/"
                    "jane.doe@example.com")
    assert result.error is None, result.error


@pytest.mark.parametrize("arn", [
    "arn:aws:sts::123456789012:assumed-role/someone-else/session",
    "arn:aws:iam::123456789012:user/jane",
    "arn:aws:iam::123456789012:root",
    "arn:aws:sts::999999999999:assumed-role/github-deploy/ci-run-1",  # the CI role's name, in another account
    "arn:aws:sts::123456789012:assumed-role/team-batch-deploy/ci",  # a team's principal: namespace access only
])
def test_an_undeclared_caller_is_refused_before_anything_is_registered(arn: str) -> None:
    result = run_as("dev", arn)
    assert isinstance(result.error, ConfigError)
    text = str(result.error)
    assert f"eks-karpenter:access.deployers: `pulumi up` (or destroy) runs as {arn}" in text
    assert "not a declared deployer or cluster admin" in text and "aws iam get-role" in text
    assert [r for r in result.document.resources if r.custom] == []


def test_the_preview_deployer_may_preview_but_not_up() -> None:
    session = "arn:aws:sts::123456789012:assumed-role/github-preview-dev/GitHubActions"
    assert run_as("dev", session, preview=True).error is None
    result = run_as("dev", session)
    assert isinstance(result.error, ConfigError)
    text = str(result.error)
    assert "eks-karpenter:access.deployers[2].role: " + session + " is the read-only deployer 'preview'" in text
    assert "may run `pulumi preview`, not `pulumi up` or destroy" in text
    assert [r for r in result.document.resources if r.custom] == []


def test_an_undeclared_caller_is_refused_at_preview_too() -> None:
    result = run_as("dev", "arn:aws:sts::123456789012:assumed-role/someone-else/s", preview=True)
    assert isinstance(result.error, ConfigError) and "`pulumi preview` runs as" in str(result.error)


def test_a_cluster_admin_may_run_up() -> None:
    assert run_as("prod", "arn:aws:sts::123456789012:assumed-role/platform-break-glass/oncall").error is None


def test_an_adopted_cluster_without_deployers_is_not_checked() -> None:
    assert run_as("brownfield", "arn:aws:iam::123456789012:user/someone").error is None


def test_cluster_admins_are_awaited_like_deployers() -> None:
    # Any cluster admin may run `up`: the provider waits for their entries, and destroy deletes them last.
    doc = plan_stack("prod")
    admins = stack_config("prod")["eks-karpenter:access"]["clusterAdmins"]
    entries = {r.inputs["principalArn"]: r for r in doc.by_type(ENTRY) if r.inputs["principalArn"] in admins}
    assert set(entries) == set(admins)
    depends = set(provider(doc).options["dependsOn"])
    for entry in entries.values():
        [assoc] = [r for r in doc.by_type(ASSOC) if r.parent == entry.urn]
        assert {entry.urn, assoc.urn} <= depends
        assert assoc.inputs["policyArn"] == POLICY + "AmazonEKSClusterAdminPolicy"
        # Made by the Access component before: kept through an alias, not replaced.
        assert entry.name.startswith("cluster-entry-")
        old = entry.urn.replace("eks-karpenter:index:Cluster$", "eks-karpenter:index:Access$")
        assert old.replace("::cluster-entry-", "::access-entry-") in entry.options["aliases"]
        assert old.replace("::cluster-entry-", "::access-admin-") in entry.options["aliases"]
    assert doc.outputs["accessPrincipals"] == admins
