"""The what-if scheduler: place a workload's pods on a stack's NodePools as Karpenter would, and on a fixed node group.

Pure: rendered NodePool manifests and the catalogue in, node counts and prices out.

**Which pools take a pod**: see compatibility.py (pools themselves: pools.py).

**Which nodes** (Karpenter's provisioning loop, first-fit decreasing): pods are taken largest first (CPU, then
memory). Each pod goes to the first in-flight node that can still take it, else opens a node in the first pool that
accepts it. A node keeps accepting pods while at least one of its candidate types (the pool's admitted, priced types,
narrowed by the pods' instance selectors) holds them all with allocatable CPU, memory and pods (after DaemonSet
requests), and the pool's `limits` allow that type; it launches as the cheapest such type. Limits (`cpu`, `memory`,
`nodes`, extended resources) are counted on the launched capacity (vCPUs, instance memory, one per node).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from eks_karpenter.catalogue import InstanceType
from eks_karpenter.labels import ARCH, CAPACITY_TYPE, INSTANCE_MEMORY
from eks_karpenter.tools.simulate.fit import (
    MIB,
    Check,
    Overhead,
    Pod,
    Refusal,
    eligible,
    fits_count,
    fitting,
    largest_first,
    size_refusal,
)
from eks_karpenter.tools.simulate.pools import Pool
from eks_karpenter.tools.simulate.workload import Workload

# --- placement ---------------------------------------------------------------------------------------------------

def capacity(t: InstanceType | None, key: str) -> int:
    """What a node of type `t` counts against a pool limit `key`."""
    if t is None:
        return 0
    if key == "cpu":
        return t.vcpus * 1000
    if key == "memory":
        return int(t.labels[INSTANCE_MEMORY]) * MIB
    if key == "nodes":
        return 1
    return t.extended.get(key, 0)


@dataclass
class _Node:
    pool: Pool
    candidates: tuple[InstanceType, ...]
    """Types that hold the node's pods, cheapest first; pruned as pods arrive (usage only grows, so a type that
    cannot hold them now never will)."""
    cpu: int
    memory: int
    pods: int
    type: InstanceType | None = None
    placed: Counter[str] = field(default_factory=Counter)
    bound: tuple[int, int, int] = (0, 0, 0)
    """Largest allocatable cpu, memory and pods among the candidates: a quick no for full nodes."""
    capacity_types: tuple[str, ...] = ()
    """Capacity types the node may still launch as: the pool's, narrowed by pods selecting one."""


@dataclass
class _PoolState:
    pool: Pool
    used: dict[str, int]
    caps: dict[int, tuple[int, ...]] = field(default_factory=dict)

    def _cap(self, t: InstanceType | None) -> tuple[int, ...]:
        if t is None:
            return tuple(0 for _ in self.pool.limits)
        got = self.caps.get(id(t))
        if got is None:
            got = self.caps[id(t)] = tuple(capacity(t, k) for k in self.pool.limits)
        return got

    def allows(self, old: InstanceType | None, new: InstanceType) -> bool:
        if not self.pool.limits:
            return True
        before, after = self._cap(old), self._cap(new)
        return all(self.used.get(k, 0) - b + a <= limit
                   for (k, limit), b, a in zip(self.pool.limits.items(), before, after, strict=True))

    def swap(self, old: InstanceType | None, new: InstanceType) -> None:
        for k, b, a in zip(self.pool.limits, self._cap(old), self._cap(new), strict=True):
            self.used[k] = self.used.get(k, 0) - b + a


def _bound(types: tuple[InstanceType, ...]) -> tuple[int, int, int]:
    if not types:
        return (0, 0, 0)
    return (max(t.cpu_millis for t in types), max(t.memory_mib for t in types) * MIB, max(t.pods for t in types))


