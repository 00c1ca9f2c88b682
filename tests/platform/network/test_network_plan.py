"""Pure network planning: subnet ranges and NAT placement."""

from __future__ import annotations

import ipaddress

import pytest
from eks_karpenter.platform.network.plan import nat_zones, plan_subnets, slug

ZONES = ["eu-west-1a", "eu-west-1b", "eu-west-1c", "eu-west-1d", "eu-west-1e", "eu-west-1f"]


@pytest.mark.parametrize("count", range(1, 7))
@pytest.mark.parametrize("cidr", ["10.0.0.0/16", "172.16.0.0/18", "192.168.0.0/20"])
def test_subnets_fit_the_vpc_and_never_overlap(cidr: str, count: int) -> None:
    vpc = ipaddress.IPv4Network(cidr)
    plans = plan_subnets(cidr, ZONES[:count])
    nets = [ipaddress.IPv4Network(c) for p in plans for c in (p.private_cidr, p.public_cidr)]
    assert all(n.subnet_of(vpc) for n in nets)
    for i, a in enumerate(nets):
        for b in nets[i + 1:]:
            assert not a.overlaps(b), (a, b)


def test_private_subnets_are_large_and_public_small() -> None:
    plan = plan_subnets("10.0.0.0/16", ZONES[:3])
    assert [p.private_cidr for p in plan] == ["10.0.0.0/19", "10.0.32.0/19", "10.0.64.0/19"]
    assert [p.public_cidr for p in plan] == ["10.0.224.0/22", "10.0.228.0/22", "10.0.232.0/22"]


def test_appending_a_zone_keeps_existing_ranges() -> None:
    before = plan_subnets("10.0.0.0/16", ZONES[:2])
    after = plan_subnets("10.0.0.0/16", ZONES[:3])
    assert after[:2] == before


def test_more_than_six_zones_is_refused() -> None:
    with pytest.raises(ValueError, match="1 to 6 zones"):
        plan_subnets("10.0.0.0/16", [*ZONES, "eu-west-1g"])


def test_nat_zones() -> None:
    assert nat_zones(ZONES[:3], "single") == ["eu-west-1a"]
    assert nat_zones(ZONES[:3], "perAz") == ZONES[:3]


def test_slug() -> None:
    assert slug("kubernetes.io/role/internal-elb") == "kubernetes-io-role-internal-elb"
