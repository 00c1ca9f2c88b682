"""What only the account knows, checked at preview against the account's region, before anything is registered.

With credentials (`pulumi preview`/`up`, `infra plan --live`) the program asks AWS; offline the plan engine's mocks
answer (tools/engine/mocks.py), and tests answer with fixtures that include what is missing:

- who runs it (`aws.get_caller_identity`): a declared deployer or cluster admin, and not the read-only preview
  deployer for an `up` (access/rules.py, `caller_issues`);
- the zones, by zone ID (`aws.get_availability_zones`; a letter is a different physical zone in each account):
  each chosen zone exists in this account, and a cluster this stack creates is in none EKS refuses
  (`arns.EKS_UNSUPPORTED_ZONE_IDS`); the subnets keep their zone names (switching them to IDs would replace
  every subnet);
- instance-type offerings in those zones (`aws.ec2.get_instance_type_offerings`, for the named types only): each
  node group has a type offered in every zone, each NodePool pinned to types or families has one offered in its
  zones; a type, family or zone that only narrows what launches is a warning;
- a VPC this stack already created (`aws.ec2.get_vpcs` by its Name and cluster tags, its discovery-tagged
  subnets): a `vpcCidr` it does not have, or zones reordered or removed, are refused (docs/changes.md);
- each EKS add-on version (`aws.eks.get_addon_version`: EKS's default and newest version for the minor). A pin
  newer than the newest cannot exist and fails, naming both; a pin that is neither is reported as unconfirmed.
  No data source lists every version (the invoke, like Terraform's `aws_eks_addon_version`, names only those
  two): `eks-karpenter pins --live` reads them all (DescribeAddonVersions) and fails on a pin EKS does not offer;
- the AMI behind each EC2NodeClass alias, for each architecture its NodePools admit: the public SSM parameter
  Karpenter itself resolves (`al2023@`, `al2@`, `bottlerocket@`). A missing one fails, naming the newest release;
- the system node group's AMI release: the managed node group release (`releaseVersion`, `<minor>.<patch>-<date>`)
  of the AMI pin `versions.AMI_ALIAS`, from the pinned release's own SSM parameter (`release_version` beside the
  `image_id` Karpenter reads). The group runs the release the EC2NodeClasses run, and a move of the pin rolls
  it; a pin with no release for the minor fails;
- the spot node groups' AMI release: the EKS-optimized `recommended/release_version` parameter for their AMI type
  and minor (what EKS gives a group without a release), reported when it is not the release the pin names.

The parameter names are pure functions, tested on their own; `check_pins` does the invokes.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_aws as aws

from eks_karpenter import tags, versions
from eks_karpenter.arns import EKS_UNSUPPORTED_ZONE_IDS
from eks_karpenter.config.errors import ConfigError, Issue, KeyPath
from eks_karpenter.labels import ARCH
from eks_karpenter.platform.access.config import AccessConfig
from eks_karpenter.platform.access.rules import caller_issues
from eks_karpenter.platform.adopted import ADDON_VERSIONS_TOKEN
from eks_karpenter.platform.network.plan import plan_subnets, vpc_name
from eks_karpenter.platform.nodepool.config import NodeClassConfig, NodePoolConfig
from eks_karpenter.platform.preflight.hook import in_cluster

ADDON_TOKEN = "aws:eks/getAddonVersion:getAddonVersion"
CALLER_TOKEN = "aws:index/getCallerIdentity:getCallerIdentity"
ZONES_TOKEN = "aws:index/getAvailabilityZones:getAvailabilityZones"
OFFERINGS_TOKEN = "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings"
VPCS_TOKEN = "aws:ec2/getVpcs:getVpcs"
VPC_TOKEN = "aws:ec2/getVpc:getVpc"
SUBNETS_TOKEN = "aws:ec2/getSubnets:getSubnets"
SUBNET_TOKEN = "aws:ec2/getSubnet:getSubnet"
SSM_TOKEN = "aws:ssm/getParameter:getParameter"
ARCHITECTURES = {"amd64": "x86_64", "arm64": "arm64"}
"""Kubernetes architecture -> the name in EKS's and Bottlerocket's SSM paths."""
_DATED = re.compile(r"^v?([0-9]{8})$")


def alias_parameter(alias: str, minor: str, arch: str) -> str | None:
    """The SSM parameter (`.../image_id`) Karpenter reads to resolve `alias` for Kubernetes `minor` on `arch`
    (amd64 or arm64); None for an alias family this library does not check (e.g. windows)."""
    family, _, version = alias.partition("@")
    a = ARCHITECTURES[arch]
    latest = version == "latest"
    if family == "al2023":
        name = "recommended" if latest else f"amazon-eks-node-al2023-{a}-standard-{minor}-{version}"
        return f"/aws/service/eks/optimized-ami/{minor}/amazon-linux-2023/{a}/standard/{name}/image_id"
    if family == "al2":
        folder = "amazon-linux-2" if arch == "amd64" else "amazon-linux-2-arm64"
        node = "amazon-eks-node" if arch == "amd64" else "amazon-eks-arm64-node"
        name = "recommended" if latest else f"{node}-{minor}-{version}"
        return f"/aws/service/eks/optimized-ami/{minor}/{folder}/{name}/image_id"
    if family == "bottlerocket":
        return f"/aws/service/bottlerocket/aws-k8s-{minor}/{a}/{'latest' if latest else version.lstrip('v')}/image_id"
    return None


def newest_parameter(family: str, minor: str, arch: str) -> str | None:
    """The SSM parameter naming the newest release of `family` for `minor` on `arch`."""
    a = ARCHITECTURES[arch]
    if family == "al2023":
        return f"/aws/service/eks/optimized-ami/{minor}/amazon-linux-2023/{a}/standard/recommended/release_version"
    if family == "al2":
        folder = "amazon-linux-2" if arch == "amd64" else "amazon-linux-2-arm64"
        return f"/aws/service/eks/optimized-ami/{minor}/{folder}/recommended/release_version"
    if family == "bottlerocket":
        return f"/aws/service/bottlerocket/aws-k8s-{minor}/{a}/latest/image_version"
    return None


def newest_alias(family: str, value: str) -> str:
    """The alias naming the release a `newest_parameter` holds: EKS's `1.35.0-20261101` is `al2023@v20261101`,
    Bottlerocket's `1.50.0-3e2bd5b8` is `bottlerocket@v1.50.0`."""
    if family == "bottlerocket":
        return f"bottlerocket@v{value.split('-')[0]}"
    return f"{family}@v{value.rsplit('-', 1)[-1]}"


