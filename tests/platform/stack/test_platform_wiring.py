"""What the program registers for the cluster, IAM, Karpenter and interruption layers, per stack."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from eks_karpenter import versions
from eks_karpenter.config.errors import ConfigError
from eks_karpenter.labels import SYSTEM_NODE_LABEL
from eks_karpenter.platform.interruption import INTERRUPTION_EVENTS
from eks_karpenter.tools.engine import PlanDocument, PlannedResource, plan_program
from eks_karpenter.tools.engine.diff import diff_plans

from tests.support import REPO, STACKS, invoke_tokens, plan_config, plan_stack, stack_config

EKS = "eks:index:Cluster"
MNG = "eks:index:ManagedNodeGroup"
ADDON = "aws:eks/addon:Addon"
RELEASE = "kubernetes:helm.sh/v3:Release"
POLICY = "aws:iam/policy:Policy"
ROLE = "aws:iam/role:Role"


def only(doc: PlanDocument, type_: str, name: str | None = None) -> PlannedResource:
    found = [r for r in doc.by_type(type_) if name is None or r.name == name]
    assert len(found) == 1, [r.name for r in found]
    return found[0]


def statements(doc: PlanDocument) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in doc.by_type(POLICY):
        if p.parent.endswith("::karpenter-iam"):
            out += json.loads(p.inputs["policy"])["Statement"]
    return out


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


@pytest.mark.slow
@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_created_cluster(stack: str) -> None:
    doc = plan_stack(stack)
    c = only(doc, EKS).inputs
    assert c["name"] == doc.outputs["clusterName"]
    assert c["authenticationMode"] == "API"
    assert c["skipDefaultNodeGroup"] is True
    assert c["skipDefaultSecurityGroups"] is True  # the EKS cluster SG is the one discovery SG
    assert c["createOidcProvider"] is True
    by_zone = doc.outputs["privateSubnetIds"]
    assert c["privateSubnetIds"] == [by_zone[z] for z in sorted(by_zone)]
    assert "publicSubnetIds" not in c
    assert c["version"] in versions.SUPPORTED_KUBERNETES_VERSIONS


def test_prod_cluster_is_private_encrypted_logged_and_protected() -> None:
    doc = plan_stack("prod")
    c = only(doc, EKS)
    assert c.inputs["endpointPrivateAccess"] is True
    assert c.inputs["endpointPublicAccess"] is False
    assert set(c.inputs["enabledClusterLogTypes"]) == {"api", "audit", "authenticator", "controllerManager",
                                                       "scheduler"}
    key = only(doc, "aws:kms/key:Key")
    assert key.inputs["enableKeyRotation"] is True
    assert c.inputs["encryptionConfigKeyArn"].startswith("arn:aws:kms:us-east-1:")
    assert c.inputs["deletionProtection"] is True
    assert c.options.get("protect") is True


@pytest.mark.slow
def test_dev_cluster_public_endpoint_is_open_to_hosted_runners_and_unencrypted() -> None:
    doc = plan_stack("dev")
    c = only(doc, EKS).inputs
    assert c["endpointPublicAccess"] is True
    assert c["publicAccessCidrs"] == ["0.0.0.0/0"]  # GitHub-hosted runners have no fixed range (a warning)
    assert "encryptionConfigKeyArn" not in c
    assert doc.by_type("aws:kms/key:Key") == []
    assert c["deletionProtection"] is False


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_system_node_group(stack: str) -> None:
    doc = plan_stack(stack)
    g = only(doc, MNG, "cluster-system").inputs
    assert g["capacityType"] == "ON_DEMAND"
    assert g["scalingConfig"]["minSize"] >= 2
    assert g["labels"][SYSTEM_NODE_LABEL] == "true"
    assert g["taints"] == [{"key": "CriticalAddonsOnly", "value": "true", "effect": "NO_SCHEDULE"}]
    assert len(g["subnetIds"]) == len(doc.outputs["privateSubnetIds"]) >= 2  # spread over the zones


@pytest.mark.slow
def test_dev_cas_era_spot_group() -> None:
    g = only(plan_stack("dev"), MNG, "cluster-spot-workshop-spot").inputs
    assert g["capacityType"] == "SPOT"
    assert g["instanceTypes"] == ["m5.large", "m5a.large", "m5d.large", "m5n.large", "m4.large"]
    assert g["labels"] == {"lifecycle": "Ec2Spot"}
    assert g["taints"] == [{"key": "spotInstance", "value": "true", "effect": "PREFER_NO_SCHEDULE"}]
    assert (g["scalingConfig"]["minSize"], g["scalingConfig"]["maxSize"]) == (0, 4)


@pytest.mark.slow
@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_addons_are_pinned_and_ordered_after_the_system_group(stack: str) -> None:
    doc = plan_stack(stack)
    system = only(doc, MNG, "cluster-system")
    addons = {a.inputs["addonName"]: a for a in doc.by_type(ADDON)}
    assert set(addons) == {"vpc-cni", "kube-proxy", "coredns", "eks-pod-identity-agent"}
    version = only(doc, EKS).inputs["version"]
    for name, addon in addons.items():
        assert addon.inputs["addonVersion"] == versions.ADDON_VERSIONS[version][name]
        assert system.urn in addon.dependencies
    coredns = json.loads(addons["coredns"].inputs["configurationValues"])
    assert {"key": "CriticalAddonsOnly", "operator": "Exists", "effect": "NoSchedule"} in coredns["tolerations"]


@pytest.mark.slow
@pytest.mark.parametrize("stack", ["dev", "prod", "brownfield"])
def test_node_access_entry_is_ec2_linux_for_the_node_role(stack: str) -> None:
    doc = plan_stack(stack)
    entry = only(doc, "aws:eks/accessEntry:AccessEntry", "karpenter-iam-node-access")
    assert entry.inputs["type"] == "EC2_LINUX"
    assert entry.inputs["principalArn"] == doc.outputs["nodeRoleArn"]
    assert entry.inputs["clusterName"] == doc.outputs["clusterName"]
    # API mode: no aws-auth; the only ConfigMaps are the destroy guard and (with observability) the dashboard.
    assert {c.name for c in doc.by_type("kubernetes:core/v1:ConfigMap")} <= {"destroy-guard", "observability-dashboard"}


@pytest.mark.slow
@pytest.mark.parametrize("stack", ["dev", "prod", "brownfield"])
def test_node_trust_policy(stack: str) -> None:
    node = only(plan_stack(stack), ROLE, "karpenter-node-role")
    trust = json.loads(node.inputs["assumeRolePolicy"])["Statement"][0]
    assert trust["Principal"] == {"Service": "ec2.amazonaws.com"}
    assert trust["Action"] == "sts:AssumeRole"


@pytest.mark.slow
@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_pod_identity_trust(stack: str) -> None:
    doc = plan_stack(stack)
    controller = only(doc, ROLE, "karpenter-iam-controller")
    trust = json.loads(controller.inputs["assumeRolePolicy"])["Statement"][0]
    assert trust["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert set(as_list(trust["Action"])) == {"sts:AssumeRole", "sts:TagSession"}
    assoc = only(doc, "aws:eks/podIdentityAssociation:PodIdentityAssociation").inputs
    assert (assoc["namespace"], assoc["serviceAccount"]) == ("kube-system", "karpenter")
    assert assoc["roleArn"] == doc.outputs["controllerRoleArn"]


def test_brownfield_controller_uses_irsa_on_the_existing_oidc_provider() -> None:
    doc = plan_stack("brownfield")
    assert "aws:iam/getOpenIdConnectProvider:getOpenIdConnectProvider" in invoke_tokens(doc)
    assert doc.by_type("aws:eks/podIdentityAssociation:PodIdentityAssociation") == []
    trust = json.loads(only(doc, ROLE, "karpenter-iam-controller").inputs["assumeRolePolicy"])["Statement"][0]
    issuer = doc.outputs["oidcIssuer"]
    assert trust["Principal"] == {"Federated": doc.outputs["oidcProviderArn"]}
    assert trust["Action"] == "sts:AssumeRoleWithWebIdentity"
    assert trust["Condition"]["StringEquals"] == {f"{issuer}:sub": "system:serviceaccount:kube-system:karpenter",
                                                  f"{issuer}:aud": "sts.amazonaws.com"}
    values = only(doc, RELEASE, "karpenter-controller").inputs["values"]
    assert values["serviceAccount"]["annotations"] == {"eks.amazonaws.com/role-arn": doc.outputs["controllerRoleArn"]}


@pytest.mark.slow
@pytest.mark.parametrize("stack", ["dev", "prod", "brownfield"])
def test_controller_grants_are_scoped(stack: str) -> None:
    doc = plan_stack(stack)
    stmts = statements(doc)
    assert stmts
    for s in stmts:
        actions = as_list(s["Action"])
        resources = as_list(s["Resource"])
        if "iam:PassRole" in actions:
            assert resources == [doc.outputs["nodeRoleArn"]]
        if any(a.startswith("sqs:") for a in actions):
            assert resources == [f"arn:aws:sqs:{_region(doc)}:123456789012:{doc.outputs['interruptionQueueName']}"]
        if "ssm:GetParameter" in actions:
            assert all(r.endswith(":parameter/aws/service/*") for r in resources)
        if "eks:DescribeCluster" in actions:
            assert resources == [f"arn:aws:eks:{_region(doc)}:123456789012:cluster/{doc.outputs['clusterName']}"]
        assert "*" not in actions and "iam:*" not in actions


def _region(doc: PlanDocument) -> str:
    return str(only(doc, "aws:sqs/queue:Queue").inputs.get("region") or
               next(iter(doc.outputs["privateSubnetIds"]))[:-1])


@pytest.mark.slow
@pytest.mark.parametrize("stack", ["dev", "prod", "brownfield"])
def test_interruption_queue_and_rules(stack: str) -> None:
    doc = plan_stack(stack)
    queue = only(doc, "aws:sqs/queue:Queue").inputs
    assert queue["name"] == doc.outputs["clusterName"] == doc.outputs["interruptionQueueName"]
    assert queue["messageRetentionSeconds"] == 300
    assert queue["sqsManagedSseEnabled"] is True
    rules = doc.by_type("aws:cloudwatch/eventRule:EventRule")
    patterns = sorted((json.loads(r.inputs["eventPattern"])["source"][0],
                       json.loads(r.inputs["eventPattern"])["detail-type"][0]) for r in rules)
    assert patterns == sorted([
        ("aws.health", "AWS Health Event"),
        ("aws.ec2", "EC2 Spot Instance Interruption Warning"),
        ("aws.ec2", "EC2 Instance Rebalance Recommendation"),
        ("aws.ec2", "EC2 Instance State-change Notification"),
        ("aws.ec2", "EC2 Capacity Reservation Instance Interruption Warning"),
    ])
    assert len(INTERRUPTION_EVENTS) == 5
    targets = doc.by_type("aws:cloudwatch/eventTarget:EventTarget")
    assert len(targets) == 5
    assert {t.inputs["arn"] for t in targets} == {f"arn:aws:sqs:{_region(doc)}:123456789012:{queue['name']}"}
    # the controller policy's SQS statement names exactly this queue
    sqs = [s for s in statements(doc) if any(a.startswith("sqs:") for a in as_list(s["Action"]))]
    assert len(sqs) == 1
    assert as_list(sqs[0]["Resource"]) == [f"arn:aws:sqs:{_region(doc)}:123456789012:{queue['name']}"]


@pytest.mark.slow
@pytest.mark.parametrize("stack", ["dev", "prod", "brownfield"])
def test_karpenter_releases_values_and_order(stack: str) -> None:
    doc = plan_stack(stack)
    crd = only(doc, RELEASE, "karpenter-crd")
    controller = only(doc, RELEASE, "karpenter-controller")
    assert crd.inputs["chart"] == versions.KARPENTER_CRD_CHART
    assert controller.inputs["chart"] == versions.KARPENTER_CHART
    assert crd.inputs["version"] == controller.inputs["version"] == versions.KARPENTER_VERSION
    assert controller.inputs["skipCrds"] is True
    assert crd.urn in controller.dependencies
    values = controller.inputs["values"]
    settings = values["settings"]
    assert settings["clusterName"] == doc.outputs["clusterName"]
    assert settings["clusterEndpoint"] == doc.outputs["clusterEndpoint"]
    assert settings["interruptionQueue"] == doc.outputs["interruptionQueueName"]
    assert not settings["interruptionQueue"].startswith(("arn:", "https:"))
    # the controller waits for its identity and (for created clusters) the node groups and add-ons
    # (depends_on a component expands to its children)
    needed = {only(doc, "aws:eks/accessEntry:AccessEntry", "karpenter-iam-node-access").urn,
              *(r.urn for r in doc.by_type("aws:eks/podIdentityAssociation:PodIdentityAssociation"))}
    assert needed <= set(crd.dependencies) & set(controller.dependencies)
    for dep in [*doc.by_type(MNG), *doc.by_type(ADDON)]:
        assert dep.urn in controller.dependencies


STATEFUL_TYPES = {"aws:ec2/vpc:Vpc", "aws:ec2/subnet:Subnet", "eks:index:Cluster", "aws:kms/key:Key",
                  "aws:cloudwatch/logGroup:LogGroup"}


def test_prod_protects_what_holds_state_and_nothing_replaceable() -> None:
    doc = plan_stack("prod")
    protected = {(r.type, r.name) for r in doc.resources if r.options.get("protect")}
    stateful = {(r.type, r.name) for r in doc.resources if r.type in STATEFUL_TYPES}
    assert protected == stateful
    assert {t for t, _ in protected} == STATEFUL_TYPES  # prod has each: VPC, subnets, cluster, key, log groups
    # Components protect nothing themselves, so nothing inherits it: node groups, launch templates, add-ons,
    # the Kubernetes provider, IAM, the interruption queue stay replaceable.
    for type_ in ("eks-karpenter:index:Network", "eks-karpenter:index:Cluster", MNG, ADDON,
                  "aws:ec2/launchTemplate:LaunchTemplate", "pulumi:providers:kubernetes", "aws:iam/role:Role",
                  "eks-karpenter:index:InterruptionQueue"):
        assert doc.by_type(type_) and not any(r.options.get("protect") for r in doc.by_type(type_)), type_


def test_an_unprotected_stack_protects_nothing() -> None:
    assert not [r.urn for r in plan_stack("dev").resources if r.options.get("protect")]


def test_nat_gateways_delete_first_and_the_internet_gateway_follows_its_vpc() -> None:
    doc = plan_stack("prod")
    # The Elastic IP outlives a NAT replacement: the old gateway must release it before the new one takes it.
    assert all(n.options.get("deleteBeforeReplace") is True for n in doc.by_type("aws:ec2/natGateway:NatGateway"))
    (igw,) = doc.by_type("aws:ec2/internetGateway:InternetGateway")
    assert igw.options.get("replaceOnChanges") == ["vpcId"]


SLR = "aws:iam/serviceLinkedRole:ServiceLinkedRole"
GET_ROLES = "aws:iam/getRoles:getRoles"
SPOT_ROLE_LOOKUP = {"nameRegex": "^AWSServiceRoleForEC2Spot$", "pathPrefix": "/aws-service-role/spot.amazonaws.com/"}
USED_ACCOUNT = {GET_ROLES: {"names": ["AWSServiceRoleForEC2Spot"],
                            "arns": ["arn:aws:iam::123456789012:role/aws-service-role/spot.amazonaws.com/"
                                     "AWSServiceRoleForEC2Spot"]}}


def _karpenter_override(stack: str, **values: Any) -> dict[str, str]:
    return {"eks-karpenter:karpenter": json.dumps({**stack_config(stack).get("eks-karpenter:karpenter", {}),
                                                   **values})}


@pytest.mark.slow
@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_spot_service_linked_role_default_looks_up_then_creates_in_a_fresh_account(stack: str) -> None:
    doc = plan_stack(stack)
    assert [i.args for i in doc.invokes if i.token == GET_ROLES] == [SPOT_ROLE_LOOKUP]
    slr = only(doc, SLR)
    assert slr.inputs["awsServiceName"] == "spot.amazonaws.com"
    assert slr.options.get("retainOnDelete") is True


@pytest.mark.slow
def test_spot_service_linked_role_default_imports_it_in_a_used_account() -> None:
    # Same URN and inputs in a fresh and a used account: the `up` after the one that created it finds it and
    # keeps it (an import of the id already in the state is a no-op), so it never flips out of the state.
    fresh, used = plan_stack("dev"), plan_program(REPO, "dev", invoke_results=USED_ACCOUNT)
    assert GET_ROLES in invoke_tokens(used)
    slr = only(used, SLR)
    assert slr.urn == only(fresh, SLR).urn and slr.inputs == only(fresh, SLR).inputs
    assert slr.options["import"] == USED_ACCOUNT[GET_ROLES]["arns"][0]
    assert slr.options.get("retainOnDelete") is True
    assert "import" not in only(fresh, SLR).options
    # What AWS sets on the role is not fought, so the import matches it.
    assert {"description", "customSuffix", "tags"} <= set(slr.options["ignoreChanges"])
    assert not diff_plans(fresh, used).has_changes


@pytest.mark.slow
def test_spot_service_linked_role_explicit_choices() -> None:
    created = plan_program(REPO, "dev", config_overrides=_karpenter_override("dev", spotServiceLinkedRole="create"),
                           invoke_results=USED_ACCOUNT)
    assert GET_ROLES not in invoke_tokens(created)
    assert only(created, SLR).options.get("retainOnDelete") is True
    existing = plan_stack("brownfield")  # spotServiceLinkedRole: exists
    assert GET_ROLES not in invoke_tokens(existing)
    assert existing.by_type(SLR) == []


@pytest.mark.slow
@pytest.mark.parametrize("stack", STACKS)
def test_any_service_linked_role_is_retained_and_looked_up_first(stack: str) -> None:
    doc = plan_stack(stack)
    for slr in doc.by_type(SLR):
        assert slr.options.get("retainOnDelete") is True
        if stack_config(stack).get("eks-karpenter:karpenter", {}).get("spotServiceLinkedRole", "auto") == "auto":
            assert GET_ROLES in invoke_tokens(doc)


def test_brownfield_adopts_the_cluster_by_name() -> None:
    doc = plan_stack("brownfield")
    assert doc.by_type(EKS) == [] and doc.by_type(MNG) == [] and doc.by_type(ADDON) == []
    assert "aws:eks/getCluster:getCluster" in invoke_tokens(doc)
    assert doc.outputs["clusterName"] == "legacy-cas"
    provider = only(doc, "pulumi:providers:kubernetes")
    assert provider.inputs["kubeconfig"] == "[secret]"
    assert doc.outputs["clusterEndpoint"].startswith("https://")


@pytest.mark.slow
def test_nth_daemonset_runs_only_on_non_karpenter_spot_nodes() -> None:
    for stack in ("dev", "brownfield"):
        release = only(plan_stack(stack), RELEASE, "node-termination-handler-release")
        values = release.inputs["values"]
        terms = values["daemonsetAffinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
            "nodeSelectorTerms"]
        for term in terms:
            exprs = {(e["key"], e["operator"]): e.get("values") for e in term["matchExpressions"]}
            assert ("karpenter.sh/nodepool", "DoesNotExist") in exprs
            assert exprs.get(("lifecycle", "In")) == ["Ec2Spot"]
        assert values["enableSqsTerminationDraining"] is False
    assert plan_stack("prod").by_type(RELEASE) and not [
        r for r in plan_stack("prod").by_type(RELEASE) if "termination" in r.name]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_cluster_scoped_iam_children_wait_for_the_cluster(stack: str) -> None:
    # They name the cluster as a plain string, so only an explicit edge orders them after it.
    doc = plan_stack(stack)
    cluster = only(doc, EKS).urn
    for type_ in ("aws:eks/accessEntry:AccessEntry", "aws:eks/podIdentityAssociation:PodIdentityAssociation"):
        assert doc.by_type(type_)
        for r in doc.by_type(type_):
            assert cluster in r.dependencies, r.name


@pytest.mark.slow
def test_nth_release_waits_for_the_node_groups() -> None:
    doc = plan_stack("dev")
    release = only(doc, RELEASE, "node-termination-handler-release")
    assert all(g.urn in release.dependencies for g in doc.by_type(MNG))


def test_controller_on_fargate_gets_a_profile_and_irsa(tmp_path: Path) -> None:
    cfg = stack_config("dev")
    cfg["eks-karpenter:karpenter"] = {"identity": "irsa", "controllerOnFargate": True}
    result = plan_config(cfg, tmp_path, stack="fargate")
    assert result.error is None, result.error
    doc = result.document
    profile = only(doc, "aws:eks/fargateProfile:FargateProfile").inputs
    assert profile["selectors"] == [{"namespace": "kube-system", "labels": {
        "app.kubernetes.io/name": "karpenter", "app.kubernetes.io/instance": "karpenter"}}]
    assert profile["subnetIds"] == [doc.outputs["privateSubnetIds"][z] for z in sorted(doc.outputs["privateSubnetIds"])]
    execution = json.loads(only(doc, ROLE, "karpenter-fargate-pod-execution").inputs["assumeRolePolicy"])
    assert execution["Statement"][0]["Principal"] == {"Service": "eks-fargate-pods.amazonaws.com"}
    assert execution["Statement"][0]["Condition"]["ArnLike"]["aws:SourceArn"].endswith(
        ":fargateprofile/dev-karpenter/*")
    # IRSA instead of Pod Identity; the release waits for the profile
    assert doc.by_type("aws:eks/podIdentityAssociation:PodIdentityAssociation") == []
    trust = json.loads(only(doc, ROLE, "karpenter-iam-controller").inputs["assumeRolePolicy"])["Statement"][0]
    assert trust["Action"] == "sts:AssumeRoleWithWebIdentity"
    controller = only(doc, RELEASE, "karpenter-controller")
    assert doc.get("aws:eks/fargateProfile:FargateProfile", "karpenter-fargate").urn in controller.dependencies
    values = controller.inputs["values"]
    assert values["serviceAccount"]["annotations"]["eks.amazonaws.com/role-arn"] == doc.outputs["controllerRoleArn"]
    terms = values["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert all(e["key"] != "node-role/system" for t in terms for e in t["matchExpressions"])


@pytest.mark.slow
def test_policy_documents_are_built_without_invokes() -> None:
    for stack in ("dev", "prod", "brownfield"):
        invokes = invoke_tokens(plan_stack(stack))
        assert "aws:iam/getPolicyDocument:getPolicyDocument" not in invokes
        # Per stack, not per pool: caller identity (the check of who runs it, the account for policies, and the
        # example-account check), the zones and their offerings, the stack's own VPC (test_account_lookups.py),
        # the fixed names an earlier cluster or tool may hold (the control-plane log group, the queue);
        # for an existing cluster also the preflight (cluster, caller, session context, the in-cluster look-up,
        # one look-up per named node group) and the OIDC provider; with a Prometheus Operator scraping (prod), the
        # cluster and its CRDs; besides, the pin look-ups (tests/platform/stack/test_lookups.py): per add-on,
        # alias and node group.
        pins = ("aws:eks/getAddonVersion:getAddonVersion", "aws:ssm/getParameter:getParameter",
                "eks-karpenter:eks:addonVersions")
        groups = invokes.count("aws:eks/getNodeGroup:getNodeGroup")
        rest = [t for t in invokes if t not in pins]
        assert len(rest) - groups <= {"dev": 9, "prod": 11, "brownfield": 10}[stack], rest
        assert groups == (0 if stack != "brownfield" else 3)  # core, and the two groups being replaced


@pytest.mark.slow
def test_prod_kms_key_is_protected() -> None:
    key = only(plan_stack("prod"), "aws:kms/key:Key")
    assert key.options.get("protect") is True


def test_aws_auth_compatibility_is_refused_on_a_created_cluster(tmp_path: Path) -> None:
    # pulumi-eks would write aws-auth as the creator, who has no admin entry: a 401 with the cluster half-built.
    assert "roleMappings" not in only(plan_stack("dev"), EKS).inputs
    cfg = stack_config("dev")
    cfg["eks-karpenter:cluster"].update(authenticationMode="API_AND_CONFIG_MAP", awsAuthCompatibility=True)
    result = plan_config(cfg, tmp_path, stack="compat")
    assert isinstance(result.error, ConfigError)
    text = str(result.error)
    assert "eks-karpenter:cluster.awsAuthCompatibility: not on a cluster this stack creates" in text
    assert "writes the aws-auth ConfigMap as the cluster's creator" in text and "401" in text
    assert result.document.resources == []
