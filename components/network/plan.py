"""Pure planning for the network: subnet ranges per zone. No Pulumi here."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

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


def nat_zones(zones: list[str], mode: str) -> list[str]:
    """Zones that get a NAT gateway: the first only (`single`) or all (`perAz`)."""
    return zones[:1] if mode == "single" else list(zones)


def slug(text: str) -> str:
    """A tag key or zone as a resource-name fragment: `kubernetes.io/role/elb` -> `kubernetes-io-role-elb`."""
    return "".join(c if c.isalnum() else "-" for c in text).strip("-")
