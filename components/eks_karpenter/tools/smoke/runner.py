"""The smoke test against a live cluster: apply the plan, follow each pool's pod to a new node and back, clean up.

All pools run at once in one polling loop (a few list calls per poll, whatever the number of pools). Each pool
moves through its milestones; a phase that outlives its time limit fails that pool with the NodeClaim's
conditions and the related events, and the others carry on. The namespace is deleted whatever happens.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from eks_karpenter.labels import CAPACITY_TYPE, INSTANCE_TYPE, MIRROR_POD_ANNOTATION, NODEPOOL_LABEL, ZONE
from eks_karpenter.platform.kube import KubeApi, KubeError
from eks_karpenter.quantities import cpu_millis
from eks_karpenter.tools.smoke.budgets import Consolidation, ConsolidationState, consolidation_of
from eks_karpenter.tools.smoke.config import SmokeTimeouts
from eks_karpenter.tools.smoke.plan import RUN_LABEL, PoolPlan, SmokePlan, sized_above


class Status(StrEnum):
    """Where a pool's run stands: running until it passes the last milestone (`ok`) or fails one."""

    RUNNING = "running"
    OK = "ok"
    FAILED = "failed"


class Milestone(StrEnum):
    """What is recorded per pool, in this order (seconds since the run started); the values are the report's."""

    POD_CREATED = "pod created"
    CLAIM_CREATED = "NodeClaim created"
    CLAIM_LAUNCHED = "NodeClaim launched"
    NODE_READY = "node Ready"
    POD_RUNNING = "pod Running"
    SCALED_TO_ZERO = "scaled to zero"
    NODE_GONE = "node gone"


MILESTONES = tuple(Milestone)
"""Every milestone, in order."""

PHASE_OF = {Milestone.POD_CREATED: "nodeclaim", Milestone.CLAIM_CREATED: "nodeclaim",
            Milestone.CLAIM_LAUNCHED: "launched", Milestone.NODE_READY: "ready", Milestone.POD_RUNNING: "running",
            Milestone.NODE_GONE: "gone"}
"""The time limit (a `SmokeTimeouts` field) that bounds reaching each milestone."""

MAX_POLL_FAILURES = 5
"""Consecutive failed polls (API errors) after which the run stops (and cleans up)."""

CONDITIONS = ("Launched", "Registered", "Initialized", "Ready")

HINTS: tuple[tuple[str, str], ...] = (
    (r"InsufficientInstanceCapacity|InsufficientCapacity|insufficient capacity",
     "EC2 had no capacity for the admitted types in the pool's zones: allow more families, sizes or zones, or "
     "on-demand"),
    (r"UnauthorizedOperation|AccessDenied|not authorized",
     "the controller's IAM role lacks a permission named in the message (or an SCP denies it)"),
    (r"[Ll]aunch ?[Tt]emplate",
     "the launch template was refused: check the EC2NodeClass (AMI, security groups, role / instance profile, "
     "block devices)"),
    (r"no instance type|incompatible with nodepool|did not tolerate|could not schedule|all available instance types",
     "Karpenter found no instance type of the pool for the pod"),
    (r"exceeds? .*limit|limits? exceeded|would exceed",
     "the pool's `limits` are reached: raise them or free capacity"),
    (r"NodeClassNotReady|EC2NodeClass .*not ready|nodeclass .*not found",
     "the pool's EC2NodeClass is not ready (AMI, subnet or security-group selectors resolve to nothing?)"),
    (r"FailedCreate|forbidden|exceeded quota",
     "the Deployment could not create its pod (quota, admission policy)"),
)


@dataclass
class Settings:
    """Everything time-related is injectable: tests run the whole flow in milliseconds."""

    timeouts: SmokeTimeouts = field(default_factory=SmokeTimeouts)
    poll: float = 2.0
    """Seconds between polls: the resolution of the recorded timings."""
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    now: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    """Wall clock (UTC), for disruption budgets' cron windows."""
    remove_kept_nodes: bool = True
    """When consolidation cannot remove the test's empty node (disabled, or a budget blocks it), delete its
    NodeClaim so the instance does not run on; only when no other workload's pod runs on the node."""


