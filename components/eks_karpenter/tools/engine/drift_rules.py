"""Which NodePool and EC2NodeClass edits drift running nodes, for each supported Karpenter release: data.

Karpenter v1 marks a NodeClaim `Drifted`, and replaces its node under the pool's budgets for `Drifted`, when:

- `hashed`: a field in the hash stamped on the NodeClaim at launch changes. The NodePool's hash covers its
  `spec.template` less the fields tagged `hash:"ignore"` (the requirements); the EC2NodeClass's covers its `spec`
  less the tagged fields (selector terms, `amiFamily`, `ipPrefixCount`), plus the AMI family it resolves to and
  the cluster's CA bundle. Both hash with lists as sets and a null field as absent.
- `requirements`: a NodeClaim whose labels no longer satisfy the pool's requirements (`RequirementsDrifted`):
  narrowing drifts the nodes it excludes, widening none.
- `resolved-selector`: a node whose subnet, security groups, AMI or capacity reservation is no longer among what
  the class's selector terms resolve to (`SubnetDrift`, `SecurityGroupDrift`, `AMIDrift`,
  `CapacityReservationDrift`): editing the terms drifts nodes only if what they resolve to changes.
- `no-drift`: behaviour, not the node: disruption settings and budgets, limits, weight, replicas, `ipPrefixCount`.

Derived by reading Karpenter's source at each release's tag, listed per release in `sources`: the struct tags
and `Hash()` options of the NodePool (`pkg/apis/v1/nodepool.go`; `nodeclaim.go` tags the NodeClaim's own copy
of the requirements the same way) and the EC2NodeClass (`pkg/apis/v1/ec2nodeclass.go`), and the drift checks
(`pkg/controllers/nodeclaim/disruption/drift.go`, `pkg/cloudprovider/drift.go`). Those Go files are not among the
upstream files the tests read offline; the tests hold the table to each release's CRDs (every field of the spec
classified, none that the CRD lacks). To re-derive for a new release: compare the listed files' blobs at its tag
with these (`git show <tag>:<path>`, `git rev-parse <tag>:<path>`); where one differs, read its `hash:` tags,
`Hash()` and drift checks again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

DriftClass = Literal["hashed", "requirements", "resolved-selector", "no-drift"]
HASHED: DriftClass = "hashed"
REQUIREMENTS: DriftClass = "requirements"
RESOLVED: DriftClass = "resolved-selector"
NO_DRIFT: DriftClass = "no-drift"

CORE = "kubernetes-sigs/karpenter"
PROVIDER = "aws/karpenter-provider-aws"


@dataclass(frozen=True)
class SourceFile:
    """One upstream file a table was derived from."""

    repo: str
    tag: str
    path: str
    blob: str
    """`git rev-parse <tag>:<path>`: a later tag with the same blob needs no re-reading."""


@dataclass(frozen=True)
class DriftRules:
    """The drift classes of one Karpenter release's NodePool and EC2NodeClass fields (dotted paths)."""

    release: str
    node_pool: Mapping[str, DriftClass]
    node_class: Mapping[str, DriftClass]
    sources: tuple[SourceFile, ...]
    node_pool_hash_version: str
    """`NodePoolHashVersion`: a release that changes it re-stamps NodeClaims instead of drifting them."""
    node_class_hash_version: str
    """`EC2NodeClassHashVersion`, likewise."""


RESOLVES: dict[str, tuple[str, str]] = {
    "spec.subnetSelectorTerms": ("subnets", "nodes in a subnet no longer among them drift"),
    "spec.securityGroupSelectorTerms": ("security groups", "every node drifts whose groups differ from them"),
    "spec.amiSelectorTerms": ("AMIs", "nodes on an AMI no longer among them drift"),
    "spec.capacityReservationSelectorTerms": ("capacity reservations",
                                              "nodes in a reservation no longer among them drift"),
}
"""What each `resolved-selector` field resolves to, and which nodes drift when that changes
(`pkg/cloudprovider/drift.go`: a node's subnet, AMI or reservation must be among the resolved ones; its security
groups must equal them)."""

_NODE_POOL: dict[str, DriftClass] = {
    "spec.template.metadata.labels": HASHED,
    "spec.template.metadata.annotations": HASHED,
    "spec.template.spec.taints": HASHED,
    "spec.template.spec.startupTaints": HASHED,
    "spec.template.spec.requirements": REQUIREMENTS,
    "spec.template.spec.nodeClassRef": HASHED,
    "spec.template.spec.terminationGracePeriod": HASHED,
    "spec.template.spec.expireAfter": HASHED,
    "spec.disruption.budgets": NO_DRIFT,
    "spec.disruption.consolidateAfter": NO_DRIFT,
    "spec.disruption.consolidationPolicy": NO_DRIFT,
    "spec.limits": NO_DRIFT,
    "spec.weight": NO_DRIFT,
    "spec.replicas": NO_DRIFT,
}

