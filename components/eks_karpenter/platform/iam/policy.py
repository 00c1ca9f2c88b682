"""Karpenter's IAM documents as pure data: controller policies, trust policies, node managed policies.

The controller policies grant what the getting-started CloudFormation template of the stack's Karpenter release
(`PolicyScope.karpenter_version`, one of `versions.KARPENTER_RELEASES`) grants, with the
same statement ids and the same tag-based scoping, split into the same managed policies. They are built from
plain values (no Pulumi types): a component resolves its outputs first, then calls these builders inside `apply`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from eks_karpenter import arns, versions
from eks_karpenter.arns import partition_of
from eks_karpenter.labels import EKS_CLUSTER_NAME_TAG, NODECLAIM_LABEL, NODECLASS_LABEL, NODEPOOL_LABEL, REGION

POLICY_VERSION = "2012-10-17"

NODE_MANAGED_POLICIES: tuple[str, ...] = (
    "AmazonEKSWorkerNodePolicy",
    "AmazonEKS_CNI_Policy",
    "AmazonEC2ContainerRegistryPullOnly",
    "AmazonSSMManagedInstanceCore",
)
"""AWS managed policies a Karpenter node role needs: join the cluster, run the VPC CNI, pull images, SSM access."""

# The controller may only touch resources carrying the tags Karpenter writes on what it launches (labels.py), so
# a compromised controller cannot act on instances, templates or instance profiles it did not create.

_ACCOUNT_RE = re.compile(r"\d{12}", re.ASCII)
# EKS: 1-100 characters, alphanumeric first, then alphanumerics, hyphens and underscores.
_CLUSTER_NAME_RE = re.compile(r"[0-9A-Za-z][0-9A-Za-z_-]{0,99}")
# IAM role ARN: role/ + optional path (printable ASCII, ends with "/") + name (1-64 of [\w+=,.@-]). The IAM wildcards
# "*" and "?" are refused even in the path: in iam:PassRole's Resource they would widen it to other roles.
_ROLE_TAIL_RE = re.compile(r"role/(?:[\x21-\x29\x2b-\x3e\x40-\x7e]+/)?[\w+=,.@-]{1,64}", re.ASCII)
_QUEUE_NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,80}")

Condition = Mapping[str, Mapping[str, str | Sequence[str]]]


dns_suffix = arns.dns_suffix


def aws_managed_policy_arn(partition: str, name: str) -> str:
    """ARN of an AWS managed policy, e.g. arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy."""
    dns_suffix(partition)  # validates the partition
    return f"arn:{partition}:iam::aws:policy/{name}"


@dataclass(frozen=True)
class PolicyScope:
    """What the controller policies are scoped to: one cluster, in one region and account.

    Validated on construction: the node role and the queue must be in the scope's partition and account (an
    instance profile cannot hold another account's role, and Karpenter looks its queue up by name, so in its own
    account and region).
    """

    cluster_name: str
    region: str
    account_id: str
    node_role_arn: str
    interruption_queue_arn: str | None = None
    zonal_shift: bool = False
    karpenter_version: str = versions.KARPENTER_VERSION
    """The Karpenter release the policies are for (one of `versions.KARPENTER_RELEASES`): their actions differ."""

    def __post_init__(self) -> None:
        release = versions.KARPENTER_RELEASES.get(self.karpenter_version)
        if release is None:
            raise ValueError(f"Karpenter {self.karpenter_version} is not supported; supported releases: "
                             f"{', '.join(versions.KARPENTER_VERSIONS)}")
        if self.zonal_shift and not release.zonal_shift_policy:
            raise ValueError(f"Karpenter {self.karpenter_version} grants no zonal-shift permission (from 1.13)")
        if not _CLUSTER_NAME_RE.fullmatch(self.cluster_name):
            raise ValueError(f"not an EKS cluster name: {self.cluster_name!r}")
        partition = partition_of(self.region)
        if not _ACCOUNT_RE.fullmatch(self.account_id):
            raise ValueError(f"account id must be 12 digits: {self.account_id!r}")
        role_prefix = f"arn:{partition}:iam::{self.account_id}:"
        if not (
            self.node_role_arn.startswith(role_prefix)
            and _ROLE_TAIL_RE.fullmatch(self.node_role_arn.removeprefix(role_prefix))
        ):
            raise ValueError(f"node_role_arn must be an IAM role ARN starting {role_prefix!r}: {self.node_role_arn!r}")
        if self.interruption_queue_arn is not None:
            queue_prefix = f"arn:{partition}:sqs:{self.region}:{self.account_id}:"
            if not (
                self.interruption_queue_arn.startswith(queue_prefix)
                and _QUEUE_NAME_RE.fullmatch(self.interruption_queue_arn.removeprefix(queue_prefix))
            ):
                raise ValueError(
                    f"interruption_queue_arn must be an SQS queue ARN starting {queue_prefix!r}: "
                    f"{self.interruption_queue_arn!r}"
                )

    @property
    def partition(self) -> str:
        """The partition of `region`."""
        return partition_of(self.region)

    @property
    def cluster_arn(self) -> str:
        """ARN of the EKS cluster."""
        return f"arn:{self.partition}:eks:{self.region}:{self.account_id}:cluster/{self.cluster_name}"

    @property
    def instance_profile_arn_pattern(self) -> str:
        """Every instance profile in the account: the names are Karpenter's, so tags do the scoping."""
        return f"arn:{self.partition}:iam::{self.account_id}:instance-profile/*"

    def ec2_arns(self, *resource_types: str) -> list[str]:
        """Regional EC2 ARNs of every resource of these types, in any owning account.

        Images and snapshots carry no account in their ARN pattern (public AMIs are owned by others); the rest use
        an account wildcard because shared subnets, capacity reservations and the like may belong to other accounts.
        """
        return [
            f"arn:{self.partition}:ec2:{self.region}:{'' if kind in ('image', 'snapshot') else '*'}:{kind}/*"
            for kind in resource_types
        ]


