"""Pure rendering: validated config -> the EC2NodeClass and NodePool manifests, exactly as the apiserver gets them.

Unset optional fields are left out (the apiserver applies the CRD defaults), quantities and budget node counts
are strings, and requirements list the shortcuts first, then the raw `requirements`.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Iterable, Iterator, Mapping
from datetime import date
from typing import Any

from eks_karpenter.catalogue.match import Requirement
from eks_karpenter.labels import (
    ARCH,
    AWS_GROUP,
    CAPACITY_TYPE,
    CLUSTER_TAG_PREFIX,
    INSTANCE_CATEGORY,
    INSTANCE_CPU,
    INSTANCE_FAMILY,
    INSTANCE_GENERATION,
    INSTANCE_SIZE,
    INSTANCE_TYPE,
    OS,
    RESTRICTED_TAG_KEYS,
    ZONE,
)
from eks_karpenter.platform.nodepool.config import AmiFamily, Disruption, NodeClassConfig, NodePoolConfig
from eks_karpenter.platform.nodepool.windows import render_windows
from eks_karpenter.tags import discovery_tags

NODE_CLASS_API, NODE_CLASS_KIND = "karpenter.k8s.aws/v1", "EC2NodeClass"
NODE_POOL_API, NODE_POOL_KIND = "karpenter.sh/v1", "NodePool"

SHORTCUT_KEYS: dict[str, str] = {
    "capacityTypes": CAPACITY_TYPE, "arch": ARCH, "os": OS, "instanceCategories": INSTANCE_CATEGORY,
    "minGeneration": INSTANCE_GENERATION, "instanceFamilies": INSTANCE_FAMILY, "instanceSizes": INSTANCE_SIZE,
    "excludeInstanceSizes": INSTANCE_SIZE,
    "instanceTypes": INSTANCE_TYPE, "zones": ZONE, "minCpu": INSTANCE_CPU, "maxCpu": INSTANCE_CPU,
}
"""Shortcut key (as spelled in the stack file) -> the requirement key it produces."""


METAL = "metal"
"""The friendly size that means every bare-metal size (see `expand_sizes`)."""


@functools.cache
def metal_sizes() -> tuple[str, ...]:
    """Every bare-metal `instance-size` value in the catalogue: `metal` and the sized ones (`metal-24xl`, ...)."""
    from eks_karpenter.catalogue import load_catalogue

    sizes = load_catalogue().values(INSTANCE_SIZE)
    return (METAL, *(s for s in sizes if s.startswith(f"{METAL}-")))


def expand_sizes(sizes: Iterable[str]) -> tuple[str, ...]:
    """Friendly sizes as Karpenter's size label needs them: `metal` stands for every bare-metal size.

    Karpenter labels most bare-metal types `metal`, but the newer ones `metal-24xl`, `metal-48xl`, ...; a user who
    writes `metal` means all of them. The expansion lists the sizes known to the catalogue (Karpenter v1.14.1
    data), in place of `metal`, without duplicates; other sizes are kept as written.
    """
    out: list[str] = []
    for size in sizes:
        for value in (metal_sizes() if size == METAL else (size,)):
            if value not in out:
                out.append(value)
    return tuple(out)


PINNING_KEYS = (INSTANCE_FAMILY, INSTANCE_TYPE)
"""Requirement keys that, with operator `In`, pin the instance choice: the instanceCategories and minGeneration
defaults are then left out."""


def _pinned(cfg: NodePoolConfig) -> bool:
    """Whether the user chose instance families or types, which makes the category/generation defaults moot."""
    raw = any(r.key in PINNING_KEYS and r.operator == "In" for r in cfg.requirements)
    return bool(cfg.instance_families or cfg.instance_types) or raw


def _shortcuts(cfg: NodePoolConfig) -> Iterator[Requirement]:
    pinned = _pinned(cfg)
    yield Requirement(CAPACITY_TYPE, "In", tuple(cfg.capacity_types), source="capacityTypes")
    yield Requirement(ARCH, "In", tuple(cfg.arch), source="arch")
    yield Requirement(OS, "In", tuple(cfg.os), source="os")
    # A default category/generation next to explicit families would silently exclude, say, t3 or m1 types.
    if cfg.instance_categories and (cfg.is_set("instance_categories") or not pinned):
        yield Requirement(INSTANCE_CATEGORY, "In", tuple(cfg.instance_categories), source="instanceCategories")
    if cfg.min_generation is not None and (cfg.is_set("min_generation") or not pinned):
        yield Requirement(INSTANCE_GENERATION, "Gt", (str(cfg.min_generation - 1),), source="minGeneration")
    if cfg.instance_families:
        yield Requirement(INSTANCE_FAMILY, "In", tuple(cfg.instance_families), source="instanceFamilies")
    if cfg.instance_sizes:
        yield Requirement(INSTANCE_SIZE, "In", expand_sizes(cfg.instance_sizes), source="instanceSizes")
    if cfg.exclude_instance_sizes:
        yield Requirement(INSTANCE_SIZE, "NotIn", expand_sizes(cfg.exclude_instance_sizes),
                          source="excludeInstanceSizes")
    if cfg.instance_types:
        yield Requirement(INSTANCE_TYPE, "In", tuple(cfg.instance_types), source="instanceTypes")
    if cfg.zones:
        yield Requirement(ZONE, "In", tuple(cfg.zones), source="zones")
    # Gt/Lt rather than Gte/Lte: every Karpenter 1.x release understands them.
    if cfg.min_cpu is not None:
        yield Requirement(INSTANCE_CPU, "Gt", (str(cfg.min_cpu - 1),), source="minCpu")
    if cfg.max_cpu is not None:
        yield Requirement(INSTANCE_CPU, "Lt", (str(cfg.max_cpu + 1),), source="maxCpu")


# Requirements per live pool (config models are frozen): each pool's rules, warnings, admission and manifest all
# read them, eight renderings per pool otherwise. Keyed by identity, since models holding lists do not hash; the
# weak reference drops the entry with the pool, before its id can be reused.
_RENDERED: dict[int, tuple[weakref.ref[NodePoolConfig], tuple[Requirement, ...]]] = {}


def pool_requirements(cfg: NodePoolConfig) -> list[Requirement]:
    """The pool's requirements: shortcuts not overridden by a raw requirement on the same key, then the raw ones."""
    key = id(cfg)
    hit = _RENDERED.get(key)
    if hit is not None and hit[0]() is cfg:
        return list(hit[1])
    raw_keys = {r.key for r in cfg.requirements}
    out = [r for r in _shortcuts(cfg) if r.key not in raw_keys]
    for i, r in enumerate(cfg.requirements):
        out.append(Requirement(r.key, r.operator, tuple(r.values or ()), r.min_values, source=i))
    _RENDERED[key] = (weakref.ref(cfg, lambda _: _RENDERED.pop(key, None)), tuple(out))
    return out


