"""A fake Kubernetes API server (loopback only, ephemeral port) with a simulated Deployment controller, scheduler
and Karpenter, speaking exactly the endpoints the smoke test uses, for tests without a cluster.

Times are real seconds here; the smoke test under test runs on a clock `SCALE` times faster, so a simulated step of
20 ms is 2 s to it. Each pool's behaviour is a `Behaviour`: where it stalls and what it says when it does.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
import shutil
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

SCALE = 100.0
"""Virtual seconds (the smoke test's clock) per real second."""


@dataclass
class Behaviour:
    """How the simulated cluster treats one pool's pod."""

    step: float = 0.02
    """Real seconds between milestones."""
    stall: str | None = None
    """`nodeclaim`, `launched`, `ready`, `running` or `gone`: the milestone never reached."""
    claim_conditions: list[dict[str, Any]] = field(default_factory=list)
    """Conditions set on the NodeClaim when it stalls (`launched`, `ready`)."""
    events: list[tuple[str, str, str]] = field(default_factory=list)
    """(kind, reason, message) Warning events emitted when it stalls, about the pod, NodeClaim or NodePool."""
    bind_existing: str | None = None
    """Bind the pod to this existing node instead of launching one."""
    ice_first: bool = False
    """The first NodeClaim fails to launch (insufficient capacity) and is deleted; the next one launches."""
    squatter: bool = False
    """Another workload's pod lands on the new node while the test pod runs there."""
    decoy: bool = False
    """Another workload's NodeClaim for the pool appears just before the pod's own."""


@dataclass(frozen=True)
class TlsFiles:
    """A self-signed certificate for 127.0.0.1 (its own certificate authority) and its key, as PEM files."""

    cert: Path
    key: Path

    @property
    def ca_pem(self) -> bytes:
        return self.cert.read_bytes()


def self_signed(folder: Path, name: str = "cluster") -> TlsFiles | None:
    """A new self-signed certificate for 127.0.0.1, made with the `openssl` command (None without it)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        return None
    files = TlsFiles(folder / f"{name}.crt", folder / f"{name}.key")
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                    f"/CN={name}", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(files.key),
                    "-out", str(files.cert)], check=True, capture_output=True)
    return files


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _label_terms(selector: str) -> list[str]:
    """A selector's terms: split on commas outside a set (`name in (a,b)`)."""
    return [t.strip() for t in re.split(r",(?![^()]*\))", selector or "") if t.strip()]


def _matches_labels(labels: dict[str, str], selector: str) -> bool:
    for term in _label_terms(selector):
        if m := re.fullmatch(r"(\S+) in \((.*)\)", term):
            if labels.get(m[1]) not in {v.strip() for v in m[2].split(",")}:
                return False
            continue
        if "=" in term:
            key, value = term.split("=", 1)
            if labels.get(key) != value:
                return False
        elif term not in labels:
            return False
    return True


def _field(obj: dict[str, Any], path: str) -> Any:
    for part in path.split("."):
        obj = (obj or {}).get(part)  # type: ignore[assignment]
    return obj


def _matches_fields(obj: dict[str, Any], selector: str) -> bool:
    for term in filter(None, (selector or "").split(",")):
        key, value = term.split("=", 1)
        if str(_field(obj, key) or "") != value:
            return False
    return True


def _pool_of(pod_spec: dict[str, Any]) -> str | None:
    """The NodePool a smoke-test pod (or its Deployment's template) selects; None for other workloads."""
    return (pod_spec.get("nodeSelector") or {}).get("karpenter.sh/nodepool")


class FakeCluster:
    def __init__(self, nodepools: list[dict[str, Any]], behaviours: dict[str, Behaviour] | None = None) -> None:
        self.lock = threading.RLock()
        self.namespaces: dict[str, dict[str, Any]] = {}
        self.deployments: dict[tuple[str, str], dict[str, Any]] = {}
        self.pods: dict[tuple[str, str], dict[str, Any]] = {}
        self.nodes: dict[str, dict[str, Any]] = {}
        self.nodeclaims: dict[str, dict[str, Any]] = {}
        self.nodepools = {p["metadata"]["name"]: copy.deepcopy(p) for p in nodepools}
        self.crds: list[dict[str, Any]] = []
        self.secrets: list[dict[str, Any]] = []
        """Cluster objects only listed (the preflight's in-cluster look-up reads them)."""
        self.events: list[dict[str, Any]] = []
        self.behaviours = behaviours or {}
        self.requests: list[tuple[str, str]] = []
        self.history: list[tuple[float, str]] = []
        """(real time, what happened) in the simulated cluster."""
        self._since: dict[str, float] = {}
        self._ids = itertools.count(1)
        self._iced: set[str] = set()
        self._stop = threading.Event()
        self.port = 0
        self.now: Any = lambda: datetime.now(UTC)
        """Wall clock of the simulated Karpenter (budgets' cron windows)."""
        self.services: list[dict[str, Any]] = []
        self.ingresses: list[dict[str, Any]] = []
        self.persistent_volumes: list[dict[str, Any]] = []
        self.deleted_pools: set[str] = set()
        self.stuck_claims: set[str] = set()
        """NodeClaims the simulated Karpenter cannot drain (a blocking PodDisruptionBudget): they never go."""

    # --- objects ---------------------------------------------------------------------------------------------
    def _event(self, kind: str, name: str, reason: str, message: str, namespace: str = "default",
               type_: str = "Warning") -> None:
        self.events.append({"metadata": {"name": f"e{next(self._ids)}", "namespace": namespace},
                            "involvedObject": {"kind": kind, "name": name, "namespace": namespace},
                            "reason": reason, "message": message, "type": type_})

    def add_node(self, name: str, pool: str, cpu: str = "1930m") -> None:
        self.nodes[name] = {"metadata": {"name": name, "labels": {"karpenter.sh/nodepool": pool,
                                                                  "kubernetes.io/hostname": name}},
                            "status": {"conditions": [{"type": "Ready", "status": "True"}],
                                       "allocatable": {"cpu": cpu, "memory": "3000Mi", "pods": "29"}}}

    def add_deployment(self, namespace: str, name: str, replicas: int, ready: int | None = None) -> None:
        """A workload's Deployment (no pods are simulated for it): what `smoke --phase` reads."""
        self.deployments[(namespace, name)] = {
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": replicas, "template": {"metadata": {"labels": {}}, "spec": {}}},
            "status": {"replicas": replicas, "readyReplicas": replicas if ready is None else ready}}

    def add_pending_pod(self, namespace: str, name: str, created: datetime) -> None:
        """A pod no autoscaler placed, Pending since `created`."""
        self.pods[(namespace, name)] = {
            "metadata": {"name": name, "namespace": namespace, "labels": {},
                         "creationTimestamp": created.strftime("%Y-%m-%dT%H:%M:%SZ")},
            "spec": {}, "status": {"phase": "Pending"}}

    def add_group_node(self, name: str, group: str) -> None:
        """A node of a managed node group."""
        self.nodes[name] = {"metadata": {"name": name, "labels": {"eks.amazonaws.com/nodegroup": group,
                                                                  "kubernetes.io/hostname": name}},
                            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}

    def add_claim(self, name: str, pool: str) -> None:
        self.nodeclaims[name] = {"metadata": {"name": name, "labels": {"karpenter.sh/nodepool": pool},
                                              "creationTimestamp": _now()}, "status": {}}

    def add_service(self, namespace: str, name: str, type_: str = "ClusterIP") -> None:
        self.services.append({"metadata": {"name": name, "namespace": namespace}, "spec": {"type": type_}})

    def add_ingress(self, namespace: str, name: str, class_name: str | None = None,
                    hostname: str | None = None) -> None:
        ingress: dict[str, Any] = {"metadata": {"name": name, "namespace": namespace}, "spec": {}, "status": {}}
        if class_name:
            ingress["spec"]["ingressClassName"] = class_name
        if hostname:
            ingress["status"] = {"loadBalancer": {"ingress": [{"hostname": hostname}]}}
        self.ingresses.append(ingress)

    def add_persistent_volume(self, name: str, claim: tuple[str, str] | None, policy: str = "Delete",
                              ebs_volume: str | None = None, in_tree: bool = False) -> None:
        """A PersistentVolume bound to `claim` (namespace, name): an EBS volume (CSI, or the in-tree plugin's
        `aws://zone/vol-...`) when `ebs_volume` is given, else an NFS share."""
        spec: dict[str, Any] = {"persistentVolumeReclaimPolicy": policy}
        if claim:
            spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": claim[0], "name": claim[1]}
        if ebs_volume and in_tree:
            spec["awsElasticBlockStore"] = {"volumeID": f"aws://us-east-1a/{ebs_volume}"}
        elif ebs_volume:
            spec["csi"] = {"driver": "ebs.csi.aws.com", "volumeHandle": ebs_volume}
        else:
            spec["nfs"] = {"server": "fs-1.efs.us-east-1.amazonaws.com", "path": "/"}
        self.persistent_volumes.append({"metadata": {"name": name}, "spec": spec})

    def _log(self, what: str) -> None:
        self.history.append((time.monotonic(), what))

    # --- the simulated controllers -----------------------------------------------------------------------------
    def _due(self, key: str, step: float) -> bool:
        """True once `step` seconds have passed since `key` was first asked about."""
        now = time.monotonic()
        start = self._since.setdefault(key, now)
        return now - start >= step

    def reconcile(self) -> None:
        with self.lock:
            self._deployments()
            for (ns, name), pod in list(self.pods.items()):
                if _pool_of(pod["spec"]):
                    self._karpenter(ns, name, pod)
            self._consolidate()
            self._terminate_deleted_pools()

    def _terminate_deleted_pools(self) -> None:
        """Karpenter on a deleted NodePool: drain and terminate its nodes, one step after the delete."""
        for name, claim in list(self.nodeclaims.items()):
            pool = claim["metadata"]["labels"].get("karpenter.sh/nodepool")
            if pool in self.deleted_pools and name not in self.stuck_claims and self._due(f"drain/{name}", 0.02):
                if node := claim["status"].get("nodeName"):
                    self._remove_node(node)
                del self.nodeclaims[name]
                self._log(f"nodeclaim {name} terminated")

    def _deployments(self) -> None:
        for (ns, name), d in self.deployments.items():
            if not _pool_of(d["spec"].get("template", {}).get("spec", {})):
                continue  # another workload (Cluster Autoscaler): only its Deployment object is simulated
            pods = [k for k, p in self.pods.items() if k[0] == ns and p["metadata"]["labels"].get("app") == name]
            if d["spec"]["replicas"] > 0 and not pods:
                template = d["spec"]["template"]
                pod_name = f"{name}-{next(self._ids):05d}"
                self.pods[(ns, pod_name)] = {
                    "metadata": {"name": pod_name, "namespace": ns, "creationTimestamp": _now(),
                                 "labels": {**template["metadata"]["labels"], "app": name}},
                    "spec": copy.deepcopy(template["spec"]), "status": {"phase": "Pending"}}
                self._log(f"pod {pod_name} created")
                pool = template["spec"]["nodeSelector"]["karpenter.sh/nodepool"]
                if self.behaviours.get(pool, Behaviour()).decoy:
                    self.add_claim(f"{pool}-decoy", pool)
            elif d["spec"]["replicas"] == 0:
                for key in pods:
                    del self.pods[key]
                    self._log(f"pod {key[1]} deleted")

    def _karpenter(self, ns: str, name: str, pod: dict[str, Any]) -> None:
        pool = pod["spec"]["nodeSelector"]["karpenter.sh/nodepool"]
        b = self.behaviours.get(pool, Behaviour())
        if pod["spec"].get("nodeName"):
            return
        if b.bind_existing:
            if self._due(f"{name}/bind", b.step):
                pod["spec"]["nodeName"] = b.bind_existing
                pod["status"]["phase"] = "Running"
            return
        claim = next((c for c in self.nodeclaims.values() if c.get("pod") == name), None)
        if claim is None:
            if not self._due(f"{name}/claim", b.step):
                return
            if b.stall == "nodeclaim":
                self._stalled(b, pool, pod, None)
                return
            claim_name = f"{pool}-{next(self._ids):05d}"
            self.add_claim(claim_name, pool)
            claim = self.nodeclaims[claim_name]
            claim["pod"] = name
            claim["metadata"]["labels"].update({"node.kubernetes.io/instance-type": "c7a.medium",
                                                "karpenter.sh/capacity-type": "spot",
                                                "topology.kubernetes.io/zone": "us-east-1a"})
            self._event("Pod", name, "Nominated", f"Pod should schedule on: nodeclaim/{claim_name}", ns, "Normal")
            self._log(f"nodeclaim {claim_name} created")
            return
        cname = claim["metadata"]["name"]
        conditions = claim["status"].setdefault("conditions", [])
        if not any(c["type"] == "Launched" and c["status"] == "True" for c in conditions):
            if not self._due(f"{cname}/launch", b.step):
                return
            if b.stall == "launched":
                self._stalled(b, pool, pod, claim)
                return
            if b.ice_first and name not in self._iced:
                if not conditions:
                    conditions.append({"type": "Launched", "status": "False", "reason": "InsufficientCapacityError",
                                       "message": "InsufficientInstanceCapacity for c7a.medium in us-east-1a"})
                elif self._due(f"{cname}/ice-delete", b.step):
                    del self.nodeclaims[cname]
                    self._iced.add(name)
                    self._log(f"nodeclaim {cname} deleted after insufficient capacity")
                return
            conditions.append({"type": "Launched", "status": "True", "reason": "Launched"})
            self._log(f"nodeclaim {cname} launched")
            return
        node_name = claim["status"].get("nodeName")
        if node_name is None:
            if not self._due(f"{cname}/ready", b.step):
                return
            if b.stall == "ready":
                self._stalled(b, pool, pod, claim)
                return
            node_name = f"ip-10-0-{next(self._ids)}.ec2.internal"
            self.add_node(node_name, pool)
            claim["status"]["nodeName"] = node_name
            self._log(f"node {node_name} ready")
            return
        if not self._due(f"{name}/run", b.step):
            return
        if b.stall == "running":
            self._stalled(b, pool, pod, claim)
            return
        pod["spec"]["nodeName"] = node_name
        pod["status"]["phase"] = "Running"
        self._log(f"pod {name} running")
        if b.squatter:
            self.pods[("team", "app-1")] = {"metadata": {"name": "app-1", "namespace": "team", "labels": {}},
                                            "spec": {"nodeName": node_name, "nodeSelector": {
                                                "karpenter.sh/nodepool": pool}}, "status": {"phase": "Running"}}

    def _stalled(self, b: Behaviour, pool: str, pod: dict[str, Any], claim: dict[str, Any] | None) -> None:
        key = f"{pod['metadata']['name']}/stalled"
        if key in self._since:
            return
        self._since[key] = time.monotonic()
        if claim is not None:
            claim["status"].setdefault("conditions", []).extend(copy.deepcopy(b.claim_conditions))
        for kind, reason, message in b.events:
            if kind == "Pod":
                self._event("Pod", pod["metadata"]["name"], reason, message, pod["metadata"]["namespace"])
            elif kind == "NodeClaim" and claim is not None:
                self._event("NodeClaim", claim["metadata"]["name"], reason, message)
            else:
                self._event(kind, pool, reason, message)

    def _consolidate(self) -> None:
        from eks_karpenter.tools.smoke.budgets import consolidation_of

        for name, node in list(self.nodes.items()):
            pool = node["metadata"]["labels"].get("karpenter.sh/nodepool")
            if pool is None:
                continue  # a node group's node: not Karpenter's to consolidate
            if any(p["spec"].get("nodeName") == name for p in self.pods.values()):
                self._since.pop(f"{name}/empty", None)
                continue
            if not any(c["status"].get("nodeName") == name for c in self.nodeclaims.values() if c.get("pod")):
                continue  # only nodes launched here are consolidated (pre-existing ones stay)
            if self.behaviours.get(pool, Behaviour()).stall == "gone":
                continue
            c = consolidation_of(self.nodepools[pool]["spec"].get("disruption"), self.now())
            if c.state != "enabled" or not self._due(f"{name}/empty", (c.consolidate_after or 0) / SCALE):
                continue
            self._remove_node(name)

    def _remove_node(self, name: str) -> None:
        self.nodes.pop(name, None)
        for cname, c in list(self.nodeclaims.items()):
            if c["status"].get("nodeName") == name:
                del self.nodeclaims[cname]
        self._log(f"node {name} gone")

    # --- the server ----------------------------------------------------------------------------------------
    def handle(self, method: str, url: str, body: Any) -> tuple[int, Any]:
        parts = urlsplit(url)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        path = parts.path
        self.requests.append((method, path))
        labels, fields = query.get("labelSelector", ""), query.get("fieldSelector", "")
        with self.lock:
            return self._route(method, path, body, labels, fields)

    def _route(self, method: str, path: str, body: Any, labels: str, fields: str) -> tuple[int, Any]:
        def listing(items: Any) -> tuple[int, Any]:
            return 200, {"items": [copy.deepcopy(i) for i in items if
                                   _matches_labels(i["metadata"].get("labels", {}), labels)
                                   and _matches_fields(i, fields)]}

        if m := re.fullmatch(r"/api/v1/namespaces", path):
            if method == "GET":
                return listing(self.namespaces.values())
            self.namespaces[body["metadata"]["name"]] = body
            self._log(f"namespace {body['metadata']['name']} created")
            return 201, body
        if m := re.fullmatch(r"/api/v1/namespaces/([^/]+)", path):
            ns = m[1]
            if ns not in self.namespaces:
                return 404, {"kind": "Status", "message": f'namespaces "{ns}" not found', "code": 404}
            del self.namespaces[ns]
            for key in [k for k in self.deployments if k[0] == ns]:
                del self.deployments[key]
            for key in [k for k in self.pods if k[0] == ns]:
                del self.pods[key]
            self._log(f"namespace {ns} deleted")
            return 200, {"kind": "Status", "status": "Success"}
        if (m := re.fullmatch(r"/apis/apps/v1/namespaces/([^/]+)/deployments/([^/]+)", path)) and method == "GET":
            d = self.deployments.get((m[1], m[2]))
            return (200, d) if d else (404, {"kind": "Status", "message": "not found", "code": 404})
        if m := re.fullmatch(r"/apis/apps/v1/namespaces/([^/]+)/deployments", path):
            if m[1] not in self.namespaces:
                return 404, {"kind": "Status", "message": f'namespaces "{m[1]}" not found', "code": 404}
            self.deployments[(m[1], body["metadata"]["name"])] = copy.deepcopy(body)
            return 201, body
        if m := re.fullmatch(r"/apis/apps/v1/namespaces/([^/]+)/deployments/([^/]+)/scale", path):
            d = self.deployments.get((m[1], m[2]))
            if d is None:
                return 404, {"kind": "Status", "message": "not found", "code": 404}
            d["spec"]["replicas"] = body["spec"]["replicas"]
            self._log(f"deployment {m[2]} scaled to {d['spec']['replicas']}")
            return 200, {"kind": "Scale", "spec": {"replicas": d["spec"]["replicas"]}}
        if m := re.fullmatch(r"/api/v1/namespaces/([^/]+)/pods", path):
            return listing(p for k, p in self.pods.items() if k[0] == m[1])
        if path == "/api/v1/pods":
            return listing(self.pods.values())
        if path == "/api/v1/nodes":
            return listing(self.nodes.values())
        if m := re.fullmatch(r"/api/v1/nodes/([^/]+)", path):
            node = self.nodes.get(m[1])
            return (200, node) if node else (404, {"kind": "Status", "message": "not found", "code": 404})
        if path == "/api/v1/events":
            return listing(self.events)
        if m := re.fullmatch(r"/api/v1/namespaces/([^/]+)/events", path):
            return listing(e for e in self.events if e["metadata"]["namespace"] == m[1])
        if path == "/apis/karpenter.sh/v1/nodeclaims":
            return listing({k: v for k, v in c.items() if k != "pod"} for c in self.nodeclaims.values())
        if m := re.fullmatch(r"/apis/karpenter.sh/v1/nodeclaims/([^/]+)", path):
            claim = self.nodeclaims.get(m[1])
            if claim is None:
                return 404, {"kind": "Status", "message": "not found", "code": 404}
            self._log(f"nodeclaim {m[1]} deleted")
            if node := claim["status"].get("nodeName"):
                self._remove_node(node)
            self.nodeclaims.pop(m[1], None)
            return 200, {"kind": "Status", "status": "Success"}
        if path == "/apis/apiextensions.k8s.io/v1/customresourcedefinitions":
            return listing(self.crds)
        if path == "/api/v1/secrets":
            return listing(self.secrets)
        if m := re.fullmatch(r"/api/v1/namespaces/([^/]+)/secrets", path):
            return listing(s for s in self.secrets if s["metadata"].get("namespace") == m[1])
        if (m := re.fullmatch(r"/api/v1/namespaces/([^/]+)/secrets/([^/]+)", path)) and method == "PATCH":
            found = next((s for s in self.secrets if (s["metadata"].get("namespace"), s["metadata"]["name"])
                          == (m[1], m[2])), None)
            if found is None:
                return 404, {"kind": "Status", "message": "not found", "code": 404}
            found["metadata"].setdefault("labels", {}).update(body["metadata"]["labels"])
            self._log(f"secret {m[1]}/{m[2]} labelled")
            return 200, found
        if path == "/api/v1/persistentvolumes":
            return listing(self.persistent_volumes)
        if path == "/apis/karpenter.sh/v1/nodepools":
            return listing(self.nodepools.values())
        if path == "/api/v1/services":
            return listing(self.services)
        if path == "/apis/networking.k8s.io/v1/ingresses":
            return listing(self.ingresses)
        if (m := re.fullmatch(r"/apis/karpenter.sh/v1/nodepools/([^/]+)", path)) and method == "DELETE":
            if self.nodepools.pop(m[1], None) is None:
                return 404, {"kind": "Status", "message": "not found", "code": 404}
            self.deleted_pools.add(m[1])
            self._log(f"nodepool {m[1]} deleted")
            return 200, {"kind": "Status", "status": "Success"}
        if m := re.fullmatch(r"/apis/karpenter.sh/v1/nodepools/([^/]+)", path):
            pool = self.nodepools.get(m[1])
            return (200, pool) if pool else (404, {"kind": "Status", "message": "not found", "code": 404})
        return 404, {"kind": "Status", "message": f"fake server does not serve {method} {path}", "code": 404}

    @contextmanager
    def serving(self, tls: TlsFiles | None = None) -> Iterator[str]:
        """Run the server and the simulated controllers; yields the server's URL (https with `tls`)."""
        cluster = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                status, payload = cluster.handle(method, self.path, body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

            def do_PATCH(self) -> None:
                self._serve("PATCH")

            def do_DELETE(self) -> None:
                self._serve("DELETE")

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(tls.cert, tls.key)
            server.socket = context.wrap_socket(server.socket, server_side=True)
        self.port = server.server_address[1]

        def controllers() -> None:
            while not self._stop.is_set():
                self.reconcile()
                time.sleep(0.002)

        threads = [threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True),
                   threading.Thread(target=controllers, daemon=True)]
        for t in threads:
            t.start()
        try:
            yield f"{'https' if tls else 'http'}://127.0.0.1:{server.server_address[1]}"
        finally:
            self._stop.set()
            server.shutdown()
            server.server_close()
            for t in threads:
                t.join(timeout=5)
