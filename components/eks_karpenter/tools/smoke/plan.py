"""Pure planning of the smoke test: per NodePool, one Deployment of pause containers that only that pool can take,
sized to fill most of the pool's cheapest admitted instance type. Manifests are plain dicts.

Why one replica at ~80% of the cheapest type: one pod never needs more than one node, and a pod that large does
not fit in the spare room of the pool's other nodes (which would prove nothing), while the cheapest type, and
every larger one, can still hold it next to the DaemonSets. The runner still checks that the pod ran on a node
launched for it.
"""

from __future__ import annotations

import copy
import dataclasses
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from eks_karpenter.catalogue import Admission, InstanceType, Requirement, admitted, admitted_for, requirements_of
from eks_karpenter.catalogue.match import WINDOWS_FAMILIES, allowed_values, ami_family_of
from eks_karpenter.labels import ARCH, CAPACITY_TYPE, DO_NOT_DISRUPT, NODEPOOL_LABEL, OS
from eks_karpenter.platform.nodepool.workload import tolerates, toleration_for
from eks_karpenter.quantities import cpu_millis, memory_bytes
from eks_karpenter.tools.smoke.config import SmokeSizing
from eks_karpenter.versions import PAUSE_IMAGE

MIB = 1024 * 1024

RUN_LABEL = "eks-karpenter.dev/smoke-run"
"""Label on the run's namespace (and its objects): `--cleanup` deletes every namespace carrying it."""
POOL_LABEL = "eks-karpenter.dev/smoke-pool"
NAMESPACE_PREFIX = "eks-karpenter-smoke-"
CAPACITY_PREFERENCE = ("spot", "on-demand", "reserved")
"""Spot first when the pool allows it: that is what its workloads get, and what has the most to prove (the spot
service-linked role, spot capacity in the pool's zones)."""


class SmokePlanError(Exception):
    """A pool cannot be smoke-tested as configured (unknown name, nothing admitted)."""


def new_run_id(now: datetime | None = None) -> str:
    """A unique, sortable run id usable in a namespace name: `20261123-103500-a1b2c3`."""
    now = now or datetime.now(UTC)
    return f"{now:%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


def namespace_name(run_id: str) -> str:
    return f"{NAMESPACE_PREFIX}{run_id}"


@dataclass(frozen=True)
class PoolPlan:
    """The smoke Deployment of one pool and the choices behind it."""

    pool: str
    instance_type: InstanceType
    """The pool's cheapest admitted type (on-demand price): what the requests are sized from."""
    capacity_type: str
    arch: str
    os: str
    cpu_millis: int
    memory_mib: int
    disruption: Mapping[str, Any]
    """The pool's `spec.disruption` as rendered (the runner prefers the live object's)."""
    deployment: dict[str, Any]
    candidates: tuple[InstanceType, ...] = ()
    """Every admitted priced type, cheapest first (to size up from when existing nodes have room)."""

    @property
    def pod_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = self.deployment["spec"]["template"]["spec"]
        return spec


@dataclass(frozen=True)
class SmokePlan:
    stack: str
    run_id: str
    namespace: str
    pools: tuple[PoolPlan, ...]

    def namespace_manifest(self) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": self.namespace, "labels": {RUN_LABEL: self.run_id,
                                                                "eks-karpenter.dev/stack": self.stack}}}

    def manifests(self) -> list[dict[str, Any]]:
        return [self.namespace_manifest(), *(p.deployment for p in self.pools)]


def _os_of(class_manifest: Mapping[str, Any] | None) -> str:
    return "windows" if ami_family_of(class_manifest) in WINDOWS_FAMILIES else "linux"


