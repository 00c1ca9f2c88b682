"""What is known of an adopted cluster, as plain data: what the preflight found (read by its pure checks,
answered by the offline plan's mocks or, in a real run, by AWS look-ups and the cluster's own API), and the marks
this stack leaves on it (its Helm releases' description) that the cluster, Karpenter and NTH components write.
Below both the preflight and those components, so neither imports the other to share it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

IN_CLUSTER_TOKEN = "eks-karpenter:preflight:inCluster"
"""The name the in-cluster look-up goes by in the offline plan's invokes (and in `invoke_results`)."""
CRDS_TOKEN = "eks-karpenter:cluster:crds"
"""The look-up of which CRDs of some API groups a cluster has (created or adopted), by the same name. Offline the
mocks answer as a new cluster: none."""


ACCESS_ENTRY_MODES = ("API", "API_AND_CONFIG_MAP")
"""Authentication modes in which access entries (Karpenter's node entry, `eks-karpenter:access`) work."""


def release_marker(project: str, stack: str) -> str:
    """The description this stack's Helm releases carry: how a later preflight tells them from another tool's."""
    return f"eks-karpenter {project}/{stack}"


@dataclass(frozen=True)
class HelmRelease:
    """A Helm release (its storage Secret's labels, and the description it was installed with)."""

    namespace: str
    name: str
    status: str = "deployed"
    description: str = ""


@dataclass(frozen=True)
class Crd:
    """A CustomResourceDefinition of Karpenter's API groups, with the Helm release that owns it, if any."""

    name: str
    release_name: str | None = None
    release_namespace: str | None = None
    versions: tuple[str, ...] = ()


@dataclass(frozen=True)
class InCluster:
    """The cluster's API as the deployer sees it."""

    reachable: bool = True
    """The API server answered at all."""
    status: int | None = None
    """HTTP status of the call that failed (401: credentials refused; 403: not allowed), None when all passed."""
    error: str = ""
    """What failed, as the client said it."""
    helm_releases: tuple[HelmRelease, ...] = ()
    """Releases named like this stack's (any namespace)."""
    crds: tuple[Crd, ...] = ()
    """CRDs of `karpenter.sh` and `karpenter.k8s.aws`."""
    deployments: dict[str, int] = field(default_factory=dict)
    """`namespace/name` -> spec.replicas of the Deployments asked about (absent: not found)."""

    @staticmethod
    def from_answer(answer: dict[str, Any]) -> InCluster:
        return InCluster(
            reachable=bool(answer.get("reachable", True)),
            status=answer.get("status"),
            error=str(answer.get("error", "")),
            helm_releases=tuple(HelmRelease(r["namespace"], r["name"], r.get("status", "deployed"),
                                            r.get("description", "")) for r in answer.get("helmReleases", [])),
            crds=tuple(Crd(c["name"], c.get("releaseName"), c.get("releaseNamespace"), tuple(c.get("versions", [])))
                       for c in answer.get("crds", [])),
            deployments={str(k): int(v) for k, v in (answer.get("deployments") or {}).items()},
        )


@dataclass(frozen=True)
class NodeGroup:
    """A managed node group as `eks:DescribeNodegroup` reports it."""

    name: str
    capacity_type: str
    min_size: int
    max_size: int
    desired_size: int
    node_role_arn: str
    subnet_ids: tuple[str, ...]
    status: str = "ACTIVE"


@dataclass(frozen=True)
class ClusterFacts:
    """Everything the preflight read, before anything was registered."""

    name: str
    authentication_mode: str
    endpoint: str
    endpoint_public_access: bool
    public_access_cidrs: tuple[str, ...]
    deployer_arn: str
    in_cluster: InCluster | None
    """None when the in-cluster checks are off (`cluster.preflight: false`)."""
    node_groups: dict[str, NodeGroup | str] = field(default_factory=dict)
    """By name: the group, or why it could not be read."""
