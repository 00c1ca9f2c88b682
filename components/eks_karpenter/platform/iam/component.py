"""IAM wiring for Karpenter: the node role, the controller role and its policies, and node access."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Literal, NotRequired, TypedDict

import pulumi
import pulumi_aws as aws

from eks_karpenter import versions
from eks_karpenter.arns import partition_of
from eks_karpenter.platform.iam.names import IamNames
from eks_karpenter.platform.iam.policy import (
    NODE_MANAGED_POLICIES,
    PolicyScope,
    aws_managed_policy_arn,
    controller_policies,
    irsa_trust_policy,
    node_trust_policy,
    pod_identity_trust_policy,
)
from eks_karpenter.platform.wiring import caller_identity, child_options

SERVICE_ACCOUNT = "karpenter"


class NodeRoleArgs(TypedDict):
    """Inputs of the NodeRole component."""

    roleName: str
    """Explicit role (and instance profile) name: EC2NodeClasses name the role before it exists."""
    description: str
    """What the nodes are, for the IAM console."""
    region: str
    """AWS region (for the partition)."""
    additionalPolicyArns: Sequence[str]
    """Managed policies attached on top of the four EKS node policies."""
    instanceProfile: bool
    """Also create an instance profile (for EC2NodeClass `instanceProfile`, private clusters)."""
    tags: dict[str, str]
    """Tags for the role."""
    permissionsBoundary: NotRequired[str | None]
    """Permissions boundary (a managed policy ARN) on the role; None: no boundary."""


class NodeRole(pulumi.ComponentResource):
    """An EC2 node role for EKS: EC2 trust and the EKS worker, CNI, ECR-pull and SSM policies (Karpenter's nodes
    and the managed node groups each get one)."""

    role_name: pulumi.Output[str]
    """Role name (EC2NodeClass `role`)."""
    role_arn: pulumi.Output[str]
    """Role ARN (the only role the controller may pass)."""
    instance_profile_name: pulumi.Output[str] | None
    """Instance profile name, when one was requested."""

    def __init__(self, name: str, args: NodeRoleArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("eks-karpenter:index:NodeRole", name, None, opts)
        partition = partition_of(args["region"])
        role = aws.iam.Role(name, name=args["roleName"], description=args["description"],
                            assume_role_policy=json.dumps(node_trust_policy(partition)), tags=args["tags"],
                            permissions_boundary=args.get("permissionsBoundary"),
                            opts=pulumi.ResourceOptions(parent=self))
        arns = [aws_managed_policy_arn(partition, p) for p in NODE_MANAGED_POLICIES]
        attachments: list[pulumi.Resource] = [
            aws.iam.RolePolicyAttachment(f"{name}-{arn.rsplit('/', 1)[-1]}", role=role.name, policy_arn=arn,
                                         opts=pulumi.ResourceOptions(parent=role))
            for arn in [*arns, *args["additionalPolicyArns"]]]
        self.ready: list[pulumi.Resource] = [role, *attachments]
        """The role and every policy attachment: what must exist while nodes using the role run (and so what
        NodeClasses depend on, and outlive on destroy)."""
        self.instance_profile_name = None
        if args["instanceProfile"]:
            profile = aws.iam.InstanceProfile(name, name=args["roleName"], role=role.name,
                                              tags=args["tags"], opts=pulumi.ResourceOptions(parent=self))
            self.instance_profile_name = profile.name
            self.ready.append(profile)
        self.role_name = role.name
        self.role_arn = role.arn
        self.register_outputs({"roleName": self.role_name, "roleArn": self.role_arn,
                               "instanceProfileName": self.instance_profile_name})


class KarpenterIamArgs(TypedDict):
    """Inputs of the KarpenterIam component."""

    clusterName: str
    """Cluster Karpenter manages nodes for."""
    region: str
    """AWS region."""
    identity: Literal["podIdentity", "irsa"]
    """How the controller gets AWS credentials."""
    namespace: str
    """Namespace of the controller's service account."""
    nodeRoleArn: pulumi.Input[str]
    """The only role the controller may pass to EC2."""
    interruptionQueueArn: pulumi.Input[str] | None
    """Interruption queue ARN (SQS permissions are scoped to it); None when interruption handling is off."""
    zonalShift: bool
    """Grant the zonal-shift read permission."""
    karpenterVersion: NotRequired[str]
    """The Karpenter release the policies are for (default `versions.KARPENTER_VERSION`): each release's
    getting-started template grants slightly different actions."""
    oidcProviderArn: pulumi.Input[str]
    """IRSA only: the cluster's IAM OIDC provider."""
    oidcIssuer: pulumi.Input[str]
    """IRSA only: the issuer without `https://`."""
    spotServiceLinkedRole: Literal["auto", "create", "exists"]
    """`AWSServiceRoleForEC2Spot` (once per account; spot launches fail without it): `auto` looks it up and
    registers it only when absent, `create` registers it, `exists` does neither."""
    tags: dict[str, str]
    """Tags for IAM resources."""
    iamNames: NotRequired[IamNames]
    """How the controller role and policies are named (default: per region, `IamNames(clusterName, region)`)."""
    permissionsBoundary: NotRequired[str | None]
    """Permissions boundary (a managed policy ARN) on the controller role; None: no boundary."""