def _add(node: _Node, state: _PoolState, types: tuple[InstanceType, ...], pod: Pod, wanted: int) -> int:
    """Put up to `wanted` pods on the node; returns how many it took (its type becomes the cheapest that holds
    them within the pool's limits)."""
    cpu_max, mem_max, pods_max = node.bound
    if node.cpu + pod.cpu > cpu_max or node.memory + pod.memory > mem_max or node.pods + 1 > pods_max:
        return 0
    if types is node.pool.types:
        cand = node.candidates
    else:
        keep = {id(t) for t in types}
        cand = tuple(t for t in node.candidates if id(t) in keep)
    best = 0
    for t in cand:
        k = fits_count(t, node.cpu, node.memory, node.pods, pod)
        if k > best and state.allows(node.type, t):
            best = k
            if best >= wanted:
                break
    take = min(best, wanted)
    if take <= 0:
        return 0
    cpu, memory, pods = node.cpu + take * pod.cpu, node.memory + take * pod.memory, node.pods + take
    kept = tuple(t for t in cand if t.cpu_millis >= cpu and t.memory_mib * MIB >= memory and t.pods >= pods
                 and state.allows(node.type, t))
    new = kept[0]
    state.swap(node.type, new)
    node.candidates, node.cpu, node.memory, node.pods, node.type = kept, cpu, memory, pods, new
    node.bound = _bound(kept)
    node.placed[pod.deployment] += take
    return take


@dataclass(frozen=True)
class NodeLine:
    """Nodes of one type in one pool."""

    type: InstanceType
    count: int
    pods: int
    capacity_types: tuple[str, ...] = ("on-demand",)
    """What these nodes may launch as (the pool's capacity types, narrowed by their pods' selectors)."""

    @property
    def spot(self) -> bool:
        return "spot" in self.capacity_types

    @property
    def hourly(self) -> float:
        return (self.type.on_demand_hourly or 0.0) * self.count


@dataclass(frozen=True)
class PoolResult:
    pool: Pool
    nodes: tuple[NodeLine, ...]
    placed: Mapping[str, int]
    """Pods per deployment."""

    @property
    def node_count(self) -> int:
        return sum(n.count for n in self.nodes)

    @property
    def pods(self) -> int:
        return sum(self.placed.values())

    @property
    def hourly(self) -> float:
        return sum(n.hourly for n in self.nodes)


@dataclass(frozen=True)
class Unschedulable:
    """Pods of one deployment that no pool (or the fixed group) can take, and why."""

    deployment: str
    pods: int
    reason: str
    pools: Mapping[str, str] = field(default_factory=dict)
    """Per pool: why it refused."""


@dataclass(frozen=True)
class KarpenterResult:
    pools: tuple[PoolResult, ...]
    unschedulable: tuple[Unschedulable, ...]

    @property
    def node_count(self) -> int:
        return sum(p.node_count for p in self.pools)

    @property
    def hourly(self) -> float:
        return sum(p.hourly for p in self.pools)

    @property
    def pods(self) -> int:
        return sum(p.pods for p in self.pools)


_HEADLINES = {
    "taint": "no pool tolerates its taints", "label": "no pool has the labels it selects",
    "arch": "no pool admits its architecture", "type": "no admitted type has the instance labels it selects",
    "size": "pod larger than any admitted type", "limit": "pool limit reached",
}


def _reason(refusals: Mapping[str, Refusal]) -> str:
    if not refusals:
        return "no NodePool in the stack"
    kinds = {r.kind for r in refusals.values()}
    details = sorted({r.detail for r in refusals.values()})
    if kinds == {"taint"}:
        return "no pool tolerates " + " / ".join(d.removesuffix(" not tolerated") for d in details)
    if kinds == {"label"} and len(details) == 1 and details[0].startswith("no label "):
        return "no pool has label " + details[0].removeprefix("no label ")
    if len(kinds) == 1:
        return _HEADLINES[kinds.pop()]
    # The pool that came closest decides: a limit beats a size beats a selector beats a taint.
    for kind in ("limit", "size", "type", "arch", "label", "taint"):
        if kind in kinds:
            return _HEADLINES[kind] if kind in ("limit", "size") else "no pool accepts it"
    return "no pool accepts it"