def size_requests(t: InstanceType, sizing: SmokeSizing) -> tuple[int, int]:
    """CPU millicores and memory MiB for the pause pod on type `t`: `fill` of its allocatable, less the
    DaemonSet allowance when that is smaller; never below half of the allocatable (tiny types)."""
    cpu = min(int(t.cpu_millis * sizing.fill), t.cpu_millis - sizing.daemonset_cpu_millis)
    memory = min(int(t.memory_mib * sizing.fill), t.memory_mib - sizing.daemonset_memory_mib)
    cpu = max(cpu, t.cpu_millis // 2) // 10 * 10
    memory = max(memory, t.memory_mib // 2)
    return cpu, memory


def _deployment(pool: str, namespace: str, run_id: str, selector: dict[str, str],
                tolerations: list[dict[str, Any]], cpu: int, memory: int, os: str) -> dict[str, Any]:
    labels = {RUN_LABEL: run_id, POOL_LABEL: pool}
    requests = {"cpu": f"{cpu}m", "memory": f"{memory}Mi"}
    container: dict[str, Any] = {"name": "pause", "image": PAUSE_IMAGE,
                                 "resources": {"requests": requests, "limits": dict(requests)}}
    pod: dict[str, Any] = {
        "nodeSelector": selector,
        "terminationGracePeriodSeconds": 0,
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "containers": [container],
    }
    if tolerations:
        pod["tolerations"] = tolerations
    if os == "linux":
        # Admitted by Pod Security `restricted` namespaces too.
        pod["securityContext"] = {"runAsNonRoot": True, "runAsUser": 65535,
                                  "seccompProfile": {"type": "RuntimeDefault"}}
        container["securityContext"] = {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                                        "capabilities": {"drop": ["ALL"]}}
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": f"smoke-{pool}", "namespace": namespace, "labels": dict(labels)},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": dict(labels)},
            "strategy": {"type": "Recreate"},
            "template": {
                # do-not-disrupt: the node is not consolidated or replaced while the test pod runs on it.
                "metadata": {"labels": {**labels, "app.kubernetes.io/name": "eks-karpenter-smoke"},
                             "annotations": {DO_NOT_DISRUPT: "true"}},
                "spec": pod,
            },
        },
    }


def plan_pool(pool_manifest: Mapping[str, Any], class_manifest: Mapping[str, Any] | None, namespace: str,
              run_id: str, sizing: SmokeSizing | None = None, capacity_type: str | None = None) -> PoolPlan:
    """The smoke Deployment for one rendered NodePool (and its EC2NodeClass)."""
    sizing = sizing or SmokeSizing()
    name = str(pool_manifest["metadata"]["name"])
    reqs = requirements_of(pool_manifest)
    capacities = allowed_values(reqs, CAPACITY_TYPE, CAPACITY_PREFERENCE)
    if capacity_type is not None:
        if capacity_type not in capacities:
            raise SmokePlanError(f"pool {name!r} does not allow capacity type {capacity_type!r} "
                                 f"(allows {', '.join(capacities) or 'none'})")
        capacities = [capacity_type]
    if not capacities:
        raise SmokePlanError(f"pool {name!r} allows no capacity type")
    admission = admitted_for(pool_manifest, class_manifest)
    cheapest = admission.cheapest()
    if cheapest is None:
        raise SmokePlanError(f"pool {name!r} admits no priced instance type from the catalogue")
    cpu, memory = size_requests(cheapest, sizing)
    os = _os_of(class_manifest)
    selector = {NODEPOOL_LABEL: name, ARCH: cheapest.arch, OS: os, CAPACITY_TYPE: capacities[0]}
    spec = pool_manifest["spec"]["template"]["spec"]
    # startupTaints are not tolerated: the node's owner removes them, and the pod must wait for that.
    tolerations = [toleration_for(t) for t in spec.get("taints") or ()]
    deployment = _deployment(name, namespace, run_id, selector, tolerations, cpu, memory, os)
    candidates = tuple(sorted(admission.priced, key=lambda t: (t.on_demand_hourly, t.name)))
    return PoolPlan(name, cheapest, capacities[0], cheapest.arch, os, cpu, memory,
                    dict(pool_manifest["spec"].get("disruption") or {}), deployment, candidates)