def ami_type_family(ami_type: str) -> tuple[str, str] | None:
    """(alias family, architecture) of a managed node group AMI type (`AL2023_ARM_64_STANDARD` -> al2023, arm64);
    None for a type no alias family names (Windows, custom)."""
    arch = "arm64" if "ARM_64" in ami_type else "amd64"
    for prefix, family in (("AL2023_", "al2023"), ("AL2_", "al2"), ("BOTTLEROCKET_", "bottlerocket")):
        if ami_type.startswith(prefix):
            return family, arch
    return None


def node_group_parameter(ami_type: str, minor: str) -> tuple[str, str] | None:
    """(family, SSM parameter of the newest release) EKS gives a managed node group of `ami_type` on `minor`."""
    found = ami_type_family(ami_type)
    if found is None:
        return None
    parameter = newest_parameter(found[0], minor, found[1])
    return (found[0], parameter) if parameter else None


def release_parameter(alias: str, minor: str, arch: str) -> str | None:
    """The SSM parameter holding the managed node group release (`<minor>.<patch>-<date>`) of a dated EKS-optimized
    alias: the pinned release's own parameter, whose `release_version` sits beside the `image_id` Karpenter
    reads (EKS user guide, "Retrieve recommended Amazon Linux AMI IDs": the sub-parameters; its per-release
    parameters are named by the AMI name). None for `@latest` and for Bottlerocket (its releases are not EKS's)."""
    family, _, version = alias.partition("@")
    if version == "latest" or family not in ("al2023", "al2"):
        return None
    image = alias_parameter(alias, minor, arch)
    return image.removesuffix("/image_id") + "/release_version" if image else None


def class_architectures(node_class: str, pools: Sequence[NodePoolConfig]) -> tuple[str, ...]:
    """The architectures the NodePools using `node_class` admit (both when one leaves it open)."""
    found: set[str] = set()
    for pool in pools:
        if pool.node_class != node_class:
            continue
        admitted = set(pool.arch)
        for req in pool.requirements:
            if req.key == ARCH and req.operator == "In":
                admitted &= set(req.values or [])
            elif req.key == ARCH and req.operator == "NotIn":
                admitted -= set(req.values or [])
        found |= admitted
    return tuple(sorted(found))


