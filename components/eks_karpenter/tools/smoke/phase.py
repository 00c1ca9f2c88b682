"""`smoke --phase`: is the cluster in the state the migration phase expects? Cluster Autoscaler's replicas, every
NodePool Ready (tainted for opt-in pods in phase 1 only), the drained node groups' sizes, and no Pending pod
older than `migration.pendingPodsMaxAge` (neither autoscaler placing it)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from eks_karpenter.labels import NODEGROUP_LABEL
from eks_karpenter.platform.karpenter.config import duration_seconds
from eks_karpenter.platform.migration.config import OPT_IN_TAINT_KEY
from eks_karpenter.platform.stack import StackConfig

MAX_LISTED = 10
"""Pending pods named in a failed check; the rest are counted."""


class PhaseCheckError(Exception):
    """The stack cannot be checked for a phase (no migration section, or a phase out of range)."""


@dataclass(frozen=True)
class Expectation:
    """What the cluster should look like in one phase, from the stack file."""

    phase: int
    autoscaler: str
    """`namespace/name` of Cluster Autoscaler's Deployment."""
    autoscaler_replicas: int
    pools: tuple[str, ...]
    pending_max_age: float
    """Seconds a pod may stay Pending."""
    node_group_nodes: dict[str, int] = field(default_factory=dict)
    """Most nodes each drained node group may still have."""


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


def expectation(cfg: StackConfig, phase: int | None = None) -> Expectation:
    """The expectation for `phase` (default: the stack's own `migration.phase`)."""
    m = cfg.migration
    if m is None:
        raise PhaseCheckError("the stack has no eks-karpenter:migration section: --phase checks a Cluster Autoscaler "
                              "migration")
    phase = m.phase if phase is None else phase
    if phase not in (1, 2, 3, 4):
        raise PhaseCheckError(f"--phase {phase}: the phases are 1 to 4")
    at = m.model_copy(update={"phase": phase})
    nodes: dict[str, int] = {}
    for g in m.node_groups:
        if phase == 3 and g.drain_to is not None:
            nodes[g.name] = g.drain_to
        elif phase == 4 and g.after_migration == "delete":
            nodes[g.name] = 0
    return Expectation(phase=phase, autoscaler=f"{m.cluster_autoscaler.namespace}/{m.cluster_autoscaler.name}",
                       autoscaler_replicas=at.autoscaler_replicas, pools=tuple(p.name for p in cfg.node_pools),
                       pending_max_age=float(duration_seconds(m.pending_pods_max_age)), node_group_nodes=nodes)


def check_phase(api: Any, want: Expectation, now: datetime | None = None) -> list[Check]:
    """Every check of `want` against the cluster behind `api` (a `KubeApi`)."""
    now = now or datetime.now(UTC)
    checks = [_autoscaler(api, want), *(_pool(api, want, name) for name in want.pools)]
    checks += [_group(api, name, most) for name, most in sorted(want.node_group_nodes.items())]
    checks.append(_pending(api, want, now))
    return checks


def _autoscaler(api: Any, want: Expectation) -> Check:
    namespace, name = want.autoscaler.split("/", 1)
    found = api.get_deployment(namespace, name)
    label = f"cluster-autoscaler {want.autoscaler}"
    if found is None:
        return Check(label, False, "Deployment not found")
    spec = int(found.get("spec", {}).get("replicas", 1))
    running = int(found.get("status", {}).get("readyReplicas", 0) or 0)
    if spec != want.autoscaler_replicas:
        return Check(label, False, f"set to {spec} replicas, phase {want.phase} expects {want.autoscaler_replicas}")
    if running != want.autoscaler_replicas:
        return Check(label, False, f"{running} of {want.autoscaler_replicas} replicas ready")
    return Check(label, True, f"{spec} replicas" + (" (scaled to zero)" if spec == 0 else ""))


def _pool(api: Any, want: Expectation, name: str) -> Check:
    label = f"nodepool {name}"
    pool = api.get_nodepool(name)
    if pool is None:
        return Check(label, False, "not found: has this phase been applied (`pulumi up`)?")
    ready = [c for c in pool.get("status", {}).get("conditions", []) if c.get("type") == "Ready"]
    if not ready or ready[0].get("status") != "True":
        why = ready[0].get("message") or ready[0].get("reason") if ready else "no Ready condition yet"
        return Check(label, False, f"not Ready: {why}")
    taints = pool.get("spec", {}).get("template", {}).get("spec", {}).get("taints") or []
    tainted = any(t.get("key") == OPT_IN_TAINT_KEY for t in taints)
    if tainted != (want.phase == 1):
        expected = "only opted-in pods (the migration taint)" if want.phase == 1 else "every pod (no migration taint)"
        return Check(label, False, f"phase {want.phase} expects the pool to take {expected}")
    return Check(label, True, "Ready" + (", opted-in pods only" if tainted else ""))


def _group(api: Any, name: str, most: int) -> Check:
    nodes = api.list_nodes(f"{NODEGROUP_LABEL}={name}")
    label = f"nodegroup {name}"
    if len(nodes) > most:
        return Check(label, False, f"{len(nodes)} nodes, expected at most {most} (still draining?)")
    return Check(label, True, f"{len(nodes)} nodes")


def _pending(api: Any, want: Expectation, now: datetime) -> Check:
    old = []
    for pod in api.pending_pods():
        created = datetime.fromisoformat(pod["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
        age = (now - created).total_seconds()
        if age > want.pending_max_age:
            old.append(f"{pod['metadata']['namespace']}/{pod['metadata']['name']} ({int(age // 60)}m)")
    label = "pending pods"
    limit = f"{want.pending_max_age:g}s"
    if not old:
        return Check(label, True, f"none older than {limit}")
    more = f" and {len(old) - MAX_LISTED} more" if len(old) > MAX_LISTED else ""
    return Check(label, False, f"{len(old)} Pending longer than {limit}: {', '.join(old[:MAX_LISTED])}{more}")


def render_text(stack: str, want: Expectation, checks: list[Check]) -> str:
    lines = [f"migration phase {want.phase} of stack {stack}:"]
    lines += [f"  {'ok  ' if c.ok else 'FAIL'} {c.name}: {c.detail}" for c in checks]
    failed = sum(not c.ok for c in checks)
    lines.append(f"{'all checks passed' if not failed else f'{failed} check(s) failed'}")
    return "\n".join(lines) + "\n"


def render_json(stack: str, want: Expectation, checks: list[Check]) -> str:
    return json.dumps({"stack": stack, "phase": want.phase, "ok": all(c.ok for c in checks),
                       "checks": [asdict(c) for c in checks]}, indent=2) + "\n"
