"""EC2NodeClass config: `NodeClassConfig` and its parts (AMI, subnet, security group and capacity reservation
selector terms, IMDS options, disks, kubelet settings, network interfaces)."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from datetime import date
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints

from eks_karpenter import versions
from eks_karpenter.config.model import Model, empty_dict
from eks_karpenter.ids import AmiId, CapacityReservationId, PlacementGroupId, SecurityGroupId, SubnetId
from eks_karpenter.labels import CLUSTER_TAG_PREFIX, RESTRICTED_TAG_KEYS
from eks_karpenter.platform.nodepool.fields import QUANTITY_PATTERN, NonEmpty, Quantity, ResourceName

# --- EC2NodeClass ----------------------------------------------------------------------------------------------

AmiFamily = Literal["AL2", "AL2023", "Bottlerocket", "Custom", "Windows2019", "Windows2022", "Windows2025"]
ALIAS_FAMILIES: dict[str, AmiFamily] = {
    "al2": "AL2", "al2023": "AL2023", "bottlerocket": "Bottlerocket",
    "windows2019": "Windows2019", "windows2022": "Windows2022", "windows2025": "Windows2025"}
"""Alias family prefix -> the amiFamily it implies."""
_ALIAS_VERSION = {"al2": r"v[0-9]{8}", "al2023": r"v[0-9]{8}", "bottlerocket": r"v[0-9]+\.[0-9]+\.[0-9]+"}


def _alias(value: str) -> str:
    if not re.match(r"^[a-zA-Z0-9]+@.+$", value):
        raise ValueError("'alias' is improperly formatted, must match the format 'family@version'")
    family, _, version = value.partition("@")
    if family not in ALIAS_FAMILIES:
        raise ValueError(f"family is not supported, must be one of: {', '.join(ALIAS_FAMILIES)}")
    if family.startswith("windows") and version != "latest":
        raise ValueError("windows families may only specify version 'latest'")
    pattern = _ALIAS_VERSION.get(family)
    if pattern and version != "latest" and not re.fullmatch(pattern, version.split("@")[0]):
        example = "v20240625" if family.startswith("al2") else "v1.26.0"
        raise ValueError(f"version must be 'latest' or a release like {example}")
    if family.startswith("al2") and version != "latest" and alias_release_date(version) is None:
        raise ValueError(f"release {version} is not a date (vYYYYMMDD): Amazon Linux AMI releases are named "
                         "after the day they were built")
    return value


def alias_release_date(version: str) -> date | None:
    """The day an Amazon Linux alias release (`v20240625`) names, None when it is not a real date."""
    try:
        return date(int(version[1:5]), int(version[5:7]), int(version[7:9]))
    except ValueError:
        return None


SelectorTags = Annotated[dict[NonEmpty, NonEmpty], Field(min_length=1, max_length=20)]
"""Tags to match (1 to 20); `*` as a value matches any value. Keys and values may not be empty."""


class AmiSelectorTerm(Model):
    """One AMI selector term (terms are ORed, fields within a term ANDed)."""

    alias: Annotated[str, StringConstraints(max_length=30), AfterValidator(_alias)] | None = None
    """EKS-optimized AMI as `family@version`, e.g. `al2023@v20240625`. Must be the only term and field. An
    Amazon Linux release is the real day it was built (`v20261331` is refused), not later than today."""
    id: AmiId | None = None
    """AMI id (`ami-` and 8 or 17 hex digits, as every EC2 id); cannot be combined with other fields."""
    name: NonEmpty | None = None
    """AMI name (wildcards allowed)."""
    owner: NonEmpty | None = None
    """Owner account id, `self`, `amazon` or `aws-marketplace`."""
    ssm_parameter: NonEmpty | None = None
    """SSM parameter name or ARN holding an AMI id."""
    tags: SelectorTags | None = None
    """AMI tags."""


class SubnetSelectorTerm(Model):
    """One subnet selector term."""

    id: SubnetId | None = None
    """Subnet id (`subnet-` and 8 or 17 hex digits)."""
    tags: SelectorTags | None = None
    """Subnet tags."""


class SecurityGroupSelectorTerm(Model):
    """One security group selector term."""

    id: SecurityGroupId | None = None
    """Security group id (`sg-` and 8 or 17 hex digits)."""
    name: NonEmpty | None = None
    """Security group name (not its Name tag)."""
    tags: SelectorTags | None = None
    """Security group tags."""


class CapacityReservationSelectorTerm(Model):
    """One capacity reservation (ODCR or capacity block) selector term, for `reserved` capacity."""

    id: CapacityReservationId | None = None
    """Reservation id (`cr-` and 8 or 17 hex digits); cannot be combined with other fields."""
    owner_id: Annotated[str, StringConstraints(pattern=r"^[0-9]{12}$")] | None = Field(None, alias="ownerID")
    """Owning account (shared reservations)."""
    instance_match_criteria: Literal["open", "targeted"] | None = None
    """Match open or targeted reservations."""
    tags: SelectorTags | None = None
    """Reservation tags."""


class MetadataOptions(Model):
    """Instance metadata service (IMDS) settings. The default keeps IMDSv2 only and a hop limit of 1, so pods
    (which are one network hop further) cannot read the node role's credentials."""

    http_endpoint: Literal["enabled", "disabled"] = "enabled"
    """IMDS on or off (nodes need it to bootstrap)."""
    http_protocol_ipv6: Literal["enabled", "disabled"] = Field("disabled", alias="httpProtocolIPv6")
    """IMDS over IPv6."""
    http_put_response_hop_limit: int = Field(1, ge=1, le=64)
    """1 keeps pods out of IMDS. Opt in with 2 only for pods that need IMDS without `hostNetwork` (some
    controllers and SDK credential chains); they then see the node role's credentials."""
    http_tokens: Literal["required", "optional"] = "required"
    """`required` = IMDSv2 only."""


