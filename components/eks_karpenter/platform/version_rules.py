"""Rules that span concerns: the cluster's Kubernetes version against the Karpenter release and the
EC2NodeClasses' AMI pins, for a created cluster (from the stack file) and an adopted one (from its look-up); the
EC2NodeClasses' discovery selectors against the tags the stack writes on its network and cluster.

Pure: config in, `Issue`s with key paths out. The cluster's own version rules (support dates, add-ons, managed
node group AMI types) live in `eks_karpenter/platform/cluster/rules.py`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date

from eks_karpenter import versions
from eks_karpenter.config.errors import ConfigError, Issue, KeyPath
from eks_karpenter.config.namespaces import PROJECT
from eks_karpenter.platform.cluster.config import ClusterConfig
from eks_karpenter.platform.cluster.rules import al2_unavailable
from eks_karpenter.platform.network.config import NetworkConfig
from eks_karpenter.platform.nodepool.class_config import alias_release_date
from eks_karpenter.platform.nodepool.config import NodeClassConfig
from eks_karpenter.tags import DISCOVERY_KEY

_DATED_RELEASE = re.compile(r"^v([0-9]{4})([0-9]{2})([0-9]{2})$")


def validate_node_class_amis(version: str, node_classes: Sequence[NodeClassConfig], at: KeyPath) -> list[Issue]:
    """AMI aliases and families that have no AMI for Kubernetes `version`: an AL2 alias or `amiFamily: AL2`
    from 1.33 on, and an Amazon Linux release (`al2023@vYYYYMMDD`) dated before EKS offered `version`."""
    issues: list[Issue] = []
    support = versions.EKS_KUBERNETES_SUPPORT.get(version)
    for i, node_class in enumerate(node_classes):
        for j, term in enumerate(node_class.ami_selector_terms):
            if not term.alias:
                continue
            path = at + (i, "amiSelectorTerms", j, "alias")
            family, _, release = term.alias.partition("@")
            if family == "al2" and al2_unavailable(version):
                issues.append(Issue(path, f"EKS publishes no Amazon Linux 2 AMIs for Kubernetes {version} (the "
                                    f"last is {versions.AL2_LAST_KUBERNETES_VERSION}): use an al2023@ or "
                                    "bottlerocket@ alias", term.alias))
                continue
            dated = _DATED_RELEASE.match(release)
            if dated and support and family in ("al2", "al2023"):
                released = date(*(int(g) for g in dated.groups()))
                if released < support.released:
                    issues.append(Issue(path, f"AMI release {release} predates Kubernetes {version} on EKS "
                                        f"({support.released}), so it has no AMI for {version}: pin a later "
                                        "release", term.alias))
        if node_class.ami_family == "AL2" and al2_unavailable(version) and not node_class.alias:
            issues.append(Issue(at + (i, "amiFamily"), f"EKS publishes no Amazon Linux 2 AMIs for Kubernetes "
                                f"{version}: use AL2023 or Bottlerocket", node_class.ami_family))
    return issues


def validate_ami_release_dates(node_classes: Sequence[NodeClassConfig], today: date, at: KeyPath) -> list[Issue]:
    """Amazon Linux alias releases dated after `today`: no AMI of that release exists yet (the alias would
    resolve to nothing and no node could launch)."""
    issues: list[Issue] = []
    for i, node_class in enumerate(node_classes):
        for j, term in enumerate(node_class.ami_selector_terms):
            release = term.alias.partition("@")[2] if term.alias else ""
            released = alias_release_date(release) if _DATED_RELEASE.match(release) else None
            if released is not None and released > today:
                issues.append(Issue(at + (i, "amiSelectorTerms", j, "alias"), f"release {release} is dated "
                                    f"after today ({today}): no AMI of that release exists yet; pin a published "
                                    "release (`eks-karpenter pins --live`)", term.alias))
    return issues


def kubernetes_outside_karpenter(kubernetes: str, karpenter: str) -> str | None:
    """Why Karpenter `karpenter` cannot run on Kubernetes `kubernetes` (None when it can, or when `karpenter` is
    not a supported release: that has its own error)."""
    release = versions.KARPENTER_RELEASES.get(karpenter)
    if release is None:
        return None
    low, high = release.kubernetes

    def key(v: str) -> tuple[int, ...]:
        return tuple(int(p) for p in v.split(".")[:2])

    if key(low) <= key(kubernetes) <= key(high):
        return None
    newer = [v for v, r in versions.KARPENTER_RELEASES.items()
             if key(r.kubernetes[0]) <= key(kubernetes) <= key(r.kubernetes[1])]
    hint = f": use Karpenter {newer[-1]}" if newer else ""
    return f"Karpenter {karpenter} supports Kubernetes {low} to {high}, not {kubernetes}{hint}"


def validate_kubernetes_for_karpenter(kubernetes: str, karpenter: str, at_cluster: KeyPath) -> list[Issue]:
    """The cluster's Kubernetes minor within the Karpenter release's compatibility matrix."""
    reason = kubernetes_outside_karpenter(kubernetes, karpenter)
    return [Issue(at_cluster + ("version",), reason, kubernetes)] if reason else []


def check_adopted_version(version: str, karpenter: str, node_classes: Sequence[NodeClassConfig], source: str,
                          at_cluster: KeyPath, at_classes: KeyPath) -> None:
    """An adopted cluster's Kubernetes minor (from its `eks:getCluster` look-up), checked as a created cluster's
    is from the stack file: within the Karpenter release's range, and with an AMI for every EC2NodeClass alias.
    Raises `ConfigError` naming the stack file; call it before registering anything."""
    issues = [Issue(at_cluster + ("existing",), f"the existing cluster runs Kubernetes {version}: {reason}", True)
              for reason in [kubernetes_outside_karpenter(version, karpenter)] if reason]
    issues += validate_node_class_amis(version, node_classes, at_classes)
    if issues:
        raise ConfigError(source, issues)


def ami_age_warnings(node_classes: Sequence[NodeClassConfig], today: date, max_age_days: int,
                     checkout: bool = True) -> list[str]:
    """EC2NodeClasses whose dated alias names an AMI release older than `max_age_days`
    (`eks-karpenter:cluster.amiMaxAgeDays`), each with how to move it: the library's pin is moved in the library's
    repository (`checkout`) by `pins --live --write`; where the library is an installed package, by upgrading it
    or by the class naming a newer release itself; a class's own alias, in the stack file."""
    warnings = []
    for i, node_class in enumerate(node_classes):
        for term in node_class.ami_selector_terms:
            dated = _DATED_RELEASE.match(term.alias.partition("@")[2]) if term.alias else None
            if not term.alias or not dated:
                continue
            age = (today - date(*(int(g) for g in dated.groups()))).days
            if age <= max_age_days:
                continue
            key = f"{PROJECT}:nodeClasses[{i}].amiSelectorTerms"
            newer = f"[{{alias: {term.alias.partition('@')[0]}@v<YYYYMMDD>}}]"
            if term.alias != versions.AMI_ALIAS:
                fix = f"set `{key}` to a newer release, {newer}"
            elif checkout:
                fix = "move the pin with `eks-karpenter pins --live --write`"
            else:
                fix = (f"upgrade the eks-karpenter library (each release moves its pin {versions.AMI_ALIAS}), or "
                       f"set `{key}` (class {node_class.name}) to a newer release, {newer}")
            warnings.append(f"EC2NodeClass {node_class.name}: AMI {term.alias} is {age} days old (cluster."
                            f"amiMaxAgeDays: {max_age_days}); its nodes miss the patches of newer releases: {fix} "
                            "(every node of its pools rolls)")
    return warnings


