"""What each NodePool can launch: its rendered requirements evaluated against the instance-type catalogue.

Errors: a pool that admits no instance type (it plans cleanly, then never launches a node), a `minValues`
the admitted types cannot meet (Karpenter then refuses every launch), and limits below the smallest admitted
instance (no node fits within them). Warnings: spot with too few types to choose from, limits smaller than the
cheapest node the pool could launch, and no cpu limit.

Pure and cached per distinct (requirements, AMI family): a thousand pools that share a shape cost one evaluation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from eks_karpenter.catalogue import Admission, Requirement, admitted
from eks_karpenter.catalogue.match import allowed_values
from eks_karpenter.config.errors import Issue, KeyPath
from eks_karpenter.config.model import aliases
from eks_karpenter.labels import CAPACITY_TYPE, INSTANCE_MEMORY
from eks_karpenter.platform.nodepool.config import NodeClassConfig, NodePoolConfig
from eks_karpenter.platform.nodepool.manifests import pool_requirements
from eks_karpenter.quantities import quantity_value

MIN_SPOT_TYPES = 15
"""Fewer admitted types than this leaves spot too little to choose from (AWS advises diversifying widely)."""

_CAPACITY_TYPES = ("spot", "on-demand", "reserved")


def _family(cls: NodeClassConfig | None) -> str | None:
    family = cls.family if cls else None
    return family.lower() if family else None


def _admitted(requirements: tuple[Requirement, ...], ami_family: str | None) -> Admission:
    return admitted(requirements, ami_family)  # cached by the catalogue per distinct requirement set


def pool_admission(pool: NodePoolConfig, cls: NodeClassConfig | None,
                   reqs: list[Requirement] | None = None) -> Admission:
    """The instance types `pool` admits on node class `cls` (cached per distinct requirement set); `reqs` are its
    rendered requirements when the caller has them already."""
    reqs = pool_requirements(pool) if reqs is None else reqs
    return _admitted(tuple(reqs), _family(cls))


def _where(at: KeyPath, req: Requirement) -> KeyPath:
    return at + (req.source,) if isinstance(req.source, str) else at + ("requirements", req.source)


FIELD_BY_ALIAS = {alias: name for name, alias in aliases(NodePoolConfig).items()}
"""NodePool field name by its stack-file key (the `source` of a shortcut requirement)."""


def _written(pool: NodePoolConfig, req: Requirement) -> object:
    """What the user wrote for the key that produced `req` (a shortcut's value, or the raw requirement's values)."""
    if isinstance(req.source, str):
        return getattr(pool, FIELD_BY_ALIAS[req.source])
    return list(req.values) if req.values else req.operator


def _show(req: Requirement) -> str:
    return f"{req.key} {req.operator} [{', '.join(req.values)}]" if req.values else f"{req.key} {req.operator}"


def _emptying(reqs: list[Requirement], family: str | None) -> Requirement | None:
    """The first requirement after which nothing is admitted (only computed for pools that admit nothing)."""
    so_far: list[Requirement] = []
    for r in reqs:
        so_far.append(r)
        if not _admitted(tuple(so_far), family).types:
            return r
    return None


def admission_issues(pool: NodePoolConfig, cls: NodeClassConfig | None, at: KeyPath) -> list[Issue]:
    """Errors for a pool that can launch nothing: no admitted type, or an unmet `minValues`."""
    reqs = pool_requirements(pool)
    adm = pool_admission(pool, cls, reqs)
    source = f"instance types of Karpenter v{adm.catalogue.karpenter_version}"
    if not adm.types:
        culprit = _emptying(reqs, _family(cls))
        if culprit is None:  # the AMI family alone excludes everything left
            return [Issue(at, f"admits no instance type ({source}) on node class {pool.node_class!r}: the pool "
                          "would never launch a node", pool.name)]
        before = [_show(r) for r in reqs[:reqs.index(culprit)] if r.key != CAPACITY_TYPE]
        context = f" together with {'; '.join(before)}" if before else ""
        return [Issue(_where(at, culprit), f"leaves no instance type ({source}){context}: pool {pool.name!r} would "
                      "never launch a node", _written(pool, culprit))]
    issues = _limit_issues(pool, adm, at)
    for requirement, found in adm.min_values_unmet:
        req = next(r for r in reqs if r == requirement)  # the one written in the stack file, with its source
        issues.append(Issue(_where(at, req) + ("minValues",), f"needs {requirement.min_values} distinct values of "
                            f"{requirement.key} among the admitted types, which have {found} ({source}): Karpenter "
                            "would launch no node", requirement.min_values))
    return issues


def _limit_issues(pool: NodePoolConfig, adm: Admission, at: KeyPath) -> list[Issue]:
    """A cpu or memory limit below the smallest admitted instance: Karpenter launches no node that would take the
    pool over its limits, so the pool could never launch one. A zero limit is left alone (it pauses a pool)."""
    limits = pool.limits
    if "cpu" not in limits and "memory" not in limits:
        return []
    vcpus, memory_mib = adm.smallest
    issues = []
    for resource, least, shown in (("cpu", vcpus, f"{vcpus} vCPUs"), ("memory", memory_mib * 2**20, f"{memory_mib}Mi")):
        value = limits.get(resource)
        if value is not None and 0 < quantity_value(str(value)) < least:
            issues.append(Issue(at + ("limits", resource), f"below the smallest instance the pool admits ({shown}): "
                                f"Karpenter never launches a node that would take the pool over its limits, so pool "
                                f"{pool.name!r} could never launch one; raise the limit or admit smaller sizes",
                                value))
    return issues


def admission_warnings(pools: Sequence[NodePoolConfig], classes: Sequence[NodeClassConfig]) -> list[str]:
    """Spot diversity and limits, one line per finding, for pools whose node class exists."""
    by_name = {c.name: c for c in classes}
    out: list[str] = []
    for pool in pools:
        reqs = pool_requirements(pool)
        capacity = allowed_values(reqs, CAPACITY_TYPE, _CAPACITY_TYPES)
        out += pool_warnings(pool.name, capacity, pool_admission(pool, by_name.get(pool.node_class), reqs),
                             pool.limits)
    return out


def pool_warnings(name: str, capacity_types: Sequence[str], adm: Admission, limits: Mapping[str, str]) -> list[str]:
    """What is wrong with what a pool can launch, short of an error (shared with `cost`, which reads manifests)."""
    where = f"nodePools[{name}]"
    if not adm.types:
        return []
    out: list[str] = []
    if "spot" in capacity_types and len(adm.types) < MIN_SPOT_TYPES:
        out.append(f"{where}: spot from only {len(adm.types)} instance types ({_names(adm)}): admit at least "
                   f"{MIN_SPOT_TYPES} (more families, sizes or generations) so spot has capacity pools to choose "
                   "from and interruptions stay rare")
    cpu = limits.get("cpu")
    if limits and cpu is None:
        out.append(f"{where}: no cpu limit: nothing caps how many vCPUs (and how much spend) the pool can add")
    cheapest = adm.cheapest() or adm.types[0]
    memory = limits.get("memory")
    memory_mib = int(cheapest.labels[INSTANCE_MEMORY])
    too_small = []
    if cpu is not None and quantity_value(str(cpu)) < cheapest.vcpus:
        too_small.append(f"cpu {cpu} < {cheapest.vcpus} vCPUs")
    if memory is not None and quantity_value(str(memory)) < memory_mib * 1024 * 1024:
        too_small.append(f"memory {memory} < {memory_mib}Mi")
    if too_small:
        out.append(f"{where}: limits are smaller than the cheapest node it admits, {cheapest.name} "
                   f"({', '.join(too_small)}): Karpenter cannot launch it within the limits")
    return out


def _names(adm: Admission, most: int = 5) -> str:
    names = [t.name for t in adm.types]
    return ", ".join(names[:most]) + (f", ... ({len(names) - most} more)" if len(names) > most else "")
