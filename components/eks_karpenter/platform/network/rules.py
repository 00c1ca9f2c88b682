"""Cross-field rules for the network config. Field-level checks live on the types in config.py."""

from __future__ import annotations

from eks_karpenter.arns import zone_issue
from eks_karpenter.config.errors import Issue, KeyPath
from eks_karpenter.config.model import aliases
from eks_karpenter.platform.network.config import NetworkConfig, default_availability_zones
from eks_karpenter.tags import reserved_tag_issues

_CREATE_ONLY = ("availability_zones", "vpc_cidr", "nat_gateways", "flow_logs")
_ADOPT_ONLY = ("private_subnet_ids", "public_subnet_ids", "write_discovery_tags", "write_load_balancer_tags")


def validate_network(cfg: NetworkConfig, region: str | None, at: KeyPath) -> list[Issue]:
    """Rules on `eks-karpenter:network`; zone-vs-region rules only with a valid `region`."""
    vpc = _adopted_vpc_issues(cfg, at) if cfg.adopting else _created_vpc_issues(cfg, region, at)
    return [*_flow_log_issues(cfg, at), *vpc, *_zone_issues(cfg, region, at),
            *reserved_tag_issues(cfg.tags, at + ("tags",))]


def _flow_log_issues(cfg: NetworkConfig, at: KeyPath) -> list[Issue]:
    flow = cfg.flow_logs
    issues = []
    if flow.destination == "s3" and flow.enabled and not flow.s3_bucket_arn:
        issues.append(Issue(at + ("flowLogs", "s3BucketArn"), "required with destination: s3 (an existing bucket "
                            "that lets delivery.logs.amazonaws.com write)", None, has_value=False))
    if flow.s3_bucket_arn and flow.destination != "s3":
        issues.append(Issue(at + ("flowLogs", "s3BucketArn"), "only applies with destination: s3",
                            flow.s3_bucket_arn))
    return issues


def _adopted_vpc_issues(cfg: NetworkConfig, at: KeyPath) -> list[Issue]:
    """An adopted VPC (vpcId): no create-only keys, private subnets in two zones or more, no subnet twice."""
    alias = aliases(NetworkConfig)
    issues = [Issue(at + (alias[name],), "only applies when creating a VPC; remove it when adopting one with vpcId",
                    cfg.written(name)) for name in _CREATE_ONLY if cfg.is_set(name)]
    if not cfg.private_subnet_ids:
        issues.append(Issue(at + ("privateSubnetIds",), "required when adopting a VPC (vpcId is set): "
                            "map each zone to an existing private subnet", None, has_value=False))
    elif len(cfg.private_subnet_ids) < 2:
        issues.append(Issue(at + ("privateSubnetIds",), "needs subnets in at least 2 zones",
                            cfg.private_subnet_ids))
    ids = [*(cfg.private_subnet_ids or {}).values(), *(cfg.public_subnet_ids or {}).values()]
    issues += [Issue(at, "a subnet is listed twice (private and public, or in two zones)", dup)
               for dup in sorted({i for i in ids if ids.count(i) > 1})]
    return issues


def _created_vpc_issues(cfg: NetworkConfig, region: str | None, at: KeyPath) -> list[Issue]:
    """A VPC this stack creates: no adopt-only keys, and its zones given (or the region's defaults), once each."""
    alias = aliases(NetworkConfig)
    issues = [Issue(at + (alias[name],), "only applies when adopting a VPC; set vpcId too, or remove it",
                    cfg.written(name)) for name in _ADOPT_ONLY if cfg.is_set(name)]
    if cfg.availability_zones is None:
        # load_stack_config fills the region's default zones: from a stack file only regions without one get
        # here. Without a valid `aws:region` (its own error) there is nothing to say about zones.
        if region is not None:
            why = (f" in {region}: its usable zones differ per account (`aws ec2 describe-availability-zones`)"
                   if default_availability_zones(region) is None else "")
            issues.append(Issue(at + ("availabilityZones",), f"required when creating a VPC{why} (or set "
                                "vpcId to adopt one)", None, has_value=False))
    elif len(set(cfg.availability_zones)) != len(cfg.availability_zones):
        issues.append(Issue(at + ("availabilityZones",), "zones must be unique", cfg.availability_zones))
    return issues


def _zone_issues(cfg: NetworkConfig, region: str | None, at: KeyPath) -> list[Issue]:
    """Every zone the section names is one of the stack's region."""
    if not region:
        return []
    zone_fields: list[tuple[KeyPath, list[str]]] = [
        (at + ("availabilityZones",), list(cfg.availability_zones or [])),
        (at + ("privateSubnetIds",), list(cfg.private_subnet_ids or {})),
        (at + ("publicSubnetIds",), list(cfg.public_subnet_ids or {})),
    ]
    issues = []
    for path, zones in zone_fields:
        for i, zone in enumerate(zones):
            problem = zone_issue(zone, region)
            if problem is not None:
                where = path + (i,) if path[-1] == "availabilityZones" else path + (zone,)
                issues.append(Issue(where, problem, zone))
    return issues


def validate_network_for_cluster(cfg: NetworkConfig, existing_cluster: bool, at: KeyPath) -> list[Issue]:
    """An adopted cluster already runs in its own VPC: Karpenter's nodes must join that VPC, not a new one."""
    if existing_cluster and not cfg.adopting:
        return [Issue(at + ("vpcId",), "the cluster is adopted (eks-karpenter:cluster.existing), so it already runs "
                      "in a VPC: set vpcId and privateSubnetIds to that VPC's; a new VPC would hold nodes the "
                      "cluster's control plane cannot reach", None, has_value=False)]
    return []