def _one_or_list(value: str | Sequence[str]) -> str | list[str]:
    """A fresh IAM value: a lone item as a string (shorter), several as a new list."""
    if isinstance(value, str):
        return value
    return value[0] if len(value) == 1 else list(value)


def _allow(
    sid: str, actions: str | Sequence[str], resources: str | Sequence[str], condition: Condition | None = None
) -> dict[str, Any]:
    """One Allow statement. Every call builds new containers, so callers may mutate a document safely."""
    statement: dict[str, Any] = {
        "Sid": sid,
        "Effect": "Allow",
        "Action": _one_or_list(actions),
        "Resource": _one_or_list(resources),
    }
    if condition:
        statement["Condition"] = {
            operator: {key: _one_or_list(value) for key, value in entries.items()}
            for operator, entries in condition.items()
        }
    return statement


def _document(*statements: dict[str, Any]) -> dict[str, Any]:
    return {"Version": POLICY_VERSION, "Statement": list(statements)}


def _cluster_tag(kind: str, cluster_name: str) -> str:
    """Condition key of the ownership tag, on the resource ("ResourceTag") or in the request ("RequestTag")."""
    return f"aws:{kind}/kubernetes.io/cluster/{cluster_name}"


_LAUNCH_ACTIONS = ("ec2:RunInstances", "ec2:CreateFleet")
# Resource types a launch creates; each must be tagged as this cluster's at creation time.
_LAUNCHED_TYPES = ("fleet", "instance", "volume", "network-interface", "launch-template", "spot-instances-request")
# The API calls (ec2:CreateAction) during which creation-time tagging is allowed.
_CREATE_ACTIONS = ("RunInstances", "CreateFleet", "CreateLaunchTemplate")
# Existing resources a launch only references (no ownership tag to check).
_REFERENCED_TYPES = ("image", "snapshot", "security-group", "subnet", "capacity-reservation", "placement-group")


def _node_lifecycle(scope: PolicyScope) -> dict[str, Any]:
    name = scope.cluster_name
    owned = {
        "StringEquals": {_cluster_tag("ResourceTag", name): "owned"},
        "StringLike": {f"aws:ResourceTag/{NODEPOOL_LABEL}": "*"},
    }
    requested = {
        _cluster_tag("RequestTag", name): "owned",
        f"aws:RequestTag/{EKS_CLUSTER_NAME_TAG}": name,
    }
    requested_nodepool = {f"aws:RequestTag/{NODEPOOL_LABEL}": "*"}
    return _document(
        _allow("AllowScopedEC2InstanceAccessActions", _LAUNCH_ACTIONS, scope.ec2_arns(*_REFERENCED_TYPES)),
        # Launching from a template is only allowed with templates Karpenter made for this cluster.
        _allow("AllowScopedEC2LaunchTemplateAccessActions", _LAUNCH_ACTIONS, scope.ec2_arns("launch-template"), owned),
        _allow(
            "AllowScopedEC2InstanceActionsWithTags",
            (*_LAUNCH_ACTIONS, "ec2:CreateLaunchTemplate"),
            scope.ec2_arns(*_LAUNCHED_TYPES),
            {"StringEquals": requested, "StringLike": requested_nodepool},
        ),
        # Tagging at creation, and only as part of the launch calls above.
        _allow(
            "AllowScopedResourceCreationTagging",
            "ec2:CreateTags",
            scope.ec2_arns(*_LAUNCHED_TYPES),
            {
                "StringEquals": {**requested, "ec2:CreateAction": _CREATE_ACTIONS},
                "StringLike": requested_nodepool,
            },
        ),
        # Later tagging of its own instances, limited to the few keys Karpenter adds after launch.
        _allow(
            "AllowScopedResourceTagging",
            "ec2:CreateTags",
            scope.ec2_arns("instance"),
            {
                **owned,
                "StringEqualsIfExists": {f"aws:RequestTag/{EKS_CLUSTER_NAME_TAG}": name},
                "ForAllValues:StringEquals": {"aws:TagKeys": (EKS_CLUSTER_NAME_TAG, NODECLAIM_LABEL, "Name")},
            },
        ),
        _allow(
            "AllowScopedDeletion",
            ("ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"),
            scope.ec2_arns("instance", "launch-template"),
            owned,
        ),
    )


