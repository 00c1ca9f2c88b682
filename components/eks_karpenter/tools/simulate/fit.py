"""Which pools take a pod: Karpenter's compatibility rules, simplified to node selectors.

- the pod tolerates every `NoSchedule`/`NoExecute` taint of the pool (not its `startupTaints`); a pool whose
  `PreferNoSchedule` taints it does not tolerate is used only when no other pool can take it (Karpenter's last
  relaxation);
- every node selector entry is satisfied: by the template labels (equality), by the requirements on that key
  (In / NotIn / Exists / DoesNotExist / Gt / Lt), and, for a well-known instance label (family, size, arch, ...),
  by the admitted types carrying it, which restricts the types the pod's node may be; a key the pool neither
  labels nor constrains is unsatisfiable, except a zone or region of the stack's network;
- pools are tried by descending `weight` (unset = 0), then by name.
"""

from __future__ import annotations

from dataclasses import dataclass

from eks_karpenter.catalogue import InstanceType, Requirement
from eks_karpenter.labels import ARCH, NODEPOOL_LABEL, OS
from eks_karpenter.quantities import cpu_millis, memory_bytes
from eks_karpenter.tools.simulate.pools import Pool
from eks_karpenter.tools.simulate.workload import Deployment, Workload

MIB = 1 << 20


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


def largest_first(types: tuple[InstanceType, ...]) -> tuple[InstanceType, ...]:
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
    order = largest if largest is not None else largest_first(types)
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