def _taints(taints: list[Any]) -> list[dict[str, Any]]:
    return [t.dump() for t in taints]


def render_node_pool(cfg: NodePoolConfig) -> dict[str, Any]:
    """The NodePool manifest for one `eks-karpenter:nodePools` entry."""
    template_spec: dict[str, Any] = {
        "nodeClassRef": {"group": AWS_GROUP, "kind": NODE_CLASS_KIND, "name": cfg.node_class},
        "requirements": [r.manifest() for r in pool_requirements(cfg)],
    }
    if cfg.taints:
        template_spec["taints"] = _taints(cfg.taints)
    if cfg.startup_taints:
        template_spec["startupTaints"] = _taints(cfg.startup_taints)
    template_spec["expireAfter"] = cfg.expire_after
    if cfg.termination_grace_period is not None:
        template_spec["terminationGracePeriod"] = cfg.termination_grace_period

    template: dict[str, Any] = {}
    metadata = {k: v for k, v in (("labels", dict(cfg.labels)), ("annotations", dict(cfg.annotations))) if v}
    if metadata:
        template["metadata"] = metadata
    template["spec"] = template_spec

    spec: dict[str, Any] = {"template": template, "disruption": disruption_spec(cfg.disruption)}
    if cfg.limits:
        spec["limits"] = dict(cfg.limits)
    if cfg.weight is not None:
        spec["weight"] = cfg.weight
    return {"apiVersion": NODE_POOL_API, "kind": NODE_POOL_KIND, "metadata": {"name": cfg.name}, "spec": spec}