class KarpenterIam(pulumi.ComponentResource):
    """The controller's least-privilege identity (Pod Identity or IRSA), its split managed policies, the node
    role's EC2_LINUX access entry, and the spot service-linked role."""

    controller_role_arn: pulumi.Output[str]
    """The controller's role (IRSA: the service-account annotation)."""
    policy_arns: pulumi.Output[dict[str, str]]
    """Controller managed policies by short name."""
    ready: list[pulumi.Resource]
    """The controller role, its policies and their attachments, its Pod Identity association, the node role's
    access entry and the spot service-linked role: what the controller release must wait for."""

    def __init__(self, name: str, args: KarpenterIamArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("eks-karpenter:index:KarpenterIam", name, None, opts)
        cluster, region = args["clusterName"], args["region"]
        # The access entry and the Pod Identity association name the cluster as a string: they must still wait
        # for it, so the component's depends_on (the cluster) is passed down.
        child = child_options(self, opts)
        account = caller_identity(self).account_id
        names = args.get("iamNames") or IamNames(cluster, region)

        if args["identity"] == "podIdentity":
            trust: pulumi.Input[str] = json.dumps(pod_identity_trust_policy())
        else:
            trust = pulumi.Output.all(args["oidcProviderArn"], args["oidcIssuer"]).apply(
                lambda a: json.dumps(irsa_trust_policy(a[0], a[1], args["namespace"], SERVICE_ACCOUNT)))
        role = aws.iam.Role(f"{name}-controller", name=names.role("karpenter-controller"),
                            description=f"Karpenter controller for EKS cluster {cluster}",
                            assume_role_policy=trust, permissions_boundary=args.get("permissionsBoundary"),
                            tags=args["tags"], opts=child)

        queue_arn = args["interruptionQueueArn"]
        version = args.get("karpenterVersion", versions.KARPENTER_VERSION)
        documents = pulumi.Output.all(account, args["nodeRoleArn"], queue_arn).apply(
            lambda a: {
                short: json.dumps(doc, sort_keys=True)
                for short, doc in controller_policies(PolicyScope(
                    cluster_name=cluster, region=region, account_id=a[0], node_role_arn=a[1],
                    interruption_queue_arn=a[2], zonal_shift=args["zonalShift"],
                    karpenter_version=version)).items()
            })
        # Which policies exist is known from config alone, so the set of resources never depends on an apply.
        shorts = list(controller_policies(PolicyScope(
            cluster_name=cluster, region=region, account_id="000000000000",
            node_role_arn=f"arn:{partition_of(region)}:iam::000000000000:role/placeholder",
            interruption_queue_arn=None if queue_arn is None else
            f"arn:{partition_of(region)}:sqs:{region}:000000000000:placeholder",
            zonal_shift=args["zonalShift"], karpenter_version=version)))
        arns: dict[str, pulumi.Output[str]] = {}
        # Everything the controller needs before it starts (and while it drains nodes on destroy). The
        # attachments are children of the role, so a depends_on on this component would not reach them.
        self.ready: list[pulumi.Resource] = [role]
        for short in shorts:
            policy = aws.iam.Policy(
                f"{name}-{short}", name=names.policy(f"Karpenter{short}"),
                description=f"Karpenter controller {short} permissions for {cluster}",
                policy=documents.apply(_pick(short)), tags=args["tags"], opts=child)
            attachment = aws.iam.RolePolicyAttachment(f"{name}-{short}", role=role.name, policy_arn=policy.arn,
                                                      opts=pulumi.ResourceOptions(parent=role))
            self.ready += [policy, attachment]
            arns[short] = policy.arn

        if args["identity"] == "podIdentity":
            self.ready.append(aws.eks.PodIdentityAssociation(
                f"{name}-controller", cluster_name=cluster, namespace=args["namespace"],
                service_account=SERVICE_ACCOUNT, role_arn=role.arn, tags=args["tags"], opts=child))

        # Without this entry Karpenter's nodes launch but never join (EKS only creates entries for MNG roles).
        self.ready.append(aws.eks.AccessEntry(f"{name}-node-access", cluster_name=cluster,
                                              principal_arn=args["nodeRoleArn"], type="EC2_LINUX",
                                              tags=args["tags"], opts=child))

        mode = args["spotServiceLinkedRole"]
        if mode != "exists":
            # Account-wide and shared with other stacks: never deleted (retainOnDelete). With `auto` it is always
            # registered, imported when the account has it: the `up` after the one that created it finds it and
            # keeps it (an import of the id the state already holds is a no-op), instead of dropping it from
            # the state on every other run. Only the service name is ours; what AWS set is not fought.
            found = spot_service_linked_role_arn(self) if mode == "auto" else None
            self.ready.append(aws.iam.ServiceLinkedRole(
                f"{name}-spot-slr", aws_service_name=SPOT_SERVICE,
                opts=pulumi.ResourceOptions(parent=self, retain_on_delete=True, import_=found,
                                            ignore_changes=["description", "customSuffix", "tags"])))

        self.controller_role_arn = role.arn
        self.policy_arns = pulumi.Output.all(**arns).apply(dict)
        self.register_outputs({"controllerRoleArn": self.controller_role_arn, "policyArns": self.policy_arns})


SPOT_SERVICE = "spot.amazonaws.com"
SPOT_ROLE_NAME = "AWSServiceRoleForEC2Spot"
SPOT_ROLE_PATH = f"/aws-service-role/{SPOT_SERVICE}/"


def spot_service_linked_role_arn(parent: pulumi.Resource) -> str | None:
    """The ARN of the account's `AWSServiceRoleForEC2Spot` (its id for an import), or None when it has none.

    `getRoles` (not `getRole`) because it answers an empty list when the role is absent instead of failing. It
    is a plain (blocking) invoke: how the resource is registered must be known when the program runs, so that
    the preview shows it, not decided inside an apply.
    """
    found = aws.iam.get_roles(name_regex=f"^{SPOT_ROLE_NAME}$", path_prefix=SPOT_ROLE_PATH,
                              opts=pulumi.InvokeOptions(parent=parent))
    return next((arn for name, arn in zip(found.names, found.arns, strict=False) if name == SPOT_ROLE_NAME), None)


def _pick(short: str) -> Callable[[dict[str, str]], str]:
    def pick(documents: dict[str, str]) -> str:
        return documents[short]
    return pick
