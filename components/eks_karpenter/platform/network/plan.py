"""Pure planning for the network: subnet ranges per zone. No Pulumi here."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

PRIVATE_NEWBITS = 3  # eight private blocks; at most six zones use them, block 7 holds the public subnets
PUBLIC_NEWBITS = 6
_PUBLIC_BLOCK = 7


@dataclass(frozen=True)
class ZoneSubnets:
    zone: str
    private_cidr: str
    public_cidr: str


def plan_subnets(vpc_cidr: str, zones: list[str]) -> list[ZoneSubnets]:
    """Large private subnets (nodes and pods take VPC addresses) and small public ones (NAT and LBs).

    A zone's ranges depend only on its position, so appending a zone never moves an existing subnet.
    """
    if not 1 <= len(zones) <= 6:
        raise ValueError(f"1 to 6 zones, got {len(zones)}")
    vpc = ipaddress.IPv4Network(vpc_cidr)
    private = list(vpc.subnets(prefixlen_diff=PRIVATE_NEWBITS))
    public = list(private[_PUBLIC_BLOCK].subnets(prefixlen_diff=PUBLIC_NEWBITS - PRIVATE_NEWBITS))
    return [ZoneSubnets(z, str(private[i]), str(public[i])) for i, z in enumerate(zones)]


def vpc_name(cluster_name: str) -> str:
    """The `Name` tag of the VPC this stack creates (the preview looks it up by it)."""
    return f"{cluster_name}-vpc"


def nat_zones(zones: list[str], mode: str) -> list[str]:
    """Zones that get a NAT gateway: the first only (`single`) or all (`perAz`)."""
    return zones[:1] if mode == "single" else list(zones)


def slug(text: str) -> str:
    """A tag key or zone as a resource-name fragment: `kubernetes.io/role/elb` -> `kubernetes-io-role-elb`."""
    return "".join(c if c.isalnum() else "-" for c in text).strip("-")


def flow_logs_log_group(cluster_name: str) -> str:
    return f"/aws/vpc/{cluster_name}/flow-logs"


def flow_logs_trust_policy(log_group_arn: str) -> dict[str, Any]:
    """Trust of the role VPC Flow Logs writes with: the service, for flow logs of this account and region only
    (confused-deputy protection). Account, region and partition are read off the log group's ARN."""
    partition, _, region, account = log_group_arn.split(":")[1:5]
    return {
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Principal": {"Service": "vpc-flow-logs.amazonaws.com"},
            "Action": "sts:AssumeRole",
            "Condition": {
                "StringEquals": {"aws:SourceAccount": account},
                "ArnLike": {"aws:SourceArn": f"arn:{partition}:ec2:{region}:{account}:vpc-flow-log/*"},
            },
        }],
    }


def flow_logs_write_policy(log_group_arn: str) -> dict[str, Any]:
    """What the flow-logs role may do: write streams of its one log group."""
    return {
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Action": ["logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogGroups",
                       "logs:DescribeLogStreams"],
            "Resource": [log_group_arn, f"{log_group_arn}:*"],
        }],
    }
