"""Kubernetes manifests as a simulate workload: what `kubectl get -o yaml` prints, or a multi-document file.

Read: `Deployment`, `StatefulSet`, `ReplicaSet`, `Job`, `CronJob` (its job template), `Pod` and `DaemonSet`
(`apps/v1`, `batch/v1`, `v1`), each alone, as `---`-separated documents, or as the items of a `kind: List`.
Only what placement depends on is read: the replica count (a Job's `parallelism`, a Pod is one), the pod
template's container requests (a limit stands in for a missing request, as the API server defaults it; init
containers count by their largest, sidecars add; `overhead` adds), `nodeSelector`, `tolerations`, and required
node affinity written as single-value `In` terms (two or more `kubernetes.io/arch` values read as a multi-arch
image). Everything else the API server or kubectl adds (`status`, `managedFields`, annotations, probes, ...) is
ignored. An object owned by another object of the same input (a Deployment's ReplicaSet, its Pods) is counted
once, through its owner; a Pod of a DaemonSet counts as that DaemonSet (once), static pods and finished Pods are
left out.

Any other kind is refused, naming the document, its kind and name: a Service or ConfigMap runs no pods, and
reading only part of a file would be a misleading what-if.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from eks_karpenter.config.errors import Issue, KeyPath, line_of, render_path
from eks_karpenter.labels import ARCH
from eks_karpenter.quantities import quantity_value

REPLICATED = {"Deployment": "apps/v1", "StatefulSet": "apps/v1", "ReplicaSet": "apps/v1"}
SUPPORTED = ("Deployment", "StatefulSet", "ReplicaSet", "Job", "CronJob", "Pod", "DaemonSet")
_NAME_CHARS = re.compile(r"[^a-z0-9-]+")
_ARCHES = frozenset({"amd64", "arm64"})


def is_manifest(value: Any) -> bool:
    """Whether a YAML document is a Kubernetes object (it has `apiVersion` and `kind`)."""
    return isinstance(value, dict) and "kind" in value and "apiVersion" in value


@dataclass
class _Reading:
    """The workload read so far, and every problem with its line."""

    deployments: list[dict[str, Any]] = field(default_factory=list)
    daemon_sets: list[dict[str, Any]] = field(default_factory=list)
    origins: list[str] = field(default_factory=list)
    """Each deployment entry's object, as messages name it."""
    problems: list[tuple[int | None, Issue]] = field(default_factory=list)


@dataclass(frozen=True)
class _Object:
    body: dict[str, Any]
    label: str
    lines: dict[KeyPath, int]
    at: KeyPath
    """The object's key path in its document (`()`, or `("items", 3)` in a List)."""

    def line(self, path: KeyPath = ()) -> int | None:
        return line_of(self.lines, self.at + path)

    def problem(self, path: KeyPath, message: str, value: Any = None, has_value: bool = False) -> \
            tuple[int | None, Issue]:
        where = f"{render_path(path)}: " if path else ""
        return self.line(path), Issue((), f"{self.label}: {where}{message}", value, has_value)


def _objects(docs: list[tuple[Any, dict[KeyPath, int]]], problems: list[tuple[int | None, Issue]]) -> list[_Object]:
    out: list[_Object] = []
    for n, (body, lines) in enumerate(docs, 1):
        where = f"document {n}" if len(docs) > 1 else "the document"
        if not is_manifest(body):
            problems.append((line_of(lines, ()), Issue((), f"{where}: not a Kubernetes object (no apiVersion and "
                                                        "kind), and a workload file's keys cannot be mixed with "
                                                        "manifests", has_value=False)))
            continue
        if body["kind"] == "List" or str(body["kind"]).endswith("List"):
            items = body.get("items") or []
            if not isinstance(items, list):
                problems.append((line_of(lines, ("items",)), Issue((), f"{where}: items: expected a list",
                                                                   items)))
                continue
            for i, item in enumerate(items):
                label = f"{where}, items[{i}]"
                if not is_manifest(item):
                    problems.append((line_of(lines, ("items", i)), Issue(
                        (), f"{label}: not a Kubernetes object (no apiVersion and kind)", has_value=False)))
                    continue
                out.append(_Object(item, f"{label} ({item['kind']} {_name(item)})", lines, ("items", i)))
        else:
            out.append(_Object(body, f"{where} ({body['kind']} {_name(body)})", lines, ()))
    return out