@dataclass
class PoolResult:
    pool: str
    plan: PoolPlan
    status: Status = Status.RUNNING
    """`ok`, or `failed` (see `phase` and `error`)."""
    milestones: dict[Milestone, float] = field(default_factory=dict)
    phase: str | None = None
    """The milestone that was not reached, when failed."""
    error: str | None = None
    diagnostics: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    nodeclaim: str | None = None
    node: str | None = None
    pod: str | None = None
    instance_type: str | None = None
    capacity_type: str | None = None
    zone: str | None = None
    consolidation: Consolidation | None = None
    disruption: Mapping[str, Any] = field(default_factory=dict)
    """The live NodePool's `spec.disruption` (what Karpenter acts on, even if the stack file changed since)."""
    existing_claims: frozenset[str] = frozenset()
    deployment: dict[str, Any] = field(default_factory=dict)
    last_claim: Mapping[str, Any] | None = None
    """The tracked NodeClaim as last seen (its conditions outlive its deletion in the report)."""
    """What was applied: the plan's Deployment, kept off the pool's existing nodes."""
    deadline: float = 0.0
    gone_outcome: str = ""
    """For the last phase: `removed by consolidation`, `consolidation disabled`, `blocked by a budget`..."""

    @property
    def ok(self) -> bool:
        return self.status == Status.OK

    def durations(self) -> list[tuple[Milestone, float, float]]:
        """(milestone, seconds since start, seconds since the previous milestone)."""
        out, previous = [], 0.0
        for name in MILESTONES:
            if name in self.milestones:
                at = self.milestones[name]
                out.append((name, at, at - previous))
                previous = at
        return out


@dataclass
class SmokeResult:
    plan: SmokePlan
    pools: list[PoolResult]
    started: datetime
    server: str
    interrupted: bool = False
    cleanup: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.interrupted and all(p.ok for p in self.pools)


def _condition(obj: Mapping[str, Any] | None, kind: str) -> Mapping[str, Any] | None:
    for c in ((obj or {}).get("status") or {}).get("conditions") or ():
        if c.get("type") == kind:
            return c  # type: ignore[no-any-return]
    return None


def _is_true(obj: Mapping[str, Any] | None, kind: str) -> bool:
    c = _condition(obj, kind)
    return c is not None and c.get("status") == "True"


def hints_for(texts: Sequence[str]) -> list[str]:
    out: list[str] = []
    for pattern, hint in HINTS:
        if any(re.search(pattern, t) for t in texts) and hint not in out:
            out.append(hint)
    return out