def version_key(version: str) -> tuple[int, ...]:
    """`v1.21.1-eksbuild.3` -> (1, 21, 1, 3), for ordering add-on versions."""
    return tuple(int(n) for n in re.findall(r"[0-9]+", version))


def _parameter(name: str) -> str | None:
    """The parameter's value, or None when it does not exist (the invoke fails: ParameterNotFound)."""
    try:
        return str(aws.ssm.get_parameter(name=name).value)
    except Exception as err:  # the provider reports a missing parameter as a failed invoke, whatever its type
        if "ParameterNotFound" in str(err) or "not found" in str(err).lower():
            return None
        raise PinLookupError(f"looking up the public SSM parameter {name} failed ({err}): the identity running "
                             "the preview needs ssm:GetParameter on parameter/aws/service/*") from err


class PinLookupError(Exception):
    """A pin look-up failed for another reason than a missing version (access denied, throttling): the message
    names the permission the look-ups need."""


def _addon_version(name: str, minor: str, most_recent: bool) -> str:
    try:
        return str(aws.eks.get_addon_version(addon_name=name, kubernetes_version=minor, most_recent=most_recent)
                   .version)
    except Exception as err:
        raise PinLookupError(f"looking up EKS add-on {name} versions for Kubernetes {minor} failed ({err}): the "
                             "identity running the preview needs eks:DescribeAddonVersions") from err


def addon_issues(minor: str, pinned: dict[str, str], at: KeyPath) -> tuple[list[Issue], list[str]]:
    """(issues, warnings) for the add-on pins of `minor`: a pin EKS does not offer for the minor (every version it
    lists, DescribeAddonVersions), else, where that list cannot be had, held to EKS's default and newest."""
    issues: list[Issue] = []
    warnings: list[str] = []
    region = pulumi.Config("aws").get("region") or ""
    for name, pin in sorted(pinned.items()):
        answer = in_cluster({"region": region, "addonName": name, "kubernetesVersion": minor}, ADDON_VERSIONS_TOKEN)
        offered = answer.get("versions")
        if offered is not None:
            if pin not in offered:
                shown = ", ".join(sorted(offered, key=version_key, reverse=True)[:3]) or "none"
                issues.append(Issue(at + (name,), f"EKS offers no {name} {pin} for Kubernetes {minor} (it offers "
                                    f"{shown}, ...)", pin))
            continue
        if answer.get("error"):
            warnings.append(f"could not list EKS's {name} versions for Kubernetes {minor} ({answer['error']}): "
                            f"{name} {pin} is only held to EKS's default and newest (the identity needs "
                            "eks:DescribeAddonVersions)")
        newest = _addon_version(name, minor, most_recent=True)
        default = _addon_version(name, minor, most_recent=False)
        if pin in (newest, default):
            continue
        if version_key(pin) > version_key(newest):
            issues.append(Issue(at + (name,), f"EKS offers no {name} {pin} for Kubernetes {minor}: the newest is "
                                f"{newest}, the default {default}", pin))
        else:
            warnings.append(f"{name} {pin} for Kubernetes {minor} is neither EKS's default ({default}) nor its "
                            f"newest ({newest}); confirm it with `eks-karpenter pins --live`")
    return issues, warnings


def alias_issues(minor: str, classes: Sequence[NodeClassConfig], pools: Sequence[NodePoolConfig],
                 at: KeyPath) -> list[Issue]:
    """An EC2NodeClass alias that does not resolve for an architecture its pools admit."""
    issues: list[Issue] = []
    for i, node_class in enumerate(classes):
        archs = class_architectures(node_class.name, pools)
        for j, term in enumerate(node_class.ami_selector_terms):
            if not term.alias:
                continue
            family = term.alias.partition("@")[0]
            for arch in archs:
                parameter = alias_parameter(term.alias, minor, arch)
                if parameter is None or _parameter(parameter) is not None:
                    continue
                newest_name = newest_parameter(family, minor, arch)
                newest = _parameter(newest_name) if newest_name else None
                hint = f": the newest is {newest_alias(family, newest)}" if newest else ""
                issues.append(Issue(at + (i, "amiSelectorTerms", j, "alias"), f"{term.alias} has no {arch} AMI for "
                                    f"Kubernetes {minor} (SSM {parameter} does not exist){hint}", term.alias))
                break
    return issues