def _meta(body: dict[str, Any]) -> dict[str, Any]:
    meta = body.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _name(body: dict[str, Any]) -> str:
    name = _meta(body).get("name")
    return str(name) if name else "(no name)"


def _owned_elsewhere(body: dict[str, Any], uids: set[str], names: set[tuple[str, str]]) -> bool:
    """Whether the object's controller is another object of the input (then it is counted through it)."""
    owners = _meta(body).get("ownerReferences")
    for ref in owners if isinstance(owners, list) else []:
        if isinstance(ref, dict) and ref.get("controller", True) and (
                ref.get("uid") in uids or (str(ref.get("kind")), str(ref.get("name"))) in names):
            return True
    return False


def _node_agent(body: dict[str, Any]) -> str | None:
    """What a Pod runs as when it is not a workload to place: `DaemonSet <name>` (one on every node), `Node` (a
    static pod of the kubelet), or None."""
    for ref in _meta(body).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller", True) and ref.get("kind") in ("DaemonSet", "Node"):
            return "Node" if ref["kind"] == "Node" else f"DaemonSet {ref.get('name')}"
    return None


def read_manifests(docs: list[tuple[Any, dict[KeyPath, int]]]) -> tuple[dict[str, Any], list[str],
                                                                          list[tuple[int | None, Issue]]]:
    """Manifest documents -> (a workload file's content, the object each deployment entry came from, problems)."""
    reading = _Reading()
    objects = _objects(docs, reading.problems)
    unsupported = [o for o in objects if o.body["kind"] not in SUPPORTED]
    for o in unsupported:
        reading.problems.append(o.problem(("kind",), f"{o.body['kind']} is not supported: simulate places the pods "
                                          f"of {', '.join(SUPPORTED)} objects (alone, as documents of one file, "
                                          "or in a List); leave the others out, e.g. `kubectl get "
                                          "deploy,sts,job,cronjob,ds -o yaml`"))
    uids = {str(meta["uid"]) for o in objects if (meta := _meta(o.body)).get("uid")}
    names = {(str(o.body["kind"]), _name(o.body)) for o in objects}
    agents: set[str] = set()
    for o in objects:
        if o in unsupported or _owned_elsewhere(o.body, uids, names):
            continue
        agent = _node_agent(o.body) if o.body["kind"] == "Pod" else None
        if agent == "Node" or agent in agents:
            continue  # a static pod, or a DaemonSet already counted: not a pod to place
        if agent is not None:  # a DaemonSet's pod (`kubectl get pods -A`): the DaemonSet, once
            agents.add(agent)
            o = _Object({**o.body, "kind": "DaemonSet", "metadata": {"name": agent.split(" ", 1)[1]},
                         "spec": {"template": {"spec": o.body.get("spec")}}}, o.label, o.lines, o.at)
        _read_object(o, reading)
    used: set[str] = set()
    for entry, origin in zip(reading.deployments, reading.origins, strict=True):
        entry["name"] = _unique(entry["name"], origin, used)
    if not reading.problems and not reading.deployments:
        reading.problems.append((None, Issue((), "no pods to place: the manifests hold no Deployment, StatefulSet, "
                                             "ReplicaSet, Job, CronJob or running Pod", has_value=False)))
    content: dict[str, Any] = {"deployments": reading.deployments}
    if reading.daemon_sets:
        content["daemonSets"] = reading.daemon_sets
    return content, reading.origins, reading.problems


def _unique(name: str, origin: str, used: set[str]) -> str:
    """A workload entry name (lowercase, dashes, at most 63 characters) not yet taken."""
    base = _NAME_CHARS.sub("-", name.lower()).strip("-")[:63].strip("-") or "pod"
    out, n = base, 1
    while out in used:
        n += 1
        out = f"{base[:60].rstrip('-')}-{n}"
    used.add(out)
    return out