# Same ranges as the CRD's pattern, which for Ti skips x8 and x9 between 18 and 49.
_VOLUME_SIZE_OK: dict[str, Callable[[int], bool]] = {
    "Gi": lambda n: n <= 59000,
    "G": lambda n: n <= 64000,
    "Ti": lambda n: n <= 9 or n == 58 or (10 <= n <= 57 and n % 10 <= 7),
    "T": lambda n: n <= 64,
}


def _volume_size(value: str) -> str:
    match = re.fullmatch(r"([1-9][0-9]*)(Gi|G|Ti|T)", value)
    if match and _VOLUME_SIZE_OK[match.group(2)](int(match.group(1))):
        return value
    raise ValueError("volume size must be a whole number of Gi (1-59000), G (1-64000), Ti or T, e.g. 50Gi")


class Ebs(Model):
    """An EBS volume."""

    volume_size: Annotated[str, AfterValidator(_volume_size)] | None = None
    """Size, e.g. `50Gi`. Required unless `snapshotID` is given. At most the type's largest volume (16 TiB; io2
    64 TiB; standard 1 TiB). On a device of an alias's EKS-optimized AMI, at least the snapshot behind it: AL2 and
    AL2023 `/dev/xvda` 20Gi, Bottlerocket `/dev/xvda` 2Gi and `/dev/xvdb` 20Gi, Windows `/dev/sda1` 50Gi."""
    volume_type: Literal["standard", "io1", "io2", "gp2", "sc1", "st1", "gp3"] | None = None
    """Volume type; gp3 is the cheapest general-purpose choice."""
    iops: int | None = Field(None, ge=0)
    """Provisioned IOPS (io1, io2, gp3 only)."""
    throughput: int | None = Field(None, ge=0)
    """Throughput in MiB/s (gp3 only)."""
    encrypted: bool | None = None
    """Encrypt the volume."""
    kms_key_id: NonEmpty | None = Field(None, alias="kmsKeyID")
    """KMS key for encryption (default: the account's EBS key)."""
    delete_on_termination: bool | None = None
    """Delete the volume with the instance."""
    snapshot_id: NonEmpty | None = Field(None, alias="snapshotID")
    """Create the volume from this snapshot."""
    volume_initialization_rate: int | None = Field(None, ge=100, le=300)
    """Snapshot download rate in MiB/s (needs `snapshotID`)."""


class BlockDeviceMapping(Model):
    """A block device of the node."""

    device_name: NonEmpty
    """Device name, e.g. `/dev/xvda` (EC2 requires it)."""
    root_volume: bool | None = None
    """This device holds the kubelet root directory (at most one)."""
    ebs: Ebs | None = None
    """The EBS volume."""


EvictionSignal = Literal["memory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available",
                         "imagefs.inodesFree", "pid.available"]
EvictionThreshold = Annotated[str, StringConstraints(
    pattern=rf"^(([0-9]{{1,2}}(\.[0-9]{{1,2}})?|100(\.0{{1,2}})?)%|{QUANTITY_PATTERN})$")]