def pinned_release(ami_type: str, minor: str, at: KeyPath) -> tuple[str | None, list[Issue]]:
    """(release, issues): the managed node group release of the AMI pin `versions.AMI_ALIAS` for a group of
    `ami_type` on Kubernetes `minor`. None when the pin's family is not the group's (the group then gets EKS's
    newest release when it is created); an issue at `at` when the pinned release has none for the minor."""
    found = ami_type_family(ami_type)
    family = versions.AMI_ALIAS.partition("@")[0]
    parameter = release_parameter(versions.AMI_ALIAS, minor, found[1]) if found and found[0] == family else None
    if parameter is None:
        return None, []
    value = _parameter(parameter)
    if value is not None:
        return value, []
    newest_name = newest_parameter(family, minor, found[1]) if found else None
    newest = _parameter(newest_name) if newest_name else None
    hint = f" (the newest is {newest_alias(family, newest)})" if newest else ""
    return None, [Issue(at, f"the AMI pin {versions.AMI_ALIAS} has no {ami_type} release for Kubernetes {minor} (SSM "
                        f"{parameter} does not exist){hint}: move the pin with `eks-karpenter pins --live --write "
                        f"--kubernetes {minor}`", minor)]


def node_group_warnings(minor: str, ami_types: dict[str, str]) -> list[str]:
    """Node groups without a pinned release whose AMI release (EKS's newest for their type, what such a group
    launches) is not the release the AMI pin names: their nodes and Karpenter's then run different images."""
    pinned_family, _, pinned = versions.AMI_ALIAS.partition("@")
    warnings = []
    for group, ami_type in sorted(ami_types.items()):
        found = node_group_parameter(ami_type, minor)
        if found is None:
            continue
        family, parameter = found
        value = _parameter(parameter)
        if value is None:
            warnings.append(f"node group {group}: EKS names no {ami_type} AMI release for Kubernetes {minor} "
                            f"({parameter})")
        elif family == pinned_family and newest_alias(family, value) != versions.AMI_ALIAS:
            warnings.append(f"node group {group} gets AMI release {value} ({ami_type}) while the EC2NodeClass alias "
                            f"pins {pinned}: move versions.AMI_ALIAS with `eks-karpenter pins --write`")
    return warnings


def check_pins(minor: str, *, addons: dict[str, str] | None, classes: Sequence[NodeClassConfig],
               pools: Sequence[NodePoolConfig], node_groups: dict[str, str], source: str, project: str,
               pinned_groups: dict[str, str] | None = None) -> dict[str, str]:
    """Every look-up above; raises `ConfigError` naming the stack file and keys, logs the warnings. `addons` is
    None for an adopted cluster (its add-ons are not this stack's). `pinned_groups` (group -> AMI type) get the
    AMI pin's release: returned per group where the pin's family is the group's (`pinned_release`);
    `node_groups` are only checked against the pin."""
    issues: list[Issue] = []
    warnings: list[str] = []
    if addons is not None:
        found, warned = addon_issues(minor, addons, (f"{project}:cluster", "addonVersions"))
        issues += found
        warnings += warned
    issues += alias_issues(minor, classes, pools, (f"{project}:nodeClasses",))
    if issues:
        raise ConfigError(source, issues)
    releases: dict[str, str] = {}
    for group, ami_type in sorted((pinned_groups or {}).items()):
        release, found = pinned_release(ami_type, minor, (f"{project}:cluster", "version"))
        issues += found
        if release is not None:
            releases[group] = release
    if issues:
        raise ConfigError(source, issues)
    warnings += node_group_warnings(minor, node_groups)
    for warning in warnings:
        pulumi.log.warn(warning)
    return releases


def check_caller(access: AccessConfig, *, cluster_created: bool, source: str, project: str) -> None:
    """The identity this run acts as (environment credentials, a profile, or `aws:assumeRoles`: the default AWS
    provider's) against the declared deployers; raises `ConfigError` naming `access.deployers`."""
    caller = str(aws.get_caller_identity().arn)
    issues = caller_issues(caller, access, (f"{project}:access",), dry_run=pulumi.runtime.is_dry_run(),
                           cluster_created=cluster_created)
    if issues:
        raise ConfigError(source, issues)


# --- zones and instance-type offerings ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Launcher:
    """A node group or NodePool: the instance types it names, in which zones, and where the stack sets them."""

    kind: str
    """`node group` or `NodePool`."""
    name: str
    at: KeyPath
    types: tuple[str, ...]
    """A node group's `instanceTypes`; the types and families (no size: `m7i`) a NodePool is pinned to (its
    `instanceTypes` or `instanceFamilies`, or an `In` requirement on either), which bound what it admits. A pool
    pinned to neither admits whole categories, some of which every zone offers: not looked up."""
    zones: tuple[str, ...]