def _iam_integration(scope: PolicyScope) -> dict[str, Any]:
    name = scope.cluster_name
    # Upstream lists both spellings of the EC2 principal whatever the partition; isolated partitions get theirs too.
    ec2_principals = ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"]
    local_principal = f"ec2.{dns_suffix(scope.partition)}"
    if local_principal not in ec2_principals:
        ec2_principals.append(local_principal)
    owned = {
        _cluster_tag("ResourceTag", name): "owned",
        f"aws:ResourceTag/{REGION}": scope.region,
    }
    requested = {
        _cluster_tag("RequestTag", name): "owned",
        f"aws:RequestTag/{EKS_CLUSTER_NAME_TAG}": name,
        f"aws:RequestTag/{REGION}": scope.region,
    }
    return _document(
        # The controller may hand EC2 the node role and no other role.
        _allow(
            "AllowPassingInstanceRole",
            "iam:PassRole",
            scope.node_role_arn,
            {"StringEquals": {"iam:PassedToService": ec2_principals}},
        ),
        _allow(
            "AllowScopedInstanceProfileCreationActions",
            "iam:CreateInstanceProfile",
            scope.instance_profile_arn_pattern,
            {"StringEquals": requested, "StringLike": {f"aws:RequestTag/{NODECLASS_LABEL}": "*"}},
        ),
        _allow(
            "AllowScopedInstanceProfileTagActions",
            "iam:TagInstanceProfile",
            scope.instance_profile_arn_pattern,
            {
                "StringEquals": {**owned, **requested},
                "StringLike": {f"aws:ResourceTag/{NODECLASS_LABEL}": "*", f"aws:RequestTag/{NODECLASS_LABEL}": "*"},
            },
        ),
        _allow(
            "AllowScopedInstanceProfileActions",
            ("iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile", "iam:DeleteInstanceProfile"),
            scope.instance_profile_arn_pattern,
            {"StringEquals": owned, "StringLike": {f"aws:ResourceTag/{NODECLASS_LABEL}": "*"}},
        ),
    )


def _eks_integration(scope: PolicyScope) -> dict[str, Any]:
    # The API server endpoint and CA, read once at start-up.
    return _document(_allow("AllowAPIServerEndpointDiscovery", "eks:DescribeCluster", scope.cluster_arn))


def _interruption(queue_arn: str) -> dict[str, Any]:
    # Receive and delete interruption events; nothing else on the queue (the queue policy lets EventBridge send).
    actions = ("sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage")
    return _document(_allow("AllowInterruptionQueueActions", actions, queue_arn))


_DESCRIBE_ACTIONS = tuple(
    f"ec2:Describe{noun}"
    for noun in (
        "CapacityReservations",
        "Images",
        "Instances",
        "InstanceStatus",
        "InstanceTypeOfferings",
        "InstanceTypes",
        "LaunchTemplates",
        "PlacementGroups",
        "SecurityGroups",
        "SpotPriceHistory",
        "Subnets",
    )
)