def _limit_detail(pool: Pool, state: _PoolState) -> str:
    shown = []
    for k, limit in sorted(pool.limits.items()):
        used = state.used.get(k, 0)
        if k == "cpu":
            shown.append(f"cpu {used / 1000:g}/{limit / 1000:g}")
        elif k == "memory":
            shown.append(f"memory {used / (1 << 30):g}/{limit / (1 << 30):g}Gi")
        else:
            shown.append(f"{k} {used}/{limit}")
    return "pool limit reached (" + ", ".join(shown) + ")"


def order_pools(pools: Iterable[Pool]) -> list[Pool]:
    """Karpenter's order: higher weight first, then by name."""
    return sorted(pools, key=lambda p: (-p.weight, p.name))


def schedule(pools: Sequence[Pool], workload: Workload, label_keys: frozenset[str]) -> KarpenterResult:
    """Place every pod of the workload on the pools (see the module docstring for the rules)."""
    ordered = order_pools(pools)
    overhead = Overhead.of(workload)
    states = {p.name: _PoolState(p, {}) for p in ordered}
    bounds = {p.name: _bound(p.types) for p in ordered}
    candidates = _Candidates(ordered, overhead, label_keys)
    nodes: list[_Node] = []
    unschedulable: list[Unschedulable] = []
    pods = sorted((Pod.of(d) for d in workload.deployments if d.replicas),
                  key=lambda p: (-p.cpu, -p.memory, p.deployment))
    for pod in pods:
        choices, refusals = candidates.of(pod)
        wants = dict(pod.selector).get(CAPACITY_TYPE)
        left = _fill_open_nodes(nodes, states, {p.name: t for p, t in choices}, pod, wants)
        while left:
            for pool, types in choices:
                node = _Node(pool, pool.types, overhead.cpu, overhead.memory, overhead.pods,
                             bound=bounds[pool.name],
                             capacity_types=(wants,) if wants is not None else pool.capacity_types)
                took = _add(node, states[pool.name], types, pod, left)
                if took:
                    nodes.append(node)
                    left -= took
                    break
                refusals[pool.name] = Refusal("limit", _limit_detail(pool, states[pool.name]))
            else:
                unschedulable.append(Unschedulable(pod.deployment, left, _reason(refusals),
                                                   {k: v.detail for k, v in refusals.items()}))
                break
    results = tuple(_pool_result(pool, [n for n in nodes if n.pool is pool], overhead) for pool in ordered)
    return KarpenterResult(results, tuple(unschedulable))


class _Candidates:
    """The pools a pod may go to, with the types each can give it; eligibility is cached per (pool, selector,
    tolerations) and each type list's largest-first order per list."""

    def __init__(self, ordered: Sequence[Pool], overhead: Overhead, label_keys: frozenset[str]) -> None:
        self.ordered, self.overhead, self.label_keys = ordered, overhead, label_keys
        self.checked: dict[tuple[object, ...], Check] = {}
        self.largest: dict[int, tuple[InstanceType, ...]] = {}

    def of(self, pod: Pod) -> tuple[list[tuple[Pool, tuple[InstanceType, ...]]], dict[str, Refusal]]:
        """(pools that fit, strict matches before relaxed ones, in pool order; why each other pool refused)."""
        strict: list[tuple[Pool, tuple[InstanceType, ...]]] = []
        relaxed: list[tuple[Pool, tuple[InstanceType, ...]]] = []
        refusals: dict[str, Refusal] = {}
        for pool in self.ordered:
            key = (pool.name, pod.selector, tuple(pod.deployment_spec.tolerations))
            if key not in self.checked:
                self.checked[key] = eligible(pool, pod, self.label_keys)
            types, refusal, soft = self.checked[key]
            if types is not None:
                if id(types) not in self.largest:
                    self.largest[id(types)] = largest_first(types)
                types = fitting(types, pod, self.overhead, self.largest[id(types)])
                refusal = None if types is not None else size_refusal(self.overhead)
            if types is None:
                assert refusal is not None
                refusals[pool.name] = refusal
            else:
                (relaxed if soft else strict).append((pool, types))
        return strict + relaxed, refusals