"""A percentage (`10%`) or an absolute quantity (`500Mi`)."""
GoDuration = Annotated[str, StringConstraints(pattern=r"^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$")]
ReservedResource = Literal["cpu", "memory", "ephemeral-storage", "pid"]
_INT32 = 2**31 - 1


def _ip(value: str) -> str:
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        raise ValueError("not an IP address") from None


class KubeletConfig(Model):
    """Kubelet settings Karpenter passes to nodes (and uses when simulating capacity)."""

    max_pods: int | None = Field(None, ge=0, le=_INT32)
    """Pods per node (default: the ENI-based limit of the instance type)."""
    pods_per_core: int | None = Field(None, ge=0, le=_INT32)
    """Pods per vCPU (capped by maxPods)."""
    system_reserved: dict[ReservedResource, Quantity] | None = None
    """Resources reserved for the OS (`cpu`, `memory`, `ephemeral-storage`, `pid`)."""
    kube_reserved: dict[ReservedResource, Quantity] | None = None
    """Resources reserved for the kubelet and container runtime."""
    eviction_hard: dict[EvictionSignal, EvictionThreshold] | None = None
    """Hard eviction thresholds, e.g. `memory.available: 5%`."""
    eviction_soft: dict[EvictionSignal, EvictionThreshold] | None = None
    """Soft eviction thresholds; each needs a grace period."""
    eviction_soft_grace_period: dict[EvictionSignal, GoDuration] | None = None
    """Grace period per soft threshold, e.g. `memory.available: 1m30s`."""
    eviction_max_pod_grace_period: int | None = Field(None, ge=-_INT32 - 1, le=_INT32)
    """Longest pod termination grace period (s) honoured on soft eviction."""
    image_gc_high_threshold_percent: int | None = Field(None, ge=0, le=100, alias="imageGCHighThresholdPercent")
    """Disk use (%) above which image garbage collection always runs."""
    image_gc_low_threshold_percent: int | None = Field(None, ge=0, le=100, alias="imageGCLowThresholdPercent")
    """Disk use (%) image garbage collection frees down to; below imageGCHighThresholdPercent."""
    cpu_cfs_quota: bool | None = Field(None, alias="cpuCFSQuota")
    """Enforce CPU limits with CFS quota."""
    cluster_dns: list[Annotated[str, AfterValidator(_ip)]] | None = Field(None, alias="clusterDNS")
    """Cluster DNS server addresses (default: the cluster's)."""


class NetworkInterface(Model):
    """An extra network interface (EFA setups)."""

    network_card_index: int = Field(ge=0, le=_INT32)
    """Network card."""
    device_index: int = Field(ge=0, le=_INT32)
    """Device index on that card."""
    interface_type: Literal["interface", "efa-only"]
    """`interface` (ENA, with IPs) or `efa-only`."""


class PlacementGroupSelector(Model):
    """The placement group to launch into (by name or id)."""

    id: PlacementGroupId | None = None
    """Placement group id (`pg-` and 8 or 17 hex digits)."""
    name: NonEmpty | None = None
    """Placement group name."""


class ConnectionTracking(Model):
    """Idle connection-tracking timeouts of the node's network interfaces (seconds)."""

    tcp_established_timeout: int | None = Field(None, ge=60, le=432000)
    """Idle established TCP flows."""
    udp_stream_timeout: int | None = Field(None, ge=60, le=180)
    """Idle UDP flows with more than one request-response."""
    udp_timeout: int | None = Field(None, ge=30, le=60)
    """Other idle UDP flows."""


class CpuOptions(Model):
    """CPU options."""

    nested_virtualization: Literal["enabled", "disabled"] | None = None
    """Restrict to instance types supporting nested virtualization."""


def _tag_key(key: str) -> str:
    if key.startswith(CLUSTER_TAG_PREFIX) or key in RESTRICTED_TAG_KEYS:
        raise ValueError("restricted tag key: Karpenter sets it on every instance it launches")
    if key.lower().startswith("aws:"):
        raise ValueError("tag keys starting with aws: are reserved by AWS")
    return key


NodeTagKey = Annotated[str, StringConstraints(min_length=1, max_length=128), AfterValidator(_tag_key)]


def _iam_name(value: str) -> str:
    if value.startswith("arn:"):
        raise ValueError("give the name, not the ARN")
    if not re.fullmatch(r"[A-Za-z0-9_+=,.@-]+", value):
        raise ValueError("IAM names use letters, digits and +=,.@_-")
    return value


