"""Rules that span concerns: the cluster's Kubernetes version against the Karpenter EC2NodeClasses' AMI pins.

Pure: config in, `Issue`s with key paths out. The cluster's own version rules (support dates, add-ons, managed
node group AMI types) live in `eks_karpenter/platform/cluster/rules.py`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date

from eks_karpenter import versions
from eks_karpenter.config.errors import Issue, Path
from eks_karpenter.platform.cluster.rules import al2_unavailable
from eks_karpenter.platform.nodepool.config import NodeClassConfig

_DATED_RELEASE = re.compile(r"^v([0-9]{4})([0-9]{2})([0-9]{2})$")


def validate_node_class_amis(version: str, node_classes: Sequence[NodeClassConfig], at: Path) -> list[Issue]:
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