def _fill_open_nodes(nodes: Sequence[_Node], states: dict[str, _PoolState],
                     allowed: dict[str, tuple[InstanceType, ...]], pod: Pod, wants: str | None) -> int:
    """Put as many of the pod's replicas as fit on the nodes already opened; returns how many are left."""
    left = pod.count
    for node in nodes:
        if not left:
            break
        types = allowed.get(node.pool.name)
        if types is not None and (wants is None or wants in node.capacity_types):
            took = _add(node, states[node.pool.name], types, pod, left)
            if took and wants is not None:
                node.capacity_types = (wants,)
            left -= took
    return left


def _pool_result(pool: Pool, mine: Sequence[_Node], overhead: Overhead) -> PoolResult:
    """A pool's nodes grouped by (type, capacity types), dearest first, and its pods per deployment."""
    by_type: Counter[tuple[str, tuple[str, ...]]] = Counter()
    pods_by_type: Counter[tuple[str, tuple[str, ...]]] = Counter()
    kinds: dict[str, InstanceType] = {}
    placed: Counter[str] = Counter()
    for n in mine:
        assert n.type is not None
        line_key = (n.type.name, n.capacity_types)
        by_type[line_key] += 1
        pods_by_type[line_key] += n.pods - overhead.pods
        kinds[n.type.name] = n.type
        placed.update(n.placed)
    lines = tuple(sorted((NodeLine(kinds[k[0]], c, pods_by_type[k], k[1]) for k, c in by_type.items()),
                         key=lambda line: (-line.hourly, line.type.name, line.capacity_types)))
    return PoolResult(pool, lines, dict(placed))


# --- the fixed node group ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class FixedResult:
    """The same pods on one managed node group of a single instance type (the Cluster Autoscaler set-up)."""

    type: InstanceType
    nodes: int
    pods: int
    unschedulable: tuple[Unschedulable, ...]

    @property
    def hourly(self) -> float:
        return (self.type.on_demand_hourly or 0.0) * self.nodes


def schedule_fixed(instance_type: InstanceType, workload: Workload) -> FixedResult:
    """First-fit decreasing onto nodes of one type. The group is untainted and unlabelled and stands in for the
    whole cluster, so node selectors and tolerations are ignored, except the architecture."""
    overhead = Overhead.of(workload)
    nodes: list[list[int]] = []  # [cpu, memory, pods] used per node
    unschedulable = []
    placed = 0
    pods = sorted((Pod.of(d) for d in workload.deployments if d.replicas),
                  key=lambda p: (-p.cpu, -p.memory, p.deployment))
    for pod in pods:
        arch = dict(pod.selector).get(ARCH)
        if arch is not None and arch != instance_type.arch:
            unschedulable.append(Unschedulable(
                pod.deployment, pod.count, f"architecture {arch}: {instance_type.name} is {instance_type.arch}"))
            continue
        per_node = fits_count(instance_type, overhead.cpu, overhead.memory, overhead.pods, pod)
        if per_node == 0:
            unschedulable.append(Unschedulable(pod.deployment, pod.count,
                                               f"pod larger than {instance_type.name}'s allocatable resources"))
            continue
        left = pod.count
        for used in nodes:
            if not left:
                break
            take = min(left, fits_count(instance_type, used[0], used[1], used[2], pod))
            if take:
                used[0] += take * pod.cpu
                used[1] += take * pod.memory
                used[2] += take
                left -= take
        while left:
            take = min(left, per_node)
            nodes.append([overhead.cpu + take * pod.cpu, overhead.memory + take * pod.memory,
                          overhead.pods + take])
            left -= take
        placed += pod.count
    return FixedResult(instance_type, len(nodes), placed, tuple(unschedulable))
