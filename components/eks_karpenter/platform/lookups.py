"""What only the account knows, checked at preview against the account's region, before anything is registered.

With credentials (`pulumi preview`/`up`, `infra plan --live`) the program asks AWS; offline the plan engine's mocks
answer (tools/engine/mocks.py), and tests answer with fixtures that include what is missing:

- who runs it (`aws.get_caller_identity`): a declared deployer or cluster admin, and not the read-only preview
  deployer for an `up` (access/rules.py, `caller_issues`);
- each EKS add-on version (`aws.eks.get_addon_version`: EKS's default and newest version for the minor). A pin
  newer than the newest cannot exist and fails, naming both; a pin that is neither is reported as unconfirmed.
  No data source lists every version (the invoke, like Terraform's `aws_eks_addon_version`, names only those
  two): `eks-karpenter pins --live` reads them all (DescribeAddonVersions) and fails on a pin EKS does not offer;
- the AMI behind each EC2NodeClass alias, for each architecture its NodePools admit: the public SSM parameter
  Karpenter itself resolves (`al2023@`, `al2@`, `bottlerocket@`). A missing one fails, naming the newest release;
- the system and spot node groups' AMI release: the EKS-optimized `recommended/release_version` parameter for
  their AMI type and minor, reported when it is not the release the EC2NodeClass alias pins.

The parameter names are pure functions, tested on their own; `check_pins` does the invokes.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

import pulumi
import pulumi_aws as aws

from eks_karpenter import versions
from eks_karpenter.config.errors import ConfigError, Issue, KeyPath
from eks_karpenter.labels import ARCH
from eks_karpenter.platform.access.config import AccessConfig
from eks_karpenter.platform.access.rules import caller_issues
from eks_karpenter.platform.nodepool.config import NodeClassConfig, NodePoolConfig

ADDON_TOKEN = "aws:eks/getAddonVersion:getAddonVersion"
CALLER_TOKEN = "aws:index/getCallerIdentity:getCallerIdentity"
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


def node_group_parameter(ami_type: str, minor: str) -> tuple[str, str] | None:
    """(family, SSM parameter of the newest release) EKS gives a managed node group of `ami_type` on `minor`."""
    arch = "arm64" if "ARM_64" in ami_type else "amd64"
    for prefix, family in (("AL2023_", "al2023"), ("AL2_", "al2"), ("BOTTLEROCKET_", "bottlerocket")):
        if ami_type.startswith(prefix):
            parameter = newest_parameter(family, minor, arch)
            return (family, parameter) if parameter else None
    return None


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
    """(issues, warnings) for the add-on pins of `minor`, from EKS's default and newest version of each."""
    issues: list[Issue] = []
    warnings: list[str] = []
    for name, pin in sorted(pinned.items()):
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


def node_group_warnings(minor: str, ami_types: dict[str, str]) -> list[str]:
    """Node groups whose AMI release (EKS's newest for their type, what a group launches) is not the release the
    default EC2NodeClass alias pins: system nodes and Karpenter's then run different images."""
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
               pools: Sequence[NodePoolConfig], node_groups: dict[str, str], source: str, project: str) -> None:
    """Every look-up above; raises `ConfigError` naming the stack file and keys, logs the warnings. `addons` is
    None for an adopted cluster (its add-ons are not this stack's)."""
    issues: list[Issue] = []
    warnings: list[str] = []
    if addons is not None:
        found, warned = addon_issues(minor, addons, (f"{project}:cluster", "addonVersions"))
        issues += found
        warnings += warned
    issues += alias_issues(minor, classes, pools, (f"{project}:nodeClasses",))
    if issues:
        raise ConfigError(source, issues)
    warnings += node_group_warnings(minor, node_groups)
    for warning in warnings:
        pulumi.log.warn(warning)


def check_caller(access: AccessConfig, *, cluster_created: bool, source: str, project: str) -> None:
    """The identity this run acts as (environment credentials, a profile, or `aws:assumeRoles`: the default AWS
    provider's) against the declared deployers; raises `ConfigError` naming `access.deployers`."""
    caller = str(aws.get_caller_identity().arn)
    issues = caller_issues(caller, access, (f"{project}:access",), dry_run=pulumi.runtime.is_dry_run(),
                           cluster_created=cluster_created)
    if issues:
        raise ConfigError(source, issues)