def disruption_spec(disruption: Disruption, today: date | None = None) -> dict[str, Any]:
    """`spec.disruption`: the config's budgets, then its local-time windows as UTC budgets (`windows.py`)."""
    spec = disruption.model_dump(by_alias=True, exclude_none=True, mode="json", exclude={"time_zone", "windows"})
    rendered = render_windows(disruption.windows, disruption.time_zone, today)
    if rendered:
        spec["budgets"] = [*spec["budgets"], *(w.budget for w in rendered)]
    return spec


def _gp3_root(device: str, size: str, root: bool = True) -> dict[str, Any]:
    ebs = {"volumeSize": size, "volumeType": "gp3", "encrypted": True, "deleteOnTermination": True}
    out: dict[str, Any] = {"deviceName": device}
    if root:
        out["rootVolume"] = True
    out["ebs"] = ebs
    return out


def default_block_devices(family: AmiFamily | None) -> list[dict[str, Any]] | None:
    """Encrypted gp3 disks for the family; None (Karpenter's choice) when the family's layout is unknown."""
    if family in ("AL2", "AL2023"):
        return [_gp3_root("/dev/xvda", "50Gi")]
    if family == "Bottlerocket":
        # Bottlerocket keeps the OS on xvda and containers/kubelet on xvdb.
        return [_gp3_root("/dev/xvda", "4Gi", root=False), _gp3_root("/dev/xvdb", "50Gi")]
    if family and family.startswith("Windows"):
        return [_gp3_root("/dev/sda1", "50Gi")]
    return None


def _restricted_tag(key: str) -> bool:
    # The EC2NodeClass CRD refuses these; the stack-wide tags are merged in here, so check the merged map.
    return key == "" or key.startswith(CLUSTER_TAG_PREFIX) or key in RESTRICTED_TAG_KEYS


def render_node_class(cfg: NodeClassConfig, cluster_name: str, node_role_name: str,
                      tags: Mapping[str, str]) -> dict[str, Any]:
    """The EC2NodeClass manifest for one `eks-karpenter:nodeClasses` entry.

    `tags` (the stack-wide tags) go on every instance, under the class's own `tags`. Selector terms left unset
    select the resources tagged `karpenter.sh/discovery: <cluster_name>`; with neither `role` nor
    `instanceProfile`, nodes get `node_role_name`.
    """
    discovery = [{"tags": discovery_tags(cluster_name)}]
    dumped = cfg.dump()
    spec: dict[str, Any] = {}
    if cfg.ami_family:
        spec["amiFamily"] = cfg.ami_family
    spec["amiSelectorTerms"] = dumped["amiSelectorTerms"]
    spec["subnetSelectorTerms"] = dumped.get("subnetSelectorTerms", discovery)
    spec["securityGroupSelectorTerms"] = dumped.get("securityGroupSelectorTerms", discovery)
    # Both are passed through when both are set (the rules refuse that), so the manifest says what the config says.
    if cfg.role or not cfg.instance_profile:
        spec["role"] = cfg.role or node_role_name
    if cfg.instance_profile:
        spec["instanceProfile"] = cfg.instance_profile

    merged = {**tags, **cfg.tags}
    bad = sorted(k for k in merged if _restricted_tag(k))
    if bad:
        raise ValueError(f"tags {bad} are restricted on an EC2NodeClass: Karpenter sets them itself")
    if merged:
        spec["tags"] = merged
    spec["metadataOptions"] = dumped["metadataOptions"]
    devices = dumped.get("blockDeviceMappings", default_block_devices(cfg.family))
    if devices is not None:
        spec["blockDeviceMappings"] = devices

    passthrough = ("userData", "detailedMonitoring", "kubelet", "associatePublicIPAddress", "instanceStorePolicy",
                   "capacityReservationSelectorTerms", "context", "networkInterfaces", "placementGroupSelector",
                   "connectionTracking", "cpuOptions", "ipPrefixCount")
    spec.update({key: dumped[key] for key in passthrough if key in dumped})
    return {"apiVersion": NODE_CLASS_API, "kind": NODE_CLASS_KIND, "metadata": {"name": cfg.name}, "spec": spec}
