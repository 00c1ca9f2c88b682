"""NodePools as the what-if scheduler sees them: a rendered NodePool and its EC2NodeClass reduced to labels,
requirements, taints, limits and the admitted instance types with a price, cheapest first."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from eks_karpenter.catalogue import Catalogue, InstanceType, Requirement, admitted_for
from eks_karpenter.labels import CAPACITY_TYPE, NODEPOOL_LABEL, REGION, ZONE
from eks_karpenter.platform.nodepool.manifests import render_node_class, render_node_pool
from eks_karpenter.platform.stack import StackConfig
from eks_karpenter.quantities import cpu_millis, memory_bytes
from eks_karpenter.tools.simulate.workload import quantity


@dataclass(frozen=True)
class Taint:
    key: str
    value: str | None
    effect: str

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value is not None else f"{self.key}:{self.effect}"


@dataclass(frozen=True)
class Pool:
    """A NodePool as the scheduler sees it."""

    name: str
    weight: int
    labels: Mapping[str, str]
    """Template labels, plus `karpenter.sh/nodepool`."""
    requirements: tuple[Requirement, ...]
    taints: tuple[Taint, ...]
    types: tuple[InstanceType, ...]
    """Admitted types with a price, cheapest first (ties: by name)."""
    unpriced: int
    """Admitted types without a price in the catalogue (never chosen)."""
    limits: Mapping[str, int]
    """`cpu` in millicores, `memory` in bytes, `nodes` and extended resources as counts."""
    capacity_types: tuple[str, ...]
    offerings: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Values of keys the pool does not pin but the stack provides (its zones, its region)."""
    limits_text: Mapping[str, str] = field(default_factory=dict)
    """`limits` as written in the manifest."""

    @property
    def spot(self) -> bool:
        return "spot" in self.capacity_types


def _limit_value(key: str, text: str) -> int:
    if key == "cpu":
        return cpu_millis(text)
    if key == "memory":
        return memory_bytes(text)
    return math.floor(quantity(text))


def pool_from_manifest(manifest: Mapping[str, object], node_class: Mapping[str, object] | None,
                       catalogue: Catalogue, offerings: Mapping[str, frozenset[str]] | None = None) -> Pool:
    """A rendered NodePool (and its EC2NodeClass) as a `Pool`."""
    spec = manifest["spec"]
    assert isinstance(spec, Mapping)
    template = spec["template"]
    tspec = template["spec"]
    name = str(manifest["metadata"]["name"])  # type: ignore[index]
    adm = admitted_for(manifest, node_class, catalogue)
    priced = sorted(adm.priced, key=lambda t: (t.on_demand_hourly, t.name))
    reqs = tuple(Requirement.from_manifest(r) for r in tspec.get("requirements") or ())
    capacity = next((r.values for r in reqs if r.key == CAPACITY_TYPE and r.operator == "In"),
                    ("spot", "on-demand"))
    labels = {**(template.get("metadata") or {}).get("labels", {}), NODEPOOL_LABEL: name}
    taints = tuple(Taint(t["key"], t.get("value"), t["effect"]) for t in tspec.get("taints") or ())
    written = {str(k): str(v) for k, v in (spec.get("limits") or {}).items()}
    limits = {k: _limit_value(k, v) for k, v in written.items()}
    return Pool(name, int(spec.get("weight") or 0), labels, reqs, taints, tuple(priced),
                len(adm.types) - len(priced), limits, tuple(capacity), dict(offerings or {}), written)


def pools_for_stack(cfg: StackConfig, catalogue: Catalogue) -> list[Pool]:
    """Every NodePool of a validated stack config, rendered as `pulumi up` would render it."""
    classes = {nc.name: render_node_class(nc, cfg.cluster.name, "node-role", {}) for nc in cfg.node_classes}
    offerings = {ZONE: frozenset(cfg.network.zones), REGION: frozenset({cfg.region})}
    return [pool_from_manifest(render_node_pool(p), classes.get(p.node_class), catalogue, offerings)
            for p in cfg.node_pools]