def _read_object(o: _Object, reading: _Reading) -> None:
    kind, spec = o.body["kind"], o.body.get("spec")
    pod: Any
    spec_path: KeyPath = ("spec",)
    if not isinstance(spec, dict):
        reading.problems.append(o.problem(spec_path, "expected a mapping", spec, True))
        return
    replicas_key: KeyPath | None = ("replicas",)
    if kind == "Pod":
        phase = (o.body.get("status") or {}).get("phase") if isinstance(o.body.get("status"), dict) else None
        if phase in ("Succeeded", "Failed"):
            return
        pod_path, pod, replicas_key = spec_path, spec, None
    elif kind == "CronJob":
        job = (spec.get("jobTemplate") or {}).get("spec") if isinstance(spec.get("jobTemplate"), dict) else None
        spec_path = ("spec", "jobTemplate", "spec")
        if not isinstance(job, dict):
            reading.problems.append(o.problem(spec_path, "expected a mapping (the job template's spec)", job, True))
            return
        spec, replicas_key = job, ("parallelism",)
        template = job.get("template")
        pod_path, pod = (*spec_path, "template", "spec"), template.get("spec") if isinstance(template, dict) else None
    else:
        if kind == "Job":
            replicas_key = ("parallelism",)
        elif kind == "DaemonSet":
            replicas_key = None
        pod_path = ("spec", "template", "spec")
        template = spec.get("template")
        pod = template.get("spec") if isinstance(template, dict) else None
    if not isinstance(pod, dict):
        reading.problems.append(o.problem(pod_path, "expected the pod template's spec (a mapping)", pod, True))
        return
    replicas = 1
    if replicas_key is not None and spec.get(replicas_key[0]) is not None:
        value = spec[replicas_key[0]]
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            reading.problems.append(o.problem((*spec_path, *replicas_key), "expected a whole number, 0 or more",
                                              value, True))
            return
        replicas = value
    before = len(reading.problems)
    cpu, memory = _requests(o, pod, pod_path, reading.problems)
    entry: dict[str, Any] = {"name": _name(o.body), "cpu": _text(cpu), "memory": _text(memory)}
    if kind == "DaemonSet":
        if len(reading.problems) == before:
            reading.daemon_sets.append(entry)
        return
    entry["replicas"] = replicas
    scheduling = _scheduling(o, pod, pod_path, reading.problems)
    if len(reading.problems) == before:
        reading.deployments.append({**entry, **scheduling})
        reading.origins.append(o.label)


def _text(value: Decimal) -> str:
    return format(value.normalize(), "f")


def _quantity(o: _Object, value: Any, path: KeyPath, problems: list[tuple[int | None, Issue]]) -> Decimal:
    text = str(value) if isinstance(value, int | float | str) and not isinstance(value, bool) else None
    try:
        if text is None:
            raise ValueError
        return quantity_value(text.strip())
    except ValueError:
        problems.append(o.problem(path, "not a Kubernetes quantity (like 500m, 1, 512Mi)", value, True))
        return Decimal(0)


def _container_requests(o: _Object, container: Any, path: KeyPath,
                        problems: list[tuple[int | None, Issue]]) -> tuple[Decimal, Decimal]:
    resources = container.get("resources") if isinstance(container, dict) else None
    if not isinstance(resources, dict):
        return Decimal(0), Decimal(0)
    out: list[Decimal] = []
    for resource in ("cpu", "memory"):
        value: Any = None
        where: KeyPath = path
        for kind in ("requests", "limits"):  # the API server defaults a missing request to the limit
            block = resources.get(kind)
            if isinstance(block, dict) and block.get(resource) is not None:
                value, where = block[resource], (*path, "resources", kind, resource)
                break
        out.append(Decimal(0) if value is None else _quantity(o, value, where, problems))
    return out[0], out[1]