def _resource_discovery(scope: PolicyScope) -> dict[str, Any]:
    release = versions.KARPENTER_RELEASES[scope.karpenter_version]
    # Before 1.13 the template does not grant DescribeInstanceStatus; grant what the release's own template does.
    describe = [a for a in _DESCRIBE_ACTIONS if release.describe_instance_status or a != "ec2:DescribeInstanceStatus"]
    return _document(
        # Describe calls support no resource-level scoping; pin them to the cluster's region instead.
        _allow(
            "AllowRegionalReadActions",
            describe,
            "*",
            {"StringEquals": {"aws:RequestedRegion": scope.region}},
        ),
        # Public parameters only (AMI aliases resolve through /aws/service/...); they have no owning account.
        _allow(
            "AllowSSMReadActions",
            "ssm:GetParameter",
            f"arn:{scope.partition}:ssm:{scope.region}::parameter/aws/service/*",
        ),
        _allow("AllowPricingReadActions", "pricing:GetProducts", "*"),
        _allow("AllowUnscopedInstanceProfileListAction", "iam:ListInstanceProfiles", "*"),
        _allow("AllowInstanceProfileReadActions", "iam:GetInstanceProfile", scope.instance_profile_arn_pattern),
    )


def _zonal_shift(scope: PolicyScope) -> dict[str, Any]:
    # The action takes no resource ARN; the condition limits it to this cluster.
    return _document(
        _allow(
            "AllowZonalShiftStatusReadOnly",
            "arc-zonal-shift:GetManagedResource",
            "*",
            {"StringEquals": {"arc-zonal-shift:ResourceIdentifier": scope.cluster_arn}},
        )
    )


def controller_policies(scope: PolicyScope) -> dict[str, dict[str, Any]]:
    """The Karpenter controller's managed policy documents, by short name, in a stable order.

    Names: NodeLifecycle, IAMIntegration, EKSIntegration, Interruption (only with an interruption queue),
    ResourceDiscovery, ZonalShift (only when `scope.zonal_shift`). Attach all of them to the controller role.
    Each call returns new objects.
    """
    policies = {
        "NodeLifecycle": _node_lifecycle(scope),
        "IAMIntegration": _iam_integration(scope),
        "EKSIntegration": _eks_integration(scope),
    }
    if scope.interruption_queue_arn is not None:
        policies["Interruption"] = _interruption(scope.interruption_queue_arn)
    policies["ResourceDiscovery"] = _resource_discovery(scope)
    if scope.zonal_shift:
        policies["ZonalShift"] = _zonal_shift(scope)
    return policies


def node_trust_policy(partition: str) -> dict[str, Any]:
    """Trust policy of the node role: EC2 instances of the partition may assume it."""
    return {
        "Version": POLICY_VERSION,
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": f"ec2.{dns_suffix(partition)}"},
                "Action": "sts:AssumeRole",
            }
        ],
    }


def fargate_pod_execution_trust_policy(partition: str, region: str, account_id: str,
                                       cluster_name: str) -> dict[str, Any]:
    """Trust policy of a Fargate pod execution role, limited to this cluster's Fargate profiles (confused-deputy
    protection through `aws:SourceArn`)."""
    return {
        "Version": POLICY_VERSION,
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": "eks-fargate-pods.amazonaws.com"},
                "Action": "sts:AssumeRole",
                "Condition": {"ArnLike": {
                    "aws:SourceArn": f"arn:{partition}:eks:{region}:{account_id}:fargateprofile/{cluster_name}/*"}},
            }
        ],
    }


def pod_identity_trust_policy() -> dict[str, Any]:
    """Trust policy of a role used through EKS Pod Identity (the agent also tags the session)."""
    return {
        "Version": POLICY_VERSION,
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": "pods.eks.amazonaws.com"},
                "Action": ["sts:AssumeRole", "sts:TagSession"],
            }
        ],
    }


def irsa_trust_policy(
    oidc_provider_arn: str,
    oidc_issuer: str,
    namespace: str,
    service_account: str,
    *,
    audience: str = "sts.amazonaws.com",
) -> dict[str, Any]:
    """Trust policy of a role used through IRSA: one service account, via the cluster's OIDC provider.

    `oidc_issuer` is the issuer host and path (oidc.eks.<region>.amazonaws.com/id/<ID>); a leading https:// is
    dropped, because condition keys never carry the scheme and a key that does would silently never match.
    """
    issuer = oidc_issuer.removeprefix("https://").rstrip("/")
    if not issuer or not namespace or not service_account:
        raise ValueError("oidc_issuer, namespace and service_account must be non-empty")
    if not oidc_provider_arn.startswith("arn:") or ":oidc-provider/" not in oidc_provider_arn:
        raise ValueError(f"not an IAM OIDC provider ARN: {oidc_provider_arn!r}")
    return {
        "Version": POLICY_VERSION,
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Federated": oidc_provider_arn},
                "Action": "sts:AssumeRoleWithWebIdentity",
                "Condition": {
                    "StringEquals": {
                        f"{issuer}:sub": f"system:serviceaccount:{namespace}:{service_account}",
                        f"{issuer}:aud": audience,
                    }
                },
            }
        ],
    }

