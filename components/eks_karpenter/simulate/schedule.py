"""The what-if scheduler: place a workload's pods on a stack's NodePools as Karpenter would, and on a fixed node group.

Pure: rendered NodePool manifests and the catalogue in, node counts and prices out.

**Which pools take a pod** (Karpenter's compatibility rules, simplified to node selectors):
- the pod tolerates every `NoSchedule`/`NoExecute` taint of the pool (not its `startupTaints`); a pool whose
  `PreferNoSchedule` taints it does not tolerate is used only when no other pool can take it (Karpenter's last
  relaxation);
- every node selector entry is satisfied: by the template labels (equality), by the requirements on that key
  (In / NotIn / Exists / DoesNotExist / Gt / Lt), and, for a well-known instance label (family, size, arch, ...),
  by the admitted types carrying it, which restricts the types the pod's node may be; a key the pool neither
  labels nor constrains is unsatisfiable, except a zone or region of the stack's network;
- pools are tried by descending `weight` (unset = 0), then by name.

**Which nodes** (Karpenter's provisioning loop, first-fit decreasing): pods are taken largest first (CPU, then
memory). Each pod goes to the first in-flight node that can still take it, else opens a node in the first pool that
accepts it. A node keeps accepting pods while at least one of its candidate types (the pool's admitted, priced types,
narrowed by the pods' instance selectors) holds them all with allocatable CPU, memory and pods (after DaemonSet
requests), and the pool's `limits` allow that type; it launches as the cheapest such type. Limits (`cpu`, `memory`,
`nodes`, extended resources) are counted on the launched capacity (vCPUs, instance memory, one per node).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from eks_karpenter.catalogue import Catalogue, InstanceType, Requirement, admitted_for
from eks_karpenter.catalogue.model import ARCH, MEMORY, OS
from eks_karpenter.nodepool.manifests import render_node_class, render_node_pool
from eks_karpenter.simulate.workload import Deployment, Workload, cpu_millis, memory_bytes, quantity
from eks_karpenter.stack import StackConfig

NODEPOOL_LABEL = "karpenter.sh/nodepool"
CAPACITY_TYPE = "karpenter.sh/capacity-type"
ZONE, REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"
MIB = 1 << 20


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


# --- compatibility ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Refusal:
    """Why a pool cannot take a pod: a kind (for the headline) and the detail."""

    kind: str
    """`taint`, `label`, `arch`, `type`, `size` or `limit`."""
    detail: str


def _requirement_admits(req: Requirement, value: str) -> bool:
    op = req.operator
    if op == "In":
        return value in req.values
    if op == "NotIn":
        return value not in req.values
    if op == "Exists":
        return True
    if op == "DoesNotExist":
        return False
    try:
        number, bound = int(value), int(req.values[0])
    except ValueError:
        return False
    return {"Gt": number > bound, "Lt": number < bound, "Gte": number >= bound, "Lte": number <= bound}.get(op, False)


@dataclass(frozen=True)
class Pod:
    """One deployment's pods, reduced to what scheduling needs."""

    deployment: str
    count: int
    cpu: int
    """Millicores."""
    memory: int
    """Bytes."""
    selector: tuple[tuple[str, str], ...]
    deployment_spec: Deployment

    @staticmethod
    def of(d: Deployment) -> Pod:
        return Pod(d.name, d.replicas, d.cpu_millis, d.memory_bytes, tuple(sorted(d.selector().items())), d)


@dataclass(frozen=True)
class Overhead:
    """DaemonSet requests taken off every node."""

    cpu: int = 0
    memory: int = 0
    pods: int = 0

    @staticmethod
    def of(workload: Workload) -> Overhead:
        return Overhead(sum(cpu_millis(d.cpu) for d in workload.daemon_sets),
                        sum(memory_bytes(d.memory) for d in workload.daemon_sets), len(workload.daemon_sets))