def zone_issues(zones: Mapping[str, KeyPath], account: Mapping[str, str], region: str,
                control_plane: bool) -> list[Issue]:
    """Chosen zones (name -> key path) against the account's (name -> zone ID): each must exist, and, where this
    stack creates the cluster (`control_plane`), not be a zone ID EKS refuses."""
    known = ", ".join(f"{name} ({zone_id})" for name, zone_id in sorted(account.items()))
    issues: list[Issue] = []
    for zone, at in zones.items():
        zone_id = account.get(zone)
        if zone_id is None:
            issues.append(Issue(at, f"this account has no zone {zone} (its zones in {region}: {known}; a zone letter "
                                "is a different physical zone in each account: `aws ec2 describe-availability-zones "
                                f"--region {region}`)", zone))
        elif control_plane and zone_id in EKS_UNSUPPORTED_ZONE_IDS.get(region, ()):
            issues.append(Issue(at, f"{zone} is zone {zone_id} in this account, where EKS creates no cluster "
                                "(UnsupportedAvailabilityZoneException, after the VPC is built): choose another of "
                                f"its zones ({known})", zone))
    return issues


def type_filter(name: str) -> str:
    """The `instance-type` filter value for a type or a family (`m7i` -> `m7i.*`)."""
    return name if "." in name else f"{name}.*"


def _named(pin: str, types: frozenset[str]) -> bool:
    """A type, or a family (no size), among `types`."""
    return pin in types if "." in pin else any(t.split(".", 1)[0] == pin for t in types)


def offering_issues(offered: Mapping[str, frozenset[str]], zone_ids: Mapping[str, str],
                    launchers: Sequence[Launcher]) -> tuple[list[Issue], list[str]]:
    """(issues, warnings): a node group without a type offered in one of its zones (its nodes cannot launch
    there) or a NodePool none of whose pinned types is offered in its zones is refused; a type, family or zone that
    only narrows what can launch is a warning. Zones not in `offered` (not in the account) are reported
    elsewhere."""
    issues: list[Issue] = []
    warnings: list[str] = []
    for launcher in launchers:
        zones = [z for z in launcher.zones if z in offered]
        names = f"{launcher.kind} {launcher.name}"
        where = ", ".join(f"{z} ({zone_ids.get(z, '?')})" for z in zones)
        in_zone = {z: [t for t in launcher.types if _named(t, offered[z])] for z in zones}
        if launcher.kind == "node group":
            for zone in (z for z in zones if not in_zone[z]):
                issues.append(Issue(launcher.at, f"{names}: none of its instance types is offered in {zone} "
                                    f"({zone_ids.get(zone, '?')}) in this account, so its nodes cannot launch there: "
                                    "add a type offered there (`aws ec2 describe-instance-type-offerings "
                                    "--location-type availability-zone --filters "
                                    f"Name=location,Values={zone}`) or choose another zone", list(launcher.types)))
            for t in launcher.types:
                # Zones with none of the group's types are refused above; here, those where others stand in.
                missing = [z for z in zones if in_zone[z] and t not in in_zone[z]]
                if missing:
                    warnings.append(f"{names}: {t} is not offered in {', '.join(missing)} in this account: the "
                                    "group launches its other types there")
            continue
        if zones and not any(in_zone.values()):
            issues.append(Issue(launcher.at, f"{names} is pinned to {', '.join(launcher.types)}, none of which is "
                                f"offered in its zones ({where}) in this account: Karpenter could launch no node for "
                                "it", list(launcher.types)))
            continue
        for t in launcher.types:
            if zones and not any(t in found for found in in_zone.values()):
                warnings.append(f"{names}: {t} is offered in none of its zones ({where}) in this account")
        empty = [z for z in zones if not in_zone[z]]
        if empty:
            warnings.append(f"{names} admits no instance type offered in {', '.join(empty)}: its nodes launch in "
                            "the other zones only")
    return issues, warnings