def rendered_pools(cfg: Any) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(NodePool, EC2NodeClass) manifests of a validated `StackConfig`, as `pulumi up` applies them."""
    from eks_karpenter.platform.migration.plan import with_opt_in_taint
    from eks_karpenter.platform.nodepool.manifests import render_node_class, render_node_pool

    classes = {c.name: c for c in cfg.node_classes}
    out = []
    # In migration phase 1 the pools carry the opt-in taint: the test pods tolerate it like opted-in workloads.
    for pool in (with_opt_in_taint(p, getattr(cfg, "migration", None)) for p in cfg.node_pools):
        # The cluster name and role only fill selector tags and `role`; admission reads the AMI family.
        node_class = render_node_class(classes[pool.node_class], cfg.cluster.name, "node-role", {})
        out.append((render_node_pool(pool), node_class))
    return out


def sized_above(plan: PoolPlan, free_cpu_millis: int, sizing: SmokeSizing | None = None) -> PoolPlan | None:
    """The pool's plan resized so the pod needs more CPU than `free_cpu_millis` (the most any existing node of the
    pool has free), on the cheapest admitted type that can hold that next to the DaemonSets; the plan itself when
    it already does; None when no admitted type can.

    Spare room on the pool's existing nodes would absorb the pod and prove nothing. (A `kubernetes.io/hostname
    NotIn` affinity cannot keep it off them: Karpenter ignores pods with any hostname affinity, and such a pod would
    never get a node.)"""
    if plan.cpu_millis > free_cpu_millis:
        return plan
    sizing = sizing or SmokeSizing()
    for t in plan.candidates:
        if t.arch != plan.arch or t.cpu_millis - sizing.daemonset_cpu_millis <= free_cpu_millis:
            continue
        cpu, memory = size_requests(t, sizing)
        cpu = max(cpu, (free_cpu_millis // 10 + 1) * 10)
        deployment = copy.deepcopy(plan.deployment)
        container = deployment["spec"]["template"]["spec"]["containers"][0]
        requests = {"cpu": f"{cpu}m", "memory": f"{memory}Mi"}
        container["resources"] = {"requests": requests, "limits": dict(requests)}
        return dataclasses.replace(plan, instance_type=t, cpu_millis=cpu, memory_mib=memory, deployment=deployment)
    return None


def plan_smoke(stack: str, pools: Sequence[tuple[Mapping[str, Any], Mapping[str, Any] | None]],
               only: Sequence[str] = (), run_id: str | None = None, sizing: SmokeSizing | None = None,
               capacity_type: str | None = None) -> SmokePlan:
    """The whole run: a namespace and one Deployment per pool (or per pool named in `only`)."""
    run_id = run_id or new_run_id()
    namespace = namespace_name(run_id)
    names = [str(p["metadata"]["name"]) for p, _ in pools]
    unknown = [n for n in only if n not in names]
    if unknown:
        raise SmokePlanError(f"no NodePool named {', '.join(map(repr, unknown))} in stack {stack!r} "
                             f"(pools: {', '.join(names)})")
    chosen = [(p, c) for p, c in pools if not only or p["metadata"]["name"] in only]
    return SmokePlan(stack, run_id, namespace,
                     tuple(plan_pool(p, c, namespace, run_id, sizing, capacity_type) for p, c in chosen))


# --- Who can schedule a pod: the check behind "only that pool can take it" ------------------------------------

def unschedulable_reasons(pod_spec: Mapping[str, Any], pool_manifest: Mapping[str, Any],
                          class_manifest: Mapping[str, Any] | None = None) -> list[str]:
    """Why a node of this pool could never run the pod (empty when it could): node selector against the pool's
    name, labels and requirements; tolerations against its taints (not startup taints); requests against the
    allocatable of the instance types the pool and the selector both admit."""
    name = pool_manifest["metadata"]["name"]
    template = pool_manifest["spec"]["template"]
    labels = {**(template.get("metadata") or {}).get("labels", {}), NODEPOOL_LABEL: name}
    reasons: list[str] = []
    reqs = requirements_of(pool_manifest)
    extra: list[Requirement] = []
    for key, value in (pod_spec.get("nodeSelector") or {}).items():
        if key in labels:
            if labels[key] != value:
                reasons.append(f"nodeSelector {key}={value}: the pool's nodes have {key}={labels[key]}")
            continue
        if key == OS:
            if value != _os_of(class_manifest):
                reasons.append(f"nodeSelector {key}={value}: the pool's AMI family runs {_os_of(class_manifest)}")
            continue
        on_key = [r for r in reqs if r.key == key]
        if not on_key:
            reasons.append(f"nodeSelector {key}={value}: the pool neither labels nor requires {key}")
        elif key == CAPACITY_TYPE and value not in allowed_values(reqs, key, CAPACITY_PREFERENCE):
            reasons.append(f"nodeSelector {key}={value}: the pool does not allow it")
        extra.append(Requirement(key, "In", (str(value),)))
    for taint in template["spec"].get("taints") or ():
        if taint["effect"] in ("NoSchedule", "NoExecute") and not any(
                tolerates(t, taint) for t in pod_spec.get("tolerations") or ()):
            reasons.append(f"taint {taint['key']}={taint.get('value', '')}:{taint['effect']} is not tolerated")
    admission: Admission = admitted([*reqs, *extra], ami_family_of(class_manifest))
    if not admission.types:
        reasons.append("no instance type satisfies both the pool's requirements and the node selector")
    else:
        cpu = sum(cpu_millis(c["resources"]["requests"]["cpu"]) for c in pod_spec["containers"])
        mem = sum(memory_bytes(c["resources"]["requests"]["memory"]) for c in pod_spec["containers"]) // MIB
        if not any(t.cpu_millis >= cpu and t.memory_mib >= mem for t in admission.types):
            reasons.append(f"no admitted instance type has {cpu}m CPU and {mem}Mi memory allocatable")
    return reasons