def fits_count(t: InstanceType, cpu: int, memory: int, pods: int, pod: Pod) -> int:
    """How many more of `pod` fit on type `t` already holding cpu/memory/pods (overhead included)."""
    free_cpu, free_mem, free_pods = t.cpu_millis - cpu, t.memory_mib * MIB - memory, t.pods - pods
    if free_cpu < 0 or free_mem < 0 or free_pods <= 0:
        return 0
    n = free_pods
    if pod.cpu:
        n = min(n, free_cpu // pod.cpu)
    if pod.memory:
        n = min(n, free_mem // pod.memory)
    return n


def _largest_first(types: tuple[InstanceType, ...]) -> tuple[InstanceType, ...]:
    return tuple(sorted(types, key=lambda t: (-t.cpu_millis, -t.memory_mib, -t.pods)))


Check = tuple[tuple[InstanceType, ...] | None, Refusal | None, bool]


def check(pool: Pool, pod: Pod, overhead: Overhead, label_keys: frozenset[str]) -> Check:
    """(candidate types, refusal, relaxed): the types a node of `pool` may be for `pod`, or why none; `relaxed`
    when the pod only fits by tolerating a `PreferNoSchedule` taint. Unrestricted candidates are `pool.types`
    itself (so callers can skip intersecting)."""
    types, refusal, relaxed = eligible(pool, pod, label_keys)
    if types is None:
        return types, refusal, relaxed
    return fitting(types, pod, overhead), None, relaxed


def fitting(types: tuple[InstanceType, ...], pod: Pod, overhead: Overhead,
            largest: tuple[InstanceType, ...] | None = None) -> tuple[InstanceType, ...] | None:
    """`types` if one of them holds the pod (after DaemonSet requests), else None."""
    # Largest first: a pod that fits anywhere fits the first type tried.
    order = largest if largest is not None else _largest_first(types)
    if any(fits_count(t, overhead.cpu, overhead.memory, overhead.pods, pod) for t in order):
        return types
    return None


def size_refusal(overhead: Overhead) -> Refusal:
    return Refusal("size", "pod larger than any admitted type" + (
        " (after DaemonSet requests)" if overhead.cpu or overhead.memory else ""))


def eligible(pool: Pool, pod: Pod, label_keys: frozenset[str]) -> Check:
    """`check` without the size: depends only on the pod's selector and tolerations (cached per pool by callers)."""
    relaxed = False
    tolerations = pod.deployment_spec.tolerations
    for taint in pool.taints:
        if not any(t.tolerates(taint.key, taint.value, taint.effect) for t in tolerations):
            if taint.effect == "PreferNoSchedule":
                relaxed = True
            else:
                return None, Refusal("taint", f"taint {taint} not tolerated"), False
    types = pool.types
    for key, value in pod.selector:
        kind = "arch" if key == ARCH else "label"
        if key == NODEPOOL_LABEL or key in pool.labels:
            if pool.labels.get(key) != value:
                have = pool.labels.get(key)
                return None, Refusal(kind, f"label {key}={have}, not {value}" if have is not None
                                     else f"no label {key}={value}"), False
            continue
        reqs = [r for r in pool.requirements if r.key == key]
        if any(not _requirement_admits(r, value) for r in reqs):
            return None, Refusal(kind, f"requirements do not allow {key}={value}"), False
        if key in label_keys and key != OS:
            kept = tuple(t for t in types if t.labels.get(key) == value)
            if not kept:
                what = f"architecture {value}" if key == ARCH else f"{key}={value}"
                return None, Refusal(kind if key == ARCH else "type", f"no admitted type has {what}"), False
            types = types if len(kept) == len(types) else kept
        elif not reqs and key not in label_keys and value not in pool.offerings.get(key, frozenset()):
            return None, Refusal("label", f"no label {key}={value}"), False
    return types, None, relaxed


# --- placement ---------------------------------------------------------------------------------------------------

def capacity(t: InstanceType | None, key: str) -> int:
    """What a node of type `t` counts against a pool limit `key`."""
    if t is None:
        return 0
    if key == "cpu":
        return t.vcpus * 1000
    if key == "memory":
        return int(t.labels[MEMORY]) * MIB
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
    checked: dict[tuple[object, ...], Check] = {}
    largest: dict[int, tuple[InstanceType, ...]] = {}
    nodes: list[_Node] = []
    unschedulable: list[Unschedulable] = []
    pods = sorted((Pod.of(d) for d in workload.deployments if d.replicas),
                  key=lambda p: (-p.cpu, -p.memory, p.deployment))
    for pod in pods:
        strict: list[tuple[Pool, tuple[InstanceType, ...]]] = []
        relaxed: list[tuple[Pool, tuple[InstanceType, ...]]] = []
        refusals: dict[str, Refusal] = {}
        for pool in ordered:
            key = (pool.name, pod.selector, tuple(pod.deployment_spec.tolerations))
            if key not in checked:
                checked[key] = eligible(pool, pod, label_keys)
            types, refusal, soft = checked[key]
            if types is not None:
                if id(types) not in largest:
                    largest[id(types)] = _largest_first(types)
                types = fitting(types, pod, overhead, largest[id(types)])
                refusal = None if types is not None else size_refusal(overhead)
            if types is None:
                assert refusal is not None
                refusals[pool.name] = refusal
            else:
                (relaxed if soft else strict).append((pool, types))
        choices = strict + relaxed
        allowed = {p.name: t for p, t in choices}
        wants = dict(pod.selector).get(CAPACITY_TYPE)
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
    results = []
    for pool in ordered:
        mine = [n for n in nodes if n.pool is pool]
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
        results.append(PoolResult(pool, lines, dict(placed)))
    return KarpenterResult(tuple(results), tuple(unschedulable))


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


# --- a stack's pools --------------------------------------------------------------------------------------------

def pools_for_stack(cfg: StackConfig, catalogue: Catalogue) -> list[Pool]:
    """Every NodePool of a validated stack config, rendered as `pulumi up` would render it."""
    classes = {nc.name: render_node_class(nc, cfg.cluster.name, "node-role", {}) for nc in cfg.node_classes}
    offerings = {ZONE: frozenset(cfg.network.zones), REGION: frozenset({cfg.region})}
    return [pool_from_manifest(render_node_pool(p), classes.get(p.node_class), catalogue, offerings)
            for p in cfg.node_pools]