IamName = Annotated[str, StringConstraints(min_length=1, max_length=128), AfterValidator(_iam_name)]


def _default_ami_terms() -> list[AmiSelectorTerm]:
    return [AmiSelectorTerm(alias=versions.AMI_ALIAS)]


class NodeClassConfig(Model):
    """One Karpenter EC2NodeClass: the AWS side of nodes (AMI, subnets, security groups, IAM, disks, IMDS).

    Subnets and security groups default to those tagged `karpenter.sh/discovery: <cluster>`, and the IAM role to
    the platform's node role.
    """

    name: ResourceName
    """EC2NodeClass name; pools refer to it with `nodeClass`."""
    ami_family: AmiFamily | None = None
    """AMI family (user data format, default disks). Implied by an `alias` term; required without one."""
    ami_selector_terms: list[AmiSelectorTerm] = Field(default_factory=_default_ami_terms, min_length=1, max_length=30)
    """AMIs to use. Default: the pinned EKS-optimized AL2023 alias from eks_karpenter/versions.py."""
    subnet_selector_terms: list[SubnetSelectorTerm] | None = Field(None, min_length=1, max_length=30)
    """Subnets (default: tagged `karpenter.sh/discovery: <cluster>`)."""
    security_group_selector_terms: list[SecurityGroupSelectorTerm] | None = Field(None, min_length=1, max_length=30)
    """Security groups (default: tagged `karpenter.sh/discovery: <cluster>`)."""
    role: IamName | None = None
    """IAM role name for nodes; Karpenter manages its instance profile. Default: the platform's node role."""
    instance_profile: IamName | None = None
    """Existing instance profile name instead of `role` (private clusters without IAM access)."""
    user_data: str | None = None
    """Extra user data, merged with Karpenter's: AL2023 a nodeadm NodeConfig, MIME multi-part or shell script;
    Bottlerocket TOML; AL2 MIME multi-part or shell script; Windows bare PowerShell (Karpenter adds the
    `<powershell>` tags); Custom anything (used as is)."""
    tags: dict[NodeTagKey, Annotated[str, StringConstraints(max_length=256)]] = Field(default_factory=empty_dict)
    """Tags on instances, volumes and launch templates (merged over the stack-wide tags)."""
    metadata_options: MetadataOptions = Field(default_factory=MetadataOptions)
    """IMDS settings (IMDSv2 only, hop limit 1)."""
    block_device_mappings: list[BlockDeviceMapping] | None = Field(None, max_length=50)
    """Disks. Default: one encrypted gp3 root volume, 50Gi (/dev/xvda on AL2/AL2023, /dev/sda1 on Windows; a 4Gi
    OS plus 50Gi data volume on Bottlerocket; none for Custom)."""
    detailed_monitoring: bool | None = None
    """One-minute CloudWatch metrics (extra cost)."""
    kubelet: KubeletConfig | None = None
    """Kubelet settings."""
    associate_public_ip_address: bool | None = Field(None, alias="associatePublicIPAddress")
    """Public IPs on nodes (default: the subnet's setting)."""
    instance_store_policy: Literal["RAID0"] | None = None
    """`RAID0`: stripe local NVMe disks and use them for container storage."""
    capacity_reservation_selector_terms: list[CapacityReservationSelectorTerm] | None = Field(None, max_length=30)
    """Capacity reservations for pools that allow `reserved` capacity."""
    context: NonEmpty | None = None
    """EC2 Fleet context (reserved by AWS for specific programs)."""
    network_interfaces: list[NetworkInterface] | None = Field(None, max_length=150)
    """Explicit network interfaces (EFA)."""
    placement_group_selector: PlacementGroupSelector | None = None
    """Launch into this placement group."""
    connection_tracking: ConnectionTracking | None = None
    """Connection-tracking timeouts."""
    cpu_options: CpuOptions | None = None
    """CPU options."""
    ip_prefix_count: int | None = Field(None, ge=0, le=_INT32)
    """IPv4 prefixes to assign to the primary interface."""

    @property
    def alias(self) -> str | None:
        """The alias term's value, if the AMI is chosen by alias."""
        return next((t.alias for t in self.ami_selector_terms if t.alias), None)

    @property
    def family(self) -> AmiFamily | None:
        """The AMI family Karpenter will use: `amiFamily`, else the alias's family."""
        if self.ami_family:
            return self.ami_family
        alias = self.alias
        return ALIAS_FAMILIES.get(alias.split("@")[0]) if alias else None
