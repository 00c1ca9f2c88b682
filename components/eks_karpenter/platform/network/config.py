"""Network config types and defaults: create a VPC, or adopt an existing one."""

from __future__ import annotations

import ipaddress
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints

from eks_karpenter.config.model import Model, RetentionDays, empty_dict
from eks_karpenter.ids import SubnetId, VpcId
from eks_karpenter.tags import TagKey, TagValue

AvailabilityZone = Annotated[str, StringConstraints(pattern=r"^[a-z]{2}(-[a-z]+)+-[0-9][a-z]$")]


def _ipv4_network(value: str) -> str:
    try:
        net = ipaddress.IPv4Network(value, strict=True)
    except ValueError as exc:
        raise ValueError(f"not an IPv4 network in CIDR notation: {exc}") from None
    if not 16 <= net.prefixlen <= 20:
        raise ValueError("VPC prefix length must be /16 to /20 (Karpenter nodes and pods need the addresses)")
    return str(net)


Cidr = Annotated[str, AfterValidator(_ipv4_network)]

# Regions where `<region>a`, `b` and `c` are not three zones a new account can use: the zones to use instead, or
# None where the usable zone names differ per account, so the stack must name them. Zone names map to physical
# zones per account; `aws ec2 describe-availability-zones --region R` lists an account's own.
ZONE_EXCEPTIONS: dict[str, tuple[str, ...] | None] = {
    "ap-northeast-1": ("ap-northeast-1a", "ap-northeast-1c", "ap-northeast-1d"),  # no `b` for new accounts
    "ca-central-1": ("ca-central-1a", "ca-central-1b", "ca-central-1d"),  # there is no `c`
    "cn-north-1": ("cn-north-1a", "cn-north-1b", "cn-north-1d"),  # there is no `c`
    "us-west-1": None,  # two zones per account, `a`+`b` or `b`+`c` depending on the account
}


def default_availability_zones(region: str) -> list[str] | None:
    """Three zones of `region` for a new VPC when `availabilityZones` is not given; None where the stack must
    name them (see ZONE_EXCEPTIONS). us-east-1's `e` is never picked: it lacks newer instance types."""
    if region in ZONE_EXCEPTIONS:
        zones = ZONE_EXCEPTIONS[region]
        return list(zones) if zones is not None else None
    return [f"{region}{letter}" for letter in "abc"]


class FlowLogsConfig(Model):
    """VPC flow logs of the VPC this stack creates: who talked to what, for incident response and audits."""

    enabled: bool = False
    """Record the VPC's flow logs (on in prod)."""
    destination: Literal["cloudWatchLogs", "s3"] = "cloudWatchLogs"
    """`cloudWatchLogs`: a log group `/aws/vpc/<cluster>/flow-logs` this stack creates, written through an IAM
    role; `s3`: an existing bucket (`s3BucketArn`) whose policy lets `delivery.logs.amazonaws.com` write."""
    retention_in_days: RetentionDays = 90
    """Retention of the CloudWatch log group (S3: the bucket's lifecycle rules decide)."""
    s3_bucket_arn: Annotated[str, StringConstraints(pattern=r"^arn:aws[a-z-]*:s3:::[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]"
                                                            r"(/[^*]*)?$")] | None = None
    """Existing bucket (optionally `/prefix`) for `destination: s3`."""
    traffic_type: Literal["ALL", "ACCEPT", "REJECT"] = "ALL"
    """Which traffic to record."""
    max_aggregation_interval: Literal[60, 600] = 600
    """Seconds over which packets are aggregated into one record."""


class NetworkConfig(Model):
    """The VPC the cluster lives in. By default a new VPC (10.0.0.0/16 over three zones of the region); give
    `vpcId` and `privateSubnetIds` to adopt an existing VPC (its subnets are never recreated, and tagged only
    when asked)."""

    availability_zones: list[AvailabilityZone] | None = Field(None, min_length=2, max_length=6)
    """Zones to spread subnets over (2 to 6), e.g. [eu-west-1a, eu-west-1b]. Create mode only; append new zones
    at the end, since a zone's position decides its subnet ranges. Default: `<region>a`, `b`, `c`, except in
    regions where those are not three usable zones (ap-northeast-1: a, c, d; ca-central-1 and cn-north-1: a, b,
    d; us-west-1: required, since its zones differ per account)."""

    vpc_cidr: Cidr = "10.0.0.0/16"
    """VPC range (/16 to /20). Private subnets take one eighth each, public ones a sixty-fourth."""

    nat_gateways: Literal["single", "perAz"] = "perAz"
    """`perAz` keeps egress up when a zone fails; `single` saves roughly 32 USD a month per zone (dev)."""

    vpc_id: VpcId | None = None
    """Adopt this existing VPC instead of creating one (`vpc-` and 8 or 17 hex digits, as every EC2 id)."""

    private_subnet_ids: dict[AvailabilityZone, SubnetId] | None = None
    """Adopt mode: existing private subnets by zone (`subnet-` ids of 8 or 17 hex digits). EC2NodeClasses that
    set no subnetSelectorTerms select them by ID; nothing is written on them unless `writeDiscoveryTags` /
    `writeLoadBalancerTags` say so."""

    public_subnet_ids: dict[AvailabilityZone, SubnetId] | None = None
    """Adopt mode: existing public subnets by zone (never used for nodes); tagged only with
    `writeLoadBalancerTags`."""

    write_discovery_tags: bool = False
    """Adopt mode: write `karpenter.sh/discovery: <cluster>` on the adopted private subnets (and, on an adopted
    cluster, on its cluster security group), resources another tool owns: that tool's next apply may strip them,
    and Karpenter then finds no subnet. Off (the default): EC2NodeClasses select them by ID."""

    write_load_balancer_tags: bool = False
    """Adopt mode: write the load-balancer role tags (`kubernetes.io/role/internal-elb` on the private subnets,
    `kubernetes.io/role/elb` on the public ones). Off by default: shared subnets usually have them, or are
    deliberately kept from the AWS Load Balancer Controller."""

    flow_logs: FlowLogsConfig = Field(default_factory=FlowLogsConfig)
    """VPC flow logs (create mode only): off by default, on in prod."""

    tags: dict[TagKey, TagValue] = Field(default_factory=empty_dict)
    """Extra tags on network resources (merged over the stack-wide tags)."""

    @property
    def adopting(self) -> bool:
        return self.vpc_id is not None

    @property
    def zones(self) -> list[str]:
        """The zones nodes can use: the private subnets' zones."""
        if self.adopting:
            return sorted(self.private_subnet_ids or {})
        return list(self.availability_zones or [])