_NODE_CLASS_1_12: dict[str, DriftClass] = {
    "spec.subnetSelectorTerms": RESOLVED,
    "spec.securityGroupSelectorTerms": RESOLVED,
    "spec.capacityReservationSelectorTerms": RESOLVED,
    "spec.amiSelectorTerms": RESOLVED,
    # Tagged `hash:"ignore"`, but the family it resolves to (the alias's when unset) is hashed in its place.
    "spec.amiFamily": HASHED,
    "spec.placementGroupSelector": HASHED,
    "spec.associatePublicIPAddress": HASHED,
    "spec.ipPrefixCount": NO_DRIFT,
    "spec.userData": HASHED,
    "spec.role": HASHED,
    "spec.instanceProfile": HASHED,
    "spec.tags": HASHED,
    "spec.kubelet": HASHED,
    "spec.blockDeviceMappings": HASHED,
    "spec.instanceStorePolicy": HASHED,
    "spec.networkInterfaces": HASHED,
    "spec.detailedMonitoring": HASHED,
    "spec.metadataOptions": HASHED,
    "spec.context": HASHED,
}
_NODE_CLASS_1_13: dict[str, DriftClass] = {
    **_NODE_CLASS_1_12,
    "spec.connectionTracking": HASHED,
    "spec.cpuOptions": HASHED,
}


def _sources(core: str, provider: str, blobs: tuple[str, str, str, str, str]) -> tuple[SourceFile, ...]:
    nodepool, nodeclaim, drift, ec2nodeclass, provider_drift = blobs
    return (
        SourceFile(CORE, core, "pkg/apis/v1/nodepool.go", nodepool),
        SourceFile(CORE, core, "pkg/apis/v1/nodeclaim.go", nodeclaim),
        SourceFile(CORE, core, "pkg/controllers/nodeclaim/disruption/drift.go", drift),
        SourceFile(PROVIDER, provider, "pkg/apis/v1/ec2nodeclass.go", ec2nodeclass),
        SourceFile(PROVIDER, provider, "pkg/cloudprovider/drift.go", provider_drift),
    )


# Each provider release builds with the core release its go.mod names (1.12.2: v1.12.1; 1.13.1: v1.13.0;
# 1.14.1: the v1.14.1 commit, as a pseudo-version).
DRIFT_RULES: dict[str, DriftRules] = {r.release: r for r in (
    DriftRules("1.12.2", _NODE_POOL, _NODE_CLASS_1_12, _sources("v1.12.1", "v1.12.2", (
        "7ae83c0cd0ec57c572109b456b48bcbf53baf253", "c2df9678f9dc26b0f072eabff96ae7caa637a817",
        "a89446c6f230fc366bfcb52e58179bab01d6ca30", "56ed6e4a6a27d6c3787ca0746479c5229adfb356",
        "6ad89f92e9da8ba2cee319c32ffd166f8ed68354")), "v3", "v5"),
    DriftRules("1.13.1", _NODE_POOL, _NODE_CLASS_1_13, _sources("v1.13.0", "v1.13.1", (
        "d47a918268f2087a966d54f08b718617bcae5c6d", "805d7d948b19a8544768729fc4d14760f5204fce",
        "2ed459c839b99f2e506280f68b579ac08db2719c", "46e1bff817965788c193ebe942143f55322dcc17",
        "e8257a1589a304467fe6edcf292320afdbcf9b93")), "v3", "v5"),
    DriftRules("1.14.1", _NODE_POOL, _NODE_CLASS_1_13, _sources("v1.14.1", "v1.14.1", (
        "b0f88ad09c0f45df351ea184cc94e591684d0772", "805d7d948b19a8544768729fc4d14760f5204fce",
        "2ed459c839b99f2e506280f68b579ac08db2719c", "46e1bff817965788c193ebe942143f55322dcc17",
        "e8257a1589a304467fe6edcf292320afdbcf9b93")), "v3", "v5"),
)}
"""Per supported Karpenter release (`versions.KARPENTER_RELEASES`), its drift rules."""


def field_class(table: Mapping[str, DriftClass], path: tuple[str | int, ...]) -> DriftClass | None:
    """The class of the table entry at, or above, `path` (a property path of the object's manifest); None
    when the table has none (a field the release does not know)."""
    for end in range(len(path), 0, -1):
        if all(isinstance(p, str) for p in path[:end]):
            found = table.get(".".join(str(p) for p in path[:end]))
            if found is not None:
                return found
    return None
