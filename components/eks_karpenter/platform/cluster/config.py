"""Cluster config types and defaults: EKS control plane, system node group, CAS-era spot groups, add-ons."""

from __future__ import annotations

import ipaddress
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints

from eks_karpenter import versions
from eks_karpenter.config.model import Model, RetentionDays, empty_dict, empty_list
from eks_karpenter.ids import SecurityGroupId

# EKS allows 100 characters; 76 leaves room for the `-nth` suffix within SQS's 80-character queue names.
ClusterName = Annotated[str, StringConstraints(pattern=r"^[0-9A-Za-z][A-Za-z0-9\-_]*$", max_length=76)]
InstanceType = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]*\.[a-z0-9]+$")]
LabelValue = Annotated[str, StringConstraints(max_length=63, pattern=r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")]
LabelKey = Annotated[str, StringConstraints(max_length=316,
                                            pattern=r"^([a-z0-9.-]+/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")]


def _cidr(value: str) -> str:
    try:
        return str(ipaddress.ip_network(value, strict=True))
    except ValueError as exc:
        raise ValueError(f"not a CIDR block: {exc}") from None


Cidr = Annotated[str, AfterValidator(_cidr)]


def _version(value: str) -> str:
    if value not in versions.SUPPORTED_KUBERNETES_VERSIONS:
        raise ValueError(f"Kubernetes version must be one Karpenter {versions.KARPENTER_VERSION} supports: "
                         f"{', '.join(versions.SUPPORTED_KUBERNETES_VERSIONS)}")
    return value


KubernetesVersion = Annotated[str, AfterValidator(_version)]


LogType = Literal["api", "audit", "authenticator", "controllerManager", "scheduler"]
DEFAULT_LOG_TYPES: tuple[LogType, ...] = ("api", "audit", "authenticator")


AmiType = Literal["AL2023_x86_64_STANDARD", "AL2023_ARM_64_STANDARD", "BOTTLEROCKET_x86_64", "BOTTLEROCKET_ARM_64",
                  "AL2_x86_64", "AL2_ARM_64"]
"""EKS managed node group AMI types this library supports (Linux, no GPU)."""
SYSTEM_HOP_LIMIT = 1
"""The system node group's IMDS hop limit: nothing on it needs IMDS from the pod network. The Karpenter
controller gets `AWS_REGION` and its credentials from Pod Identity or IRSA; NTH in queue mode gets `awsRegion`;
the VPC CNI, kube-proxy and the Pod Identity agent run on the host network (one hop); CoreDNS never asks."""
DEFAULT_HOP_LIMIT = 2
"""CAS-era spot node groups keep the hop limit of EKS's default launch template: the workloads that run there
were written for it (SDKs that take the node role's credentials from IMDS)."""


class Taint(Model):
    """A Kubernetes node taint."""

    key: Annotated[str, StringConstraints(min_length=1, max_length=316)]
    """Taint key."""
    value: LabelValue | None = None
    """Taint value."""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
    """Taint effect, as Kubernetes spells it."""


AddonVersion = Annotated[str, StringConstraints(pattern=r"^v[0-9]+\.[0-9]+\.[0-9]+-eksbuild\.[0-9]+$")]
"""An EKS add-on version as EKS lists it (`v1.19.2-eksbuild.1`)."""


def _system_instance_types() -> list[str]:
    return ["m7i.large", "m6i.large"]


def _spot_instance_types() -> list[str]:
    return ["m5.large", "m5a.large", "m5d.large", "m5n.large", "m4.large"]


def _spot_labels() -> dict[str, str]:
    return {"lifecycle": "Ec2Spot"}


def _spot_taints() -> list[Taint]:
    return [Taint(key="spotInstance", value="true", effect="PreferNoSchedule")]


def _default_log_types() -> list[LogType]:
    return list(DEFAULT_LOG_TYPES)


class SystemNodeGroupConfig(Model):
    """On-demand managed node group for CoreDNS, Karpenter and other cluster-critical pods. Karpenter never
    manages these nodes; the `CriticalAddonsOnly=true:NoSchedule` taint keeps ordinary workloads off them."""

    instance_types: list[InstanceType] = Field(default_factory=_system_instance_types, min_length=1)
    """Instance types; the defaults fit CoreDNS and two Karpenter replicas (1 vCPU, 1 GiB each) on two nodes."""
    min_size: int = Field(2, ge=2)
    """At least 2, so the two Karpenter replicas and CoreDNS survive a node loss."""
    desired_size: int = Field(2, ge=2)
    """Initial size; later changes by an autoscaler are not reverted."""
    max_size: int = Field(4, ge=2, le=100)
    """Upper bound."""
    disk_size: int = Field(50, ge=20, le=16384)
    """Root volume GiB (the data volume on Bottlerocket): an encrypted gp3 volume in the group's launch
    template."""
    ami_type: AmiType = "AL2023_x86_64_STANDARD"
    """EKS AMI type; must match the instance types' architecture and exist for the cluster's Kubernetes version
    (no AL2 AMIs from 1.33 on)."""
    http_put_response_hop_limit: int = Field(SYSTEM_HOP_LIMIT, ge=1, le=64)
    """IMDSv2 hop limit of the nodes (IMDSv2 is always required). 1 limits IMDS (and the node role's
    credentials) to host-network pods; nothing this library runs here needs more (the Karpenter controller gets
    its region as `AWS_REGION`). 2, EKS's own default, lets pods on the pod network reach IMDS: set it only for
    an add-on of yours that reads IMDS from a pod."""
    labels: dict[LabelKey, LabelValue] = Field(default_factory=empty_dict)
    """Extra node labels (the group always carries `node-role/system: "true"`)."""


class SpotNodeGroupConfig(Model):
    """A Cluster-Autoscaler-era SPOT managed node group, for teams not yet on Karpenter (the 2021 EKS workshop
    shape). Karpenter does not manage these nodes."""

    name: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,35}$")]
    """Group name prefix within the cluster (lowercase, digits, dashes; at most 36 characters: EKS appends a
    26-character unique suffix to the prefix, and names end at 63)."""
    instance_types: list[InstanceType] = Field(default_factory=_spot_instance_types)
    """Diversified types of the same size: more spot pools, fewer interruptions."""
    min_size: int = Field(0, ge=0)
    """Lower bound."""
    desired_size: int = Field(1, ge=0)
    """Initial size (Cluster Autoscaler owns it afterwards)."""
    max_size: int = Field(10, ge=1, le=450)
    """Upper bound."""
    labels: dict[LabelKey, LabelValue] = Field(default_factory=_spot_labels)
    """Node labels; `lifecycle: Ec2Spot` is what the workshop's workloads and NTH select on."""
    taints: list[Taint] = Field(default_factory=_spot_taints)
    """Node taints; the default steers pods that don't tolerate spot elsewhere when possible."""
    disk_size: int = Field(20, ge=20, le=16384)
    """Root volume GiB (the data volume on Bottlerocket), encrypted gp3; 20 is EKS's own default."""
    ami_type: AmiType = "AL2023_x86_64_STANDARD"
    """EKS AMI type; must match the instance types' architecture and the cluster's Kubernetes version."""
    http_put_response_hop_limit: int = Field(DEFAULT_HOP_LIMIT, ge=1, le=64)
    """IMDSv2 hop limit (IMDSv2 is always required); see the system node group's."""


class UpgradePolicy(Model):
    """What EKS does when the cluster's Kubernetes version leaves standard support (EKS's own default, when a
    cluster sets none, is EXTENDED: a forgotten cluster silently bills extended support)."""

    support_type: Literal["STANDARD", "EXTENDED"] = "STANDARD"
    """`STANDARD`: EKS upgrades the control plane to the next minor when standard support ends; no extended
    support charge. `EXTENDED`: the cluster may stay on its minor for up to 12 more months at six times the
    standard hourly rate; the explicit opt-in needed to run a version that is already in extended support."""




class ApiAccessConfig(Model):
    """Who may open tcp/443 to the cluster's private API endpoint: ingress rules on the EKS cluster security
    group (the public endpoint's allow-list is `publicAccessCidrs`). Each source is a rule of its own, so adding
    or removing one never touches the cluster."""

    cidrs: list[Cidr] = Field(default_factory=empty_list, max_length=50)
    """Networks admitted to the private endpoint on tcp/443: a CI runner's subnet in (or peered with) the VPC, a
    VPN or Direct Connect range. `0.0.0.0/0` is refused on a protected stack (the cluster security group is
    shared by the control plane and every node), and public addresses alone are refused on a private-only
    endpoint (their traffic never reaches it)."""
    security_group_ids: list[SecurityGroupId] = Field(default_factory=empty_list, max_length=50)
    """Security groups admitted to the private endpoint on tcp/443, e.g. the group of a self-hosted runner or a
    bastion in the cluster's VPC."""

    @property
    def sources(self) -> bool:
        """Some source is admitted."""
        return bool(self.cidrs or self.security_group_ids)


class ClusterConfig(Model):
    """The EKS cluster. With `existing: true` the cluster is looked up by name instead of created, and only
    Karpenter's pieces (IAM, node access, discovery tags, Helm, pools) are added to it."""

    name: ClusterName
    """Cluster name (explicit: discovery tags and IAM conditions are scoped to it)."""
    existing: bool = False
    """Adopt an existing cluster by name; nothing of the cluster itself is created or changed."""
    preflight: bool = True
    """Existing clusters only: before registering anything, ask the cluster's API server (as the deployer) for
    Helm releases named like this stack's, Karpenter CRDs and Cluster Autoscaler's Deployment, which proves the
    deployer can reach and authenticate to it (with a token the program mints itself). The AWS look-ups
    (authentication mode, node groups) run either way."""
    version: KubernetesVersion = versions.KUBERNETES_VERSION
    """Kubernetes minor version, within the Karpenter release's support matrix and, today, in EKS standard support
    (or extended support with `upgradePolicy.supportType: EXTENDED`); see eks_karpenter/versions.py. Upgrade one
    minor at a time (`infra diff` refuses a jump of two)."""
    upgrade_policy: UpgradePolicy = Field(default_factory=UpgradePolicy)
    """EKS upgrade policy; `supportType: EXTENDED` opts in to extended support (and its cost)."""
    authentication_mode: Literal["API", "API_AND_CONFIG_MAP"] = "API"
    """EKS access entries only (`API`); `API_AND_CONFIG_MAP` (also the aws-auth ConfigMap) needs
    `awsAuthCompatibility`, which a cluster this stack creates refuses: use `API`."""
    aws_auth_compatibility: bool = False
    """Map the Karpenter node role in an aws-auth ConfigMap as well (with `API_AND_CONFIG_MAP`). Refused on a
    cluster this stack creates: pulumi-eks writes the ConfigMap as the cluster's creator, which has no admin entry
    (the bootstrap creator admin is off), so the `up` would stop on a 401."""
    endpoint_private_access: bool = True
    """Nodes reach the API server inside the VPC."""
    endpoint_public_access: bool = False
    """Expose the API endpoint publicly (then `publicAccessCidrs` is required)."""
    public_access_cidrs: list[Cidr] = Field(default_factory=empty_list)
    """CIDR allow-list for the public endpoint (the deployer's address for a laptop `pulumi up`; `0.0.0.0/0` is
    allowed, with a warning, outside protected stacks)."""
    api_access: ApiAccessConfig = Field(default_factory=ApiAccessConfig)
    """Sources admitted to the private endpoint on tcp/443 (the EKS cluster security group admits only itself
    otherwise). A private-only endpoint needs at least one, or `pulumi up` cannot reach the API server."""
    log_types: list[LogType] = Field(default_factory=_default_log_types)
    """Control-plane log types sent to CloudWatch Logs."""
    log_retention_in_days: RetentionDays = 90
    """Retention of the control-plane log group `/aws/eks/<name>/cluster`, which this stack creates before the
    cluster (EKS would otherwise create one that never expires)."""
    secrets_encryption: bool = True
    """Envelope-encrypt Kubernetes secrets with a KMS key (created unless `kmsKeyArn` is given)."""
    kms_key_arn: Annotated[str, StringConstraints(pattern=r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/.+$")] | None \
        = None
    """Use this existing KMS key for secrets encryption."""
    system_node_group: SystemNodeGroupConfig = Field(default_factory=SystemNodeGroupConfig)
    """The on-demand group CoreDNS and Karpenter run on."""
    spot_node_groups: list[SpotNodeGroupConfig] = Field(default_factory=empty_list)
    """Optional CAS-era spot managed node groups."""
    node_security_group_ids: list[SecurityGroupId] = Field(
        default_factory=empty_list, max_length=10)
    """Existing clusters only: security groups of the cluster's existing nodes. Every EC2NodeClass of this
    stack attaches them (securityGroupSelectorTerms by id) alongside the cluster security group, so pods on
    Karpenter's nodes and on the old nodes reach each other (rules that allow traffic from the node group's own
    security group would otherwise drop Karpenter's nodes)."""
    ami_max_age_days: int = Field(30, ge=1, le=366)
    """Warn at preview when an EC2NodeClass's dated alias (`al2023@vYYYYMMDD`) names an AMI release older than
    this many days, so nodes do not run an unpatched image for months (move the pin, and with it the node
    groups' release, with `eks-karpenter pins --live --write`)."""
    addon_versions: dict[Literal["vpc-cni", "kube-proxy", "coredns", "eks-pod-identity-agent"], AddonVersion] = Field(
        default_factory=empty_dict)
    """Override a pinned add-on version (see eks_karpenter/versions.py). kube-proxy's carries the Kubernetes
    minor (`v1.35.x-eksbuild.N` for 1.35): any other minor is refused. A vpc-cni or CoreDNS build two or more
    minors away from the pin for the cluster's version is warned about (it may not be offered for it)."""