def discovery_warnings(classes: Sequence[NodeClassConfig], cluster: ClusterConfig,
                       network: NetworkConfig) -> list[str]:
    """Classes whose subnet (or security group) selector terms all ask for a `karpenter.sh/discovery` value other
    than the cluster's name, where the stack tags its subnets with that name (it creates the VPC, or
    `writeDiscoveryTags`) or its cluster's security group (a cluster it creates, with no `nodeSecurityGroupIds`):
    Karpenter would find none and launch no node, which only the smoke test would show."""
    tagged = {"subnets": not network.adopting or network.write_discovery_tags,
              "security group": not cluster.existing and not cluster.node_security_group_ids}
    out: list[str] = []
    for i, cls in enumerate(classes):
        for key, terms, what in (("subnetSelectorTerms", cls.subnet_selector_terms, "subnets"),
                                 ("securityGroupSelectorTerms", cls.security_group_selector_terms, "security group")):
            values = [(t.tags or {}).get(DISCOVERY_KEY) for t in terms or ()]
            if tagged[what] and values and all(v is not None and v not in (cluster.name, "*") for v in values):
                out.append(f"{PROJECT}:nodeClasses[{i}].{key} (class {cls.name}) selects {DISCOVERY_KEY}: "
                           f"{', '.join(sorted({str(v) for v in values}))}, but this stack tags its {what} "
                           f"{DISCOVERY_KEY}: {cluster.name}: Karpenter would find none and launch no node; select "
                           f"{cluster.name}, or leave {key} out for the stack's own")
    return out