def _requests(o: _Object, pod: dict[str, Any], path: KeyPath,
              problems: list[tuple[int | None, Issue]]) -> tuple[Decimal, Decimal]:
    """The pod's effective requests: its containers' (and sidecars') sum, or its largest init container's if
    that is larger, plus the runtime class's `overhead`."""
    cpu = memory = Decimal(0)
    containers = pod.get("containers")
    if not isinstance(containers, list) or not containers:
        problems.append(o.problem((*path, "containers"), "expected a list of containers", containers, True))
        return cpu, memory
    for i, c in enumerate(containers):
        c_cpu, c_mem = _container_requests(o, c, (*path, "containers", i), problems)
        cpu, memory = cpu + c_cpu, memory + c_mem
    init_cpu = init_mem = Decimal(0)
    inits = pod.get("initContainers")
    for i, c in enumerate(inits if isinstance(inits, list) else []):
        c_cpu, c_mem = _container_requests(o, c, (*path, "initContainers", i), problems)
        if isinstance(c, dict) and c.get("restartPolicy") == "Always":  # a sidecar runs beside the containers
            cpu, memory = cpu + c_cpu, memory + c_mem
        else:
            init_cpu, init_mem = max(init_cpu, c_cpu), max(init_mem, c_mem)
    cpu, memory = max(cpu, init_cpu), max(memory, init_mem)
    overhead = pod.get("overhead")
    if isinstance(overhead, dict):
        for resource in ("cpu", "memory"):
            if overhead.get(resource) is not None:
                extra = _quantity(o, overhead[resource], (*path, "overhead", resource), problems)
                cpu, memory = (cpu + extra, memory) if resource == "cpu" else (cpu, memory + extra)
    return cpu, memory


def _scheduling(o: _Object, pod: dict[str, Any], path: KeyPath,
                problems: list[tuple[int | None, Issue]]) -> dict[str, Any]:
    """`nodeSelector`, `tolerations` and `architecture` of a workload entry, from the pod spec."""
    out: dict[str, Any] = {}
    selector = pod.get("nodeSelector") or {}
    if not isinstance(selector, dict):
        problems.append(o.problem((*path, "nodeSelector"), "expected a mapping of label to value", selector, True))
        return out
    selector = {str(k): str(v) for k, v in selector.items()}
    tolerations = []
    for i, t in enumerate(pod.get("tolerations") or []):
        if not isinstance(t, dict):
            problems.append(o.problem((*path, "tolerations", i), "expected a mapping", t, True))
            continue
        tolerations.append({k: t[k] for k in ("key", "operator", "value", "effect") if t.get(k) not in (None, "")})
    arches = _required_affinity(o, pod, path, selector, problems)
    if arches is not None and len(arches) > 1:
        out["architecture"] = "any"
    elif arches:
        selector.setdefault(ARCH, next(iter(arches)))
    if selector.get(ARCH) in _ARCHES:
        out["architecture"] = selector[ARCH]
    if selector:
        out["nodeSelector"] = selector
    if tolerations:
        out["tolerations"] = tolerations
    return out


def _required_affinity(o: _Object, pod: dict[str, Any], path: KeyPath, selector: dict[str, str],
                       problems: list[tuple[int | None, Issue]]) -> frozenset[str] | None:
    """Fold required node affinity into `selector`; return the architectures it admits (None: not said).

    Preferred affinity is a preference, not a constraint, and is ignored, as are pod (anti-)affinity and topology
    spread (the simulator packs by requests)."""
    affinity = pod.get("affinity")
    node = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    required = node.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(node, dict) else None
    if not isinstance(required, dict):
        return None
    where: KeyPath = (*path, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                      "nodeSelectorTerms")
    terms = required.get("nodeSelectorTerms") or []
    if len(terms) != 1 or not isinstance(terms[0], dict) or terms[0].get("matchFields"):
        problems.append(o.problem(where, "not supported: simulate reads one term of single-value `In` "
                                  "expressions (use nodeSelector, or leave the object out)", terms, True))
        return None
    arches: frozenset[str] | None = None
    for i, expr in enumerate(terms[0].get("matchExpressions") or []):
        key = expr.get("key") if isinstance(expr, dict) else None
        values = expr.get("values") if isinstance(expr, dict) else None
        op = expr.get("operator") if isinstance(expr, dict) else None
        if key == ARCH and op == "In" and isinstance(values, list) and set(values) <= _ARCHES and values:
            arches = frozenset(values)
        elif op == "In" and isinstance(values, list) and len(values) == 1:
            selector.setdefault(str(key), str(values[0]))
        else:
            problems.append(o.problem((*where, 0, "matchExpressions", i), "not supported: simulate reads "
                                      "single-value `In` expressions (and `kubernetes.io/arch In` any of amd64, "
                                      "arm64)", expr, True))
    return arches
