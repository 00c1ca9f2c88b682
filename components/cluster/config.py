"""Cluster config types and defaults: EKS control plane, system node group, CAS-era spot groups, add-ons."""

from __future__ import annotations

import ipaddress
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints

from components import versions
from components._model import Model

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
        raise ValueError(f"Kubernetes version must be one Karpenter {versions.KARPENTER_VERSION} supports on EKS "
                         f"standard support: {', '.join(versions.SUPPORTED_KUBERNETES_VERSIONS)}")
    return value


KubernetesVersion = Annotated[str, AfterValidator(_version)]


LogType = Literal["api", "audit", "authenticator", "controllerManager", "scheduler"]
DEFAULT_LOG_TYPES: tuple[LogType, ...] = ("api", "audit", "authenticator")


class Taint(Model):
    """A Kubernetes node taint."""

    key: Annotated[str, StringConstraints(min_length=1, max_length=316)]
    """Taint key."""
    value: LabelValue | None = None
    """Taint value."""
    effect: Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
    """Taint effect, as Kubernetes spells it."""


class SystemNodeGroupConfig(Model):
    """On-demand managed node group for CoreDNS, Karpenter and other cluster-critical pods. Karpenter never
    manages these nodes; the `CriticalAddonsOnly=true:NoSchedule` taint keeps ordinary workloads off them."""

    instance_types: list[InstanceType] = Field(default_factory=lambda: ["m7i.large", "m6i.large"], min_length=1)
    """Instance types; the defaults fit CoreDNS and two Karpenter replicas (1 vCPU, 1 GiB each) on two nodes."""
    min_size: int = Field(2, ge=2)
    """At least 2, so the two Karpenter replicas and CoreDNS survive a node loss."""
    desired_size: int = Field(2, ge=2)
    """Initial size; later changes by an autoscaler are not reverted."""
    max_size: int = Field(4, ge=2, le=100)
    """Upper bound."""
    disk_size: int = Field(50, ge=20, le=16384)
    """Root volume GiB."""
    ami_type: Literal["AL2023_x86_64_STANDARD", "AL2023_ARM_64_STANDARD", "BOTTLEROCKET_x86_64",
                      "BOTTLEROCKET_ARM_64"] = "AL2023_x86_64_STANDARD"
    """EKS AMI type; must match the instance types' architecture."""
    labels: dict[LabelKey, LabelValue] = Field(default_factory=dict)
    """Extra node labels (the group always carries `node-role/system: "true"`)."""


class SpotNodeGroupConfig(Model):
    """A Cluster-Autoscaler-era SPOT managed node group, for teams not yet on Karpenter (the 2021 EKS workshop
    shape). Karpenter does not manage these nodes."""

    name: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,37}$")]
    """Group name suffix (lowercase, digits, dashes)."""
    instance_types: list[InstanceType] = Field(
        default_factory=lambda: ["m5.large", "m5a.large", "m5d.large", "m5n.large", "m4.large"])
    """Diversified types of the same size: more spot pools, fewer interruptions."""
    min_size: int = Field(0, ge=0)
    """Lower bound."""
    desired_size: int = Field(1, ge=0)
    """Initial size (Cluster Autoscaler owns it afterwards)."""
    max_size: int = Field(10, ge=1, le=450)
    """Upper bound."""
    labels: dict[LabelKey, LabelValue] = Field(default_factory=lambda: {"lifecycle": "Ec2Spot"})
    """Node labels; `lifecycle: Ec2Spot` is what the workshop's workloads and NTH select on."""
    taints: list[Taint] = Field(
        default_factory=lambda: [Taint(key="spotInstance", value="true", effect="PreferNoSchedule")])
    """Node taints; the default steers pods that don't tolerate spot elsewhere when possible."""


class ClusterConfig(Model):
    """The EKS cluster. With `existing: true` the cluster is looked up by name instead of created, and only
    Karpenter's pieces (IAM, node access, discovery tags, Helm, pools) are added to it."""

    name: ClusterName
    """Cluster name (explicit: discovery tags and IAM conditions are scoped to it)."""
    existing: bool = False
    """Adopt an existing cluster by name; nothing of the cluster itself is created or changed."""
    version: KubernetesVersion = versions.KUBERNETES_VERSION
    """Kubernetes minor version, within Karpenter 1.14's support matrix."""
    authentication_mode: Literal["API", "API_AND_CONFIG_MAP"] = "API"
    """EKS access entries only (`API`), or also the aws-auth ConfigMap (needs `awsAuthCompatibility`)."""
    aws_auth_compatibility: bool = False
    """Explicit opt-in for clusters that still rely on aws-auth: allows `API_AND_CONFIG_MAP` and maps the
    Karpenter node role in aws-auth as well."""
    endpoint_private_access: bool = True
    """Nodes reach the API server inside the VPC."""
    endpoint_public_access: bool = False
    """Expose the API endpoint publicly (then `publicAccessCidrs` is required)."""
    public_access_cidrs: list[Cidr] = Field(default_factory=list)
    """CIDR allow-list for the public endpoint."""
    log_types: list[LogType] = Field(default_factory=lambda: list(DEFAULT_LOG_TYPES))
    """Control-plane log types sent to CloudWatch Logs."""
    secrets_encryption: bool = True
    """Envelope-encrypt Kubernetes secrets with a KMS key (created unless `kmsKeyArn` is given)."""
    kms_key_arn: Annotated[str, StringConstraints(pattern=r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key/.+$")] | None \
        = None
    """Use this existing KMS key for secrets encryption."""
    system_node_group: SystemNodeGroupConfig = Field(default_factory=SystemNodeGroupConfig)
    """The on-demand group CoreDNS and Karpenter run on."""
    spot_node_groups: list[SpotNodeGroupConfig] = Field(default_factory=list)
    """Optional CAS-era spot managed node groups."""
    node_security_group_ids: list[Annotated[str, StringConstraints(pattern=r"^sg-[0-9a-f]{8,17}$")]] = Field(
        default_factory=list, max_length=10)
    """Existing clusters only: security groups of the cluster's existing nodes. Every EC2NodeClass of this
    stack attaches them (securityGroupSelectorTerms by id) alongside the cluster security group, so pods on
    Karpenter's nodes and on the old nodes reach each other (rules that allow traffic from the node group's own
    security group would otherwise drop Karpenter's nodes)."""
    addon_versions: dict[Literal["vpc-cni", "kube-proxy", "coredns", "eks-pod-identity-agent"],
                         Annotated[str, StringConstraints(pattern=r"^v\d+\.\d+\.\d+-eksbuild\.\d+$")]] = Field(
        default_factory=dict)
    """Override a pinned add-on version (see components/versions.py)."""