class Runner:
    """One run of the smoke test against one cluster."""

    def __init__(self, api: KubeApi, plan: SmokePlan, settings: Settings | None = None,
                 log: Callable[[str], None] = lambda _: None) -> None:
        self.api = api
        self.plan = plan
        self.settings = settings or Settings()
        self.log = log
        self.t0 = 0.0
        self.results = [PoolResult(p.pool, p) for p in plan.pools]

    def elapsed(self) -> float:
        return self.settings.clock() - self.t0

    # --- the run ---------------------------------------------------------------------------------------------
    def run(self) -> SmokeResult:
        started = self.settings.now()
        result = SmokeResult(self.plan, self.results, started, self.api.server)
        self.t0 = self.settings.clock()
        try:
            self._preflight()
            self.api.create_namespace(self.plan.namespace_manifest())
            self.log(f"created namespace {self.plan.namespace}")
            for r in self.results:
                if r.status == Status.RUNNING:
                    self.api.create_deployment(r.deployment)
                    r.deadline = self.elapsed() + self.settings.timeouts.nodeclaim
            failures = 0
            while any(r.status == Status.RUNNING for r in self.results):
                try:
                    self._poll()
                    failures = 0
                except KubeError as exc:  # a blip of the API server is no reason to abandon a 10-minute run
                    failures += 1
                    self.log(f"poll failed ({failures}/{MAX_POLL_FAILURES}): {exc}")
                    if failures >= MAX_POLL_FAILURES:
                        raise
                if any(r.status == Status.RUNNING for r in self.results):
                    self.settings.sleep(self.settings.poll)
        except KeyboardInterrupt:
            result.interrupted = True
            for r in self.results:
                if r.status == Status.RUNNING:
                    r.status, r.error = Status.FAILED, "interrupted"
                    r.phase = self._next_milestone(r)
        finally:
            result.cleanup = self._cleanup()
        return result

    def _preflight(self) -> None:
        claims = self.api.list_nodeclaims()
        for r in self.results:
            live = self.api.get_nodepool(r.pool)
            if live is None:
                self._fail(r, Milestone.POD_CREATED, f"NodePool {r.pool!r} does not exist in the cluster "
                                                   "(was `pulumi up` applied to this stack?)")
                continue
            ready = _condition(live, "Ready")
            if ready is not None and ready.get("status") == "False":
                r.notes.append(f"NodePool not Ready: {ready.get('reason', '')}: {ready.get('message', '')}")
            r.disruption = (live.get("spec") or {}).get("disruption") or {}
            r.consolidation = consolidation_of(r.disruption, self.settings.now())
            r.existing_claims = frozenset(
                c["metadata"]["name"] for c in claims if c["metadata"].get("labels", {}).get(NODEPOOL_LABEL) == r.pool)
            self._size_above_existing_nodes(r)

    def _size_above_existing_nodes(self, r: PoolResult) -> None:
        """Make the pod too big for the free room of every existing node of the pool."""
        free = {n["metadata"]["name"]: self._free_cpu(n) for n in self.api.list_nodes(f"{NODEPOOL_LABEL}={r.pool}")}
        most = max(free.values(), default=0)
        resized = sized_above(r.plan, most)
        if resized is None:
            r.notes.append(f"an existing node has {most}m CPU free, more than any admitted type can give the pod: "
                           "it may land there")
            resized = r.plan
        elif resized is not r.plan:
            r.notes.append(f"sized up to {resized.cpu_millis}m CPU on {resized.instance_type.name}: an existing "
                           f"node of the pool has {most}m free")
        r.plan = resized
        r.deployment = resized.deployment

    def _free_cpu(self, node: Mapping[str, Any]) -> int:
        allocatable = cpu_millis(str(((node.get("status") or {}).get("allocatable") or {}).get("cpu", "0")))
        used = 0
        for pod in self.api.pods_on_node(node["metadata"]["name"]):
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            for c in (pod.get("spec") or {}).get("containers") or ():
                used += cpu_millis(str(((c.get("resources") or {}).get("requests") or {}).get("cpu", "0")))
        return max(allocatable - used, 0)

    def _poll(self) -> None:
        pods = self.api.list_pods(self.plan.namespace, f"{RUN_LABEL}={self.plan.run_id}")
        claims = self.api.list_nodeclaims()
        for r in self.results:
            if r.status != Status.RUNNING:
                continue
            pod = next((p for p in pods if p["metadata"].get("labels", {}).get("eks-karpenter.dev/smoke-pool")
                        == r.pool), None)
            self._advance(r, pod, claims)
            if r.status == Status.RUNNING and self.elapsed() > r.deadline:
                self._stalled(r, claims)

    def _mark(self, r: PoolResult, milestone: Milestone, at: float) -> None:
        r.milestones[milestone] = at
        self.log(f"{r.pool}: {milestone} at {at:.1f}s")
        following = MILESTONES[MILESTONES.index(milestone) + 1:]
        nxt = next((m for m in following if m in PHASE_OF), None)
        if nxt is not None:
            limit = getattr(self.settings.timeouts, PHASE_OF[nxt])
            if nxt == Milestone.NODE_GONE:
                limit += (r.consolidation.consolidate_after or 0.0) if r.consolidation else 0.0
            r.deadline = at + limit

    def _advance(self, r: PoolResult, pod: Mapping[str, Any] | None, claims: Sequence[Mapping[str, Any]]) -> None:
        """Record every milestone this poll shows, in order; stop at the first not reached yet (or failed)."""
        if not (self._pod_created(r, pod) and self._follow_binding(r, pod, claims)
                and self._claim_created(r, claims)):
            return
        claim = self._tracked_claim(r, claims)
        if self._claim_launched(r, claim) and self._node_ready(r, claim) and self._pod_running(r, pod):
            self._node_gone(r)

    def _pod_created(self, r: PoolResult, pod: Mapping[str, Any] | None) -> bool:
        if Milestone.POD_CREATED in r.milestones:
            return True
        if pod is None:
            return False
        r.pod = pod["metadata"]["name"]
        self._mark(r, Milestone.POD_CREATED, self.elapsed())
        return True

    def _follow_binding(self, r: PoolResult, pod: Mapping[str, Any] | None,
                        claims: Sequence[Mapping[str, Any]]) -> bool:
        """The pod's node says which NodeClaim was launched for it (another workload's new claim may have been
        picked up first); a node that is no new claim's means nothing was launched for it: the pool fails."""
        bound = (pod or {}).get("spec", {}).get("nodeName")
        if not bound or Milestone.POD_RUNNING in r.milestones:
            return True
        owner = next((c for c in claims if (c.get("status") or {}).get("nodeName") == bound), None)
        if owner is None or owner["metadata"]["name"] in r.existing_claims:
            missed = Milestone.CLAIM_CREATED if Milestone.CLAIM_CREATED not in r.milestones else Milestone.POD_RUNNING
            self._fail(r, missed, f"the pod was scheduled on existing node {bound}: the pool had room, so no node "
                       "was launched for it")
            return False
        if r.nodeclaim and owner["metadata"]["name"] != r.nodeclaim:
            r.notes.append(f"the pod went to NodeClaim {owner['metadata']['name']}, not {r.nodeclaim}")
        r.nodeclaim = owner["metadata"]["name"]
        return True

    def _claim_created(self, r: PoolResult, claims: Sequence[Mapping[str, Any]]) -> bool:
        if Milestone.CLAIM_CREATED not in r.milestones:
            claim = self._claim_for(r, claims)
            if claim is None:
                return False
            r.nodeclaim = claim["metadata"]["name"]
            self._mark(r, Milestone.CLAIM_CREATED, self.elapsed())
        elif Milestone.CLAIM_LAUNCHED not in r.milestones and len(new := self._new_claims(r, claims)) > 1:
            # Another workload's claim may have been taken for ours: follow the pod's nomination.
            nominated = self._nominated(r, new)
            if nominated is not None and nominated["metadata"]["name"] != r.nodeclaim:
                r.notes.append(f"following NodeClaim {nominated['metadata']['name']} (the pod was nominated for it), "
                               f"not {r.nodeclaim}")
                r.nodeclaim = nominated["metadata"]["name"]
        return True

    def _tracked_claim(self, r: PoolResult, claims: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
        """The pool's NodeClaim as this poll sees it; when it vanished before launching, the retry's."""
        claim = next((c for c in claims if c["metadata"]["name"] == r.nodeclaim), None)
        if claim is not None:
            r.last_claim = claim
        elif Milestone.CLAIM_LAUNCHED not in r.milestones and r.last_claim is not None:
            # Karpenter deletes a claim whose launch failed (insufficient capacity) and tries again with another.
            r.notes.append(f"NodeClaim {r.nodeclaim} was deleted before it launched"
                           + "".join(f"; {line}" for line in _claim_problems(r.last_claim)))
            r.existing_claims |= {str(r.nodeclaim)}
            r.last_claim = None
            retry = self._claim_for(r, claims)
            if retry is not None:
                r.nodeclaim = retry["metadata"]["name"]
                claim = retry
        return claim

    def _claim_launched(self, r: PoolResult, claim: Mapping[str, Any] | None) -> bool:
        if Milestone.CLAIM_LAUNCHED in r.milestones:
            return True
        if claim is None or not _is_true(claim, "Launched"):
            return False
        labels = claim["metadata"].get("labels", {})
        r.instance_type = labels.get(INSTANCE_TYPE)
        r.capacity_type = labels.get(CAPACITY_TYPE)
        r.zone = labels.get(ZONE)
        self._mark(r, Milestone.CLAIM_LAUNCHED, self.elapsed())
        return True

    def _node_ready(self, r: PoolResult, claim: Mapping[str, Any] | None) -> bool:
        if Milestone.NODE_READY in r.milestones:
            return True
        name = ((claim or {}).get("status") or {}).get("nodeName")
        node = self.api.get_node(name) if name else None
        if node is None or not _is_true(node, "Ready"):
            return False
        r.node = name
        self._mark(r, Milestone.NODE_READY, self.elapsed())
        return True

    def _pod_running(self, r: PoolResult, pod: Mapping[str, Any] | None) -> bool:
        """True once the pod ran on its node earlier; the poll that sees it running scales it to zero and stops."""
        if Milestone.POD_RUNNING in r.milestones:
            return True
        if pod is None or (pod.get("status") or {}).get("phase") != "Running":
            return False
        on = pod.get("spec", {}).get("nodeName")
        if on != r.node:
            self._fail(r, Milestone.POD_RUNNING, f"the pod runs on node {on}, not on {r.node} launched for it")
            return False
        self._mark(r, Milestone.POD_RUNNING, self.elapsed())
        self.api.scale_deployment(self.plan.namespace, r.plan.deployment["metadata"]["name"], 0)
        self._mark(r, Milestone.SCALED_TO_ZERO, self.elapsed())
        self._after_scale_down(r)
        return False

    def _node_gone(self, r: PoolResult) -> None:
        if Milestone.NODE_GONE not in r.milestones and r.node and self.api.get_node(r.node) is None:
            r.gone_outcome = r.gone_outcome or "removed by consolidation"
            self._mark(r, Milestone.NODE_GONE, self.elapsed())
            r.status = Status.OK

    def _new_claims(self, r: PoolResult, claims: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
        return [c for c in claims if c["metadata"].get("labels", {}).get(NODEPOOL_LABEL) == r.pool
                and c["metadata"]["name"] not in r.existing_claims]

    def _nominated(self, r: PoolResult, new: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
        """The new claim Karpenter last nominated the pod for (its `Nominated` events), if any."""
        if not r.pod:
            return None
        events = [e for e in self.api.events_for("Pod", r.pod, self.plan.namespace) if e.get("reason") == "Nominated"]
        events.sort(key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "")
        for e in reversed(events):
            for name in re.findall(r"nodeclaim/([a-z0-9.-]+)", e.get("message", "")):
                claim = next((c for c in new if c["metadata"]["name"] == name), None)
                if claim is not None:
                    return claim
        return None

    def _claim_for(self, r: PoolResult, claims: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
        """The NodeClaim launched for this pool's pod: new since the run started (the one Karpenter nominated
        the pod for, when several are new)."""
        new = self._new_claims(r, claims)
        if len(new) > 1 and (nominated := self._nominated(r, new)) is not None:
            return nominated
        return min(new, key=lambda c: c["metadata"].get("creationTimestamp", "")) if new else None

    def _after_scale_down(self, r: PoolResult) -> None:
        # Budgets' windows are evaluated again now: one may have opened or closed since the run started.
        c = r.consolidation = consolidation_of(r.disruption, self.settings.now())
        if c is None or c.state == ConsolidationState.ENABLED:
            return
        if c.state == ConsolidationState.MAYBE_BLOCKED:
            r.notes.append(f"consolidation may be blocked by a budget ({c.detail}); waiting for it")
            return
        r.gone_outcome = "consolidation disabled" if c.state == ConsolidationState.DISABLED else "blocked by a budget"
        r.notes.append(f"{r.gone_outcome} ({c.detail}): not waiting for the node to go")
        r.status = Status.OK
        if self.settings.remove_kept_nodes and r.node and r.nodeclaim:
            self._remove_node(r)

    def _remove_node(self, r: PoolResult) -> None:
        assert r.node is not None and r.nodeclaim is not None
        # Wait briefly for the pause pod to go, then delete the NodeClaim only if nothing else moved onto the node.
        deadline = self.elapsed() + self.settings.timeouts.running
        while True:
            ours = [p for p in self.api.pods_on_node(r.node)
                    if p["metadata"].get("labels", {}).get(RUN_LABEL) == self.plan.run_id]
            if not ours or self.elapsed() > deadline:
                break
            self.settings.sleep(self.settings.poll)
        if foreign := self._foreign_pods(r.node):
            r.notes.append(f"node {r.node} kept: it now runs {', '.join(foreign[:3])}")
            return
        self.api.delete_nodeclaim(r.nodeclaim)
        r.notes.append(f"deleted NodeClaim {r.nodeclaim} so its instance does not run on")

    def _next_milestone(self, r: PoolResult) -> Milestone:
        return next((m for m in MILESTONES if m not in r.milestones and m != Milestone.SCALED_TO_ZERO),
                    Milestone.NODE_GONE)

    def _fail(self, r: PoolResult, milestone: Milestone, error: str) -> None:
        r.status, r.phase, r.error = Status.FAILED, milestone, error
        self.log(f"{r.pool}: FAILED at {milestone}: {error}")
        if r.milestones:  # stop asking for capacity: a pending pod would keep Karpenter launching
            self.api.scale_deployment(self.plan.namespace, r.plan.deployment["metadata"]["name"], 0)

    def _foreign_pods(self, node: str) -> list[str]:
        """Other workloads' pods on the node (DaemonSets and static pods aside)."""
        return [f"{p['metadata'].get('namespace')}/{p['metadata']['name']}" for p in self.api.pods_on_node(node)
                if not _daemon_or_mirror(p) and p["metadata"].get("labels", {}).get(RUN_LABEL) != self.plan.run_id]

    def _stalled(self, r: PoolResult, claims: Sequence[Mapping[str, Any]]) -> None:
        milestone = self._next_milestone(r)
        if milestone == Milestone.NODE_GONE and r.node and (foreign := self._foreign_pods(r.node)):
            # Not empty, so not Karpenter's to remove: the launch was proven, and the node is in use.
            r.status, r.gone_outcome = Status.OK, "kept: runs other pods"
            r.notes.append(f"node {r.node} was not removed: other workloads' pods moved onto it "
                           f"({', '.join(foreign[:3])})")
            return
        phase = PHASE_OF.get(milestone, "gone")
        limit = getattr(self.settings.timeouts, phase)
        if milestone == Milestone.NODE_GONE and r.consolidation and r.consolidation.consolidate_after:
            why = (f"node {r.node} still there {limit:g}s after consolidateAfter "
                   f"({r.consolidation.consolidate_after:g}s)")
            if r.consolidation.state == ConsolidationState.MAYBE_BLOCKED:
                why += f"; {r.consolidation.detail}"
        else:
            why = f"no {milestone} within {limit:g}s"
        r.diagnostics = self._diagnose(r, claims)
        self._fail(r, milestone, why)

    def _diagnose(self, r: PoolResult, claims: Sequence[Mapping[str, Any]]) -> list[str]:
        lines: list[str] = []
        mine = [c for c in claims if c["metadata"]["name"] == r.nodeclaim] if r.nodeclaim else [
            c for c in claims if c["metadata"].get("labels", {}).get(NODEPOOL_LABEL) == r.pool
            and c["metadata"]["name"] not in r.existing_claims]
        events: list[Mapping[str, Any]] = []
        for c in mine:
            lines += [f"NodeClaim {c['metadata']['name']}: {line}" for line in _claim_problems(c)]
            events += self.api.events_for("NodeClaim", c["metadata"]["name"])
        if r.pod:
            events += self.api.events_for("Pod", r.pod, self.plan.namespace)
        else:
            events += [e for e in self.api.namespace_events(self.plan.namespace) if e.get("type") == "Warning"]
        events += self.api.events_for("NodePool", r.pool)
        if r.node:
            events += self.api.events_for("Node", r.node)
        seen: set[str] = set()
        for e in events:
            if e.get("type") != "Warning" and e.get("reason") not in ("FailedScheduling", "Nominated"):
                continue
            obj = e.get("involvedObject") or {}
            line = f"event {obj.get('kind')}/{obj.get('name')}: {e.get('reason')}: {e.get('message', '')}"
            if line not in seen:
                seen.add(line)
                lines.append(line)
        lines += [f"hint: {h}" for h in hints_for(lines)]
        return lines

    def _cleanup(self) -> list[str]:
        try:
            deleted = self.api.delete_namespace(self.plan.namespace)
        except KubeError as exc:
            return [f"could not delete namespace {self.plan.namespace}: {exc}; run `smoke --cleanup` later"]
        return [f"deleted namespace {self.plan.namespace}"] if deleted else []


def _claim_problems(claim: Mapping[str, Any]) -> list[str]:
    """The claim's lifecycle conditions that are not true, with reason and message."""
    out = []
    for kind in CONDITIONS:
        cond = _condition(claim, kind)
        if cond is not None and cond.get("status") != "True":
            out.append(f"{kind}={cond.get('status')} {cond.get('reason', '')}: {cond.get('message', '')}".rstrip(": "))
    return out


def _daemon_or_mirror(pod: Mapping[str, Any]) -> bool:
    meta = pod.get("metadata") or {}
    if MIRROR_POD_ANNOTATION in (meta.get("annotations") or {}):
        return True
    return any(o.get("kind") == "DaemonSet" for o in meta.get("ownerReferences") or ())


def cleanup_leftovers(api: KubeApi) -> list[str]:
    """Delete every namespace an earlier (interrupted) run left behind; returns their names."""
    names = [ns["metadata"]["name"] for ns in api.list_namespaces(RUN_LABEL)]
    for name in names:
        api.delete_namespace(name)
    return names
