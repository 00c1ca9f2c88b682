"""Tag sets, as pure data. Karpenter finds subnets and the node security group by these tags."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Annotated

from pydantic import AfterValidator, StringConstraints

from eks_karpenter.config.errors import Issue, KeyPath

DISCOVERY_KEY = "karpenter.sh/discovery"
INTERNAL_ELB_KEY = "kubernetes.io/role/internal-elb"
ELB_KEY = "kubernetes.io/role/elb"
CLUSTER_TAG_KEY = "eks-karpenter/cluster"
STACK_TAG_KEY = "eks-karpenter/stack"
"""On the resources whose names are fixed by the cluster's (its control-plane log group, its interruption queue):
the Pulumi stack that manages them, `<organization>/<project>/<stack>`. The cluster tag alone cannot tell two
stacks of one cluster name apart, and the preview adopts such a resource only when it is this stack's."""
CLOUDFORMATION_STACK_TAG_KEY = "aws:cloudformation:stack-name"
"""Set by CloudFormation on what a CloudFormation stack created: deleting that stack deletes the resource."""
NAME_KEY = "Name"
"""The name EC2 and the console show; the platform names its own resources (and Karpenter its nodes) by it."""

# Keys users may not set through `tags`: they drive discovery and ownership, and a stray copy on the wrong
# resource breaks Karpenter or the AWS Load Balancer Controller.
RESERVED_PREFIXES = ("karpenter.sh/", "karpenter.k8s.aws/", "kubernetes.io/cluster/", "eks:", "aws:",
                     # queue-mode NTH drains every instance carrying its managed tag, Karpenter's included
                     "aws-node-termination-handler/",
                     # a copy on a stack's log group or queue would let another stack adopt it
                     STACK_TAG_KEY)


def _tag_text(value: str) -> str:
    # What every AWS service taking these tags accepts (IAM and EC2 agree on this set): letters, digits, spaces
    # and _ . : / = + - @.
    bad = sorted({c for c in value if not (c.isalnum() or unicodedata.category(c) == "Zs" or c in "_.:/=+-@")})
    if bad:
        raise ValueError(f"tags may only hold letters, digits, spaces and _ . : / = + - @ (not {''.join(bad)!r})")
    return value


TagKey = Annotated[str, StringConstraints(min_length=1, max_length=128), AfterValidator(_tag_text)]
"""An AWS tag key: 1 to 128 characters."""
TagValue = Annotated[str, StringConstraints(max_length=256), AfterValidator(_tag_text)]
"""An AWS tag value: up to 256 characters."""


def reserved_tag_key(key: str) -> bool:
    return key.startswith(RESERVED_PREFIXES)


def reserved_tag_issues(tags: Mapping[str, str], at: KeyPath) -> list[Issue]:
    """Stack-wide tags whose keys this library sets itself (discovery and ownership)."""
    return [Issue(at + (key,), "reserved tag key: discovery and ownership tags are set by this library", value)
            for key, value in tags.items() if reserved_tag_key(key)]


def discovery_tags(cluster_name: str) -> dict[str, str]:
    """The tag Karpenter's default selector terms match (subnets and the one node security group)."""
    return {DISCOVERY_KEY: cluster_name}


def base_tags(cluster_name: str, user_tags: Mapping[str, str]) -> dict[str, str]:
    """Tags on every resource: the user's, plus the cluster they belong to (for cost allocation)."""
    return {**user_tags, CLUSTER_TAG_KEY: cluster_name}


def stack_owner_tags(organization: str, project: str, stack: str) -> dict[str, str]:
    """The tag naming the stack that manages a fixed-name resource (`STACK_TAG_KEY`)."""
    return {STACK_TAG_KEY: f"{organization}/{project}/{stack}"}


def private_subnet_tags(cluster_name: str) -> dict[str, str]:
    """Nodes and internal load balancers go here; Karpenter discovers these subnets."""
    return {**discovery_tags(cluster_name), INTERNAL_ELB_KEY: "1"}


def public_subnet_tags() -> dict[str, str]:
    """Internet-facing load balancers only. Never the discovery tag: nodes must not land in public subnets."""
    return {ELB_KEY: "1"}


def name_tag(tags: Mapping[str, str], name: str) -> dict[str, str]:
    return {**tags, NAME_KEY: name}
