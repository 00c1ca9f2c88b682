"""What is known of an adopted cluster, as plain data: what the preflight found (read by its pure checks,
answered by the offline plan's mocks or, in a real run, by AWS look-ups and the cluster's own API), and the marks
this stack leaves on it (its Helm releases' description and ownership label) that the cluster, Karpenter and NTH
components write. The offline plan's mocks mark the answers they invent (`OFFLINE_PLACEHOLDER`), so the preflight
never takes them for the cluster's facts.
Below both the preflight and those components, so neither imports the other to share it."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from eks_karpenter.labels import HELM_OWNER_LABEL, RELEASE_OWNER_LABEL

IN_CLUSTER_TOKEN = "eks-karpenter:preflight:inCluster"
"""The name the in-cluster look-up goes by in the offline plan's invokes (and in `invoke_results`)."""
CRDS_TOKEN = "eks-karpenter:cluster:crds"
ADDON_VERSIONS_TOKEN = "eks-karpenter:eks:addonVersions"
"""The look-up of every version EKS offers of an add-on for a Kubernetes minor (DescribeAddonVersions): no Pulumi
data source lists them all."""
"""The look-up of which CRDs of some API groups a cluster has (created or adopted), by the same name. Offline the
mocks answer as a new cluster: none."""
NODE_GROUP_METADATA_TOKEN = "eks-karpenter:eks:nodeGroupMetadata"
"""The look-up of every managed node group of an adopted cluster with its taints and its nodes' instance metadata
options (ListNodegroups, DescribeNodegroup, DescribeLaunchTemplateVersions): no Pulumi data source reads a given
launch template version."""


ACCESS_ENTRY_MODES = ("API", "API_AND_CONFIG_MAP")
"""Authentication modes in which access entries (Karpenter's node entry, `eks-karpenter:access`) work."""


OFFLINE_PLACEHOLDER = "eks-karpenter:offline-placeholder"
"""Marks a look-up answer the offline plan's mocks made up (a tag on a cluster or node group, a key of the
in-cluster answer): not the cluster's facts."""


def release_marker(project: str, stack: str) -> str:
    """The description this stack's Helm releases carry. A rollback replaces it (`Rollback to N`): the ownership
    label (`release_owner`) is what the preflight trusts; the description still marks releases installed before
    the label existed."""
    return f"eks-karpenter {project}/{stack}"


_LABEL_VALUE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")


def release_owner(project: str, stack: str) -> str:
    """The value of `RELEASE_OWNER_LABEL` on this stack's Helm release Secrets: `<project>.<stack>`, or a digest
    of it where that is no valid label value (over 63 characters)."""
    value = f"{project}.{stack}"
    return value if _LABEL_VALUE.match(value) else "sha256-" + hashlib.sha256(value.encode()).hexdigest()[:40]


def label_release_command(namespace: str, name: str, owner: str) -> str:
    """Marks every stored revision of a Helm release as this stack's (so a rollback to any of them keeps it)."""
    return (f"kubectl label secret -n {namespace} -l {HELM_OWNER_LABEL}=helm,name={name} "
            f"{RELEASE_OWNER_LABEL}={owner} --overwrite")


@dataclass(frozen=True)
class HelmRelease:
    """A Helm release (its storage Secret's labels, and the description it was installed with)."""

    namespace: str
    name: str
    status: str = "deployed"
    description: str = ""
    owner: str = ""
    """Its `RELEASE_OWNER_LABEL` (empty: none)."""


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
    """The CRDs the chosen Karpenter release installs, and older Karpenters' (v1alpha5), that exist."""
    deployments: dict[str, int] = field(default_factory=dict)
    """`namespace/name` -> spec.replicas of the Deployments asked about (absent: not found)."""
    placeholder: bool = False
    """The offline plan's mocks made this answer up."""

    @staticmethod
    def from_answer(answer: dict[str, Any]) -> InCluster:
        return InCluster(
            reachable=bool(answer.get("reachable", True)),
            status=answer.get("status"),
            error=str(answer.get("error", "")),
            helm_releases=tuple(HelmRelease(r["namespace"], r["name"], r.get("status", "deployed"),
                                            r.get("description", ""), r.get("owner", ""))
                                for r in answer.get("helmReleases", [])),
            crds=tuple(Crd(c["name"], c.get("releaseName"), c.get("releaseNamespace"), tuple(c.get("versions", [])))
                       for c in answer.get("crds", [])),
            deployments={str(k): int(v) for k, v in (answer.get("deployments") or {}).items()},
            placeholder=bool(answer.get(OFFLINE_PLACEHOLDER)),
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
    placeholder: bool = False
    """The offline plan's mocks made this group up (its sizes and capacity type are not the cluster's)."""


EKS_DEFAULT_METADATA = ("optional", 2)
"""(httpTokens, hop limit) taken for a managed node group without a launch template of its own, and for a value
a launch template leaves out. EKS then launches the group from a template it creates "with default values" (EKS
User Guide, "Customize managed nodes with launch templates"), which it does not list; an instance left to EC2's
defaults gets IMDSv1 unless its AMI is registered with ImdsSupport v2.0, which brings hop limit 2 (EC2 API
Reference, RegisterImage `ImdsSupport`). The least safe of these is taken: only metadata options the cluster's
owner set in a launch template show a group's nodes closed to pods."""


@dataclass(frozen=True)
class AdoptedGroup:
    """A managed node group of an adopted cluster, with what decides whether a pod on its nodes reaches IMDS."""

    name: str
    taints: tuple[tuple[str, str], ...]
    """(key, effect) of each taint, effect as EKS spells it (`NO_SCHEDULE`, `NO_EXECUTE`, `PREFER_NO_SCHEDULE`)."""
    http_tokens: str
    """`required` (IMDSv2 only) or `optional` (IMDSv1 too, which no hop limit bounds)."""
    hop_limit: int
    source: str
    """Where the metadata options come from: `launch template <id> version <v>`, or EKS's default."""
    placeholder: bool = False
    """The offline plan's mocks made this group up."""

    @property
    def exposed(self) -> bool:
        """A pod (not only a host-network one) on its nodes can take the node role's credentials."""
        return self.http_tokens != "required" or self.hop_limit > 1

    @property
    def fencing_taint_keys(self) -> tuple[str, ...]:
        """Keys of its taints that keep pods off (NoSchedule, NoExecute) unless they tolerate them."""
        return tuple(dict.fromkeys(k for k, effect in self.taints if effect in ("NO_SCHEDULE", "NO_EXECUTE")))

    @staticmethod
    def from_answer(name: str, answer: dict[str, Any]) -> AdoptedGroup:
        return AdoptedGroup(name, tuple((str(t["key"]), str(t["effect"])) for t in answer.get("taints") or []),
                            str(answer.get("httpTokens") or EKS_DEFAULT_METADATA[0]),
                            int(answer.get("hopLimit") or EKS_DEFAULT_METADATA[1]),
                            str(answer.get("source", "")), bool(answer.get(OFFLINE_PLACEHOLDER)))


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
    version: str = ""
    placeholder: bool = False
    """The offline plan's mocks made the cluster's look-up up (its version, access settings)."""
    adopted_groups: tuple[AdoptedGroup, ...] | str = ()
    """Every managed node group of the cluster with its taints and metadata options (read when teams are
    configured), or why they could not be read."""