def check_zones(zones: Mapping[str, KeyPath], region: str, *, control_plane: bool, launchers: Sequence[Launcher],
                source: str) -> None:
    """The zone and offering look-ups above; raises `ConfigError`, logs the warnings. Offerings are asked for the
    named types only (one invoke; a whole region's offerings are thousands of rows)."""
    found = aws.get_availability_zones(state="available")
    account = dict(zip(found.names, found.zone_ids, strict=True))
    issues = zone_issues(zones, account, region, control_plane)
    present = sorted(z for z in zones if z in account)
    wanted = sorted({type_filter(t) for launcher in launchers for t in launcher.types})
    offered: dict[str, frozenset[str]] = {}
    if present and wanted:
        offerings = aws.ec2.get_instance_type_offerings(
            location_type="availability-zone",
            filters=[{"name": "location", "values": present}, {"name": "instance-type", "values": wanted}])
        by_zone: dict[str, set[str]] = {z: set() for z in present}
        for instance_type, location in zip(offerings.instance_types, offerings.locations, strict=True):
            by_zone.setdefault(location, set()).add(instance_type)
        offered = {z: frozenset(types) for z, types in by_zone.items()}
    found_issues, warnings = offering_issues(offered, account, launchers)
    issues += found_issues
    if issues:
        raise ConfigError(source, issues)
    for warning in warnings:
        pulumi.log.warn(warning)


# --- a VPC this stack already created ---------------------------------------------------------------------------

def network_change_issues(vpc_id: str, cidr: str, subnets: Mapping[str, tuple[str, str]], *, vpc_cidr: str,
                          zones: Sequence[str], at: KeyPath) -> list[Issue]:
    """The stack's existing VPC (`cidr`, and its private subnets: zone -> (subnet id, CIDR)) against the config:
    a VPC's CIDR cannot change in place, and a zone's subnet ranges follow its position in the list, so a new
    `vpcCidr`, or zones reordered or removed, would replace the network under a running cluster."""
    if cidr != vpc_cidr:
        return [Issue(at + ("vpcCidr",), f"this stack's VPC {vpc_id} exists with {cidr}: a VPC's CIDR cannot change "
                      "in place, so the VPC, its subnets and gateways would be replaced under the running cluster "
                      f"(which EKS cannot move). Keep {cidr}; for another range, destroy the stack first, or "
                      "create a new one (docs/changes.md)", vpc_cidr)]
    planned = {p.zone: p.private_cidr for p in plan_subnets(vpc_cidr, list(zones))} if zones else {}
    issues: list[Issue] = []
    for zone, (subnet_id, subnet_cidr) in sorted(subnets.items()):
        if zone not in planned:
            issues.append(Issue(at + ("availabilityZones",), f"{zone} is no longer listed, but this stack's subnet "
                                f"{subnet_id} ({subnet_cidr}) is there: removing a zone deletes subnets the "
                                "cluster's network interfaces and nodes sit in. Keep it (docs/changes.md says how to "
                                "leave a zone)", list(zones)))
        elif planned[zone] != subnet_cidr:
            issues.append(Issue(at + ("availabilityZones", list(zones).index(zone)), f"{zone} moved in the list: "
                                f"its subnet {subnet_id} has {subnet_cidr}, the new position gives "
                                f"{planned[zone]}, which replaces it under the running cluster. Keep the existing "
                                "zones in their order and append new ones at the end", zone))
    return issues


def check_network(cluster: str, network_tags: Mapping[str, str], *, vpc_cidr: str, zones: Sequence[str],
                  at: KeyPath, source: str) -> None:
    """Look up the VPC this stack created (by its Name and cluster tags) and its discovery-tagged private subnets;
    raises `ConfigError` on a change `pulumi up` would half-apply. No such VPC (a first `up`): nothing to check."""
    wanted = {"Name": vpc_name(cluster), tags.CLUSTER_TAG_KEY: network_tags.get(tags.CLUSTER_TAG_KEY, cluster)}
    issues: list[Issue] = []
    for vpc_id in aws.ec2.get_vpcs(tags=wanted).ids:
        cidr = str(aws.ec2.get_vpc(id=vpc_id).cidr_block)
        subnet_ids = aws.ec2.get_subnets(filters=[
            {"name": "vpc-id", "values": [vpc_id]},
            {"name": f"tag:{tags.DISCOVERY_KEY}", "values": [cluster]}]).ids
        subnets: dict[str, tuple[str, str]] = {}
        for subnet_id in subnet_ids:
            subnet = aws.ec2.get_subnet(id=subnet_id)
            subnets[str(subnet.availability_zone)] = (subnet_id, str(subnet.cidr_block))
        issues += network_change_issues(vpc_id, cidr, subnets, vpc_cidr=vpc_cidr, zones=zones, at=at)
    if issues:
        raise ConfigError(source, issues)
