"""The destroy guard: what `pulumi destroy` would strand or leak, found before anything is deleted, and the drain
of this stack's NodePools before the Karpenter controller goes.

A destroy that deletes the controller while instances still run leaves them running (nothing terminates them);
on a cluster the stack created, a load balancer a Service or Ingress made keeps its ENIs in the VPC's subnets, so
the VPC delete then hangs until it times out. So, before the first NodePool, EC2NodeClass or the controller is
deleted:

- first, the client is shown to be the stack's own cluster's (`platform/stack_cluster.py`: the endpoint and
  certificate authority the stack holds), or nothing is checked, drained or deleted;
- `check`: refuse while there are NodeClaims of pools this stack does not manage (their nodes would lose the
  controller this stack runs), and, on a cluster the stack created, Services of type LoadBalancer or Ingresses
  with a cloud load balancer. On an adopted cluster those are the cluster's own: the cluster and its VPC stay.
  The refusal names each object and the command that removes it;
- `leaks`: what the destroy would leave behind without being able to refuse it (the EBS volumes of
  PersistentVolumes it strands, the control-plane log group EKS may write again), said before anything goes;
- `drain`: delete this stack's NodePools (Karpenter drains and terminates their nodes) and wait until their
  NodeClaims are gone; refuse (naming what is left) when they do not go within the timeout.

The logic is pure over a small API (`TeardownApi`: `KubeApi` implements it); the platform runs it from Pulumi
resource hooks (`before_delete`) on its NodePools, EC2NodeClasses and the controller release.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from eks_karpenter.labels import INGRESS_CLASS_ANNOTATION, NODEPOOL_LABEL

ALB_CLASSES = frozenset({"alb"})
"""Ingress classes served by the AWS Load Balancer Controller, which makes an ALB even before it reports one."""
EBS_CSI_DRIVER = "ebs.csi.aws.com"
"""The EBS CSI driver's name in a PersistentVolume's `spec.csi.driver`."""


class TeardownApi(Protocol):
    """The Kubernetes calls the guard makes."""

    def list_nodeclaims(self, label_selector: str = "") -> list[dict[str, Any]]: ...
    def list_services(self) -> list[dict[str, Any]]: ...
    def list_ingresses(self) -> list[dict[str, Any]]: ...
    def list_persistent_volumes(self) -> list[dict[str, Any]]: ...
    def delete_nodepool(self, name: str) -> None: ...


class TeardownRefused(Exception):
    """Destroy must not go on: the message says what is left and what to run."""


@dataclass(frozen=True)
class Scope:
    """What this stack's destroy removes, which decides what it would strand or leak."""

    cluster: str
    own_pools: frozenset[str]
    created_cluster: bool
    """The stack created the cluster (and its VPC): destroy deletes them. False: an adopted cluster, which stays."""
    deleted_namespaces: frozenset[str] = frozenset()
    """Namespaces the destroy deletes (with every PersistentVolumeClaim in them)."""
    control_plane_log_group: str | None = None
    """The control-plane log group the stack created (None: none, or the cluster is adopted)."""


@dataclass(frozen=True)
class Blocker:
    """One object destroy would leave behind."""

    kind: str
    name: str
    namespace: str | None
    why: str
    command: str
    """What removes it."""

    def line(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"- {self.kind} {where}: {self.why}\n    {self.command}"


def _meta(obj: dict[str, Any], key: str) -> Any:
    return obj.get("metadata", {}).get(key)


def _cloud_ingress(ingress: dict[str, Any]) -> bool:
    """An Ingress that has (or is getting) a cloud load balancer: one reported in its status, or an ALB class."""
    if ingress.get("status", {}).get("loadBalancer", {}).get("ingress"):
        return True
    annotations = _meta(ingress, "annotations") or {}
    return (ingress.get("spec", {}).get("ingressClassName") in ALB_CLASSES
            or annotations.get(INGRESS_CLASS_ANNOTATION) in ALB_CLASSES)


def blockers(api: TeardownApi, scope: Scope) -> list[Blocker]:
    """What destroy would strand: NodeClaims of pools this stack does not manage (the controller this stack runs
    serves them, and goes), and, when the stack created the cluster, cloud load balancers whose ENIs hold the VPC."""
    found: list[Blocker] = []
    for claim in api.list_nodeclaims():
        pool = (_meta(claim, "labels") or {}).get(NODEPOOL_LABEL)
        if pool not in scope.own_pools:
            found.append(Blocker(
                "NodeClaim", _meta(claim, "name"), None,
                f"a node of NodePool {pool or '(none)'}, which this stack does not manage: without the controller "
                "its instance would keep running",
                f"destroy the stack that owns NodePool {pool}, or: kubectl delete nodepool {pool}"))
    if not scope.created_cluster:
        return found  # the cluster and its VPC stay: its load balancers are its own business
    for service in api.list_services():
        ns = _meta(service, "namespace")
        if service.get("spec", {}).get("type") == "LoadBalancer":
            found.append(Blocker("Service", _meta(service, "name"), ns,
                                 "type LoadBalancer: its load balancer's ENIs would block deleting the VPC",
                                 f"kubectl delete service -n {ns} {_meta(service, 'name')}"))
    for ingress in api.list_ingresses():
        ns = _meta(ingress, "namespace")
        if _cloud_ingress(ingress):
            found.append(Blocker("Ingress", _meta(ingress, "name"), ns,
                                 "has a cloud load balancer: its ENIs would block deleting the VPC",
                                 f"kubectl delete ingress -n {ns} {_meta(ingress, 'name')}"))
    return found


@dataclass(frozen=True)
class Leak:
    """Something destroy leaves behind that the guard cannot remove for it, with how to remove it afterwards."""

    what: str
    why: str
    command: str

    def line(self) -> str:
        return f"- {self.what}: {self.why}\n    {self.command}"


def ebs_volume_id(pv: dict[str, Any]) -> str | None:
    """The EBS volume behind a PersistentVolume (the CSI driver's, or the in-tree plugin's `aws://zone/vol-...`);
    None for any other kind of volume."""
    spec = pv.get("spec", {})
    csi = spec.get("csi") or {}
    if csi.get("driver") == EBS_CSI_DRIVER:
        return str(csi.get("volumeHandle") or "") or None
    in_tree = (spec.get("awsElasticBlockStore") or {}).get("volumeID")
    return str(in_tree).rsplit("/", 1)[-1] if in_tree else None


def leaks(api: TeardownApi, scope: Scope) -> list[Leak]:
    """What destroy leaves behind that no refusal would help with: EBS volumes of PersistentVolumes whose claims
    go with this destroy (or whose cluster does) and which nothing deletes, and the control-plane log group."""
    found: list[Leak] = []
    for pv in api.list_persistent_volumes():
        volume = ebs_volume_id(pv)
        if volume is None:
            continue
        spec = pv.get("spec", {})
        policy = spec.get("persistentVolumeReclaimPolicy") or "Delete"
        claim = spec.get("claimRef") or {}
        claim_ns = claim.get("namespace")
        claim_goes = claim_ns in scope.deleted_namespaces
        if policy != "Delete" and (scope.created_cluster or claim_goes):
            why = f"reclaimPolicy {policy}: the volume outlives its claim and PersistentVolume"
        elif policy == "Delete" and scope.created_cluster and not claim_goes:
            why = (f"its claim {claim_ns}/{claim.get('name')} is in a namespace this destroy keeps, so the volume "
                   "is never released before the cluster is deleted")
        else:
            continue
        found.append(Leak(f"EBS volume {volume} (PersistentVolume {_meta(pv, 'name')})", why,
                          f"aws ec2 delete-volume --volume-id {volume}   # snapshot it first if its data matters"))
    if scope.created_cluster and scope.control_plane_log_group:
        group = scope.control_plane_log_group
        found.append(Leak(
            f"log group {group}", "EKS may still deliver control-plane logs while the cluster is deleted, creating "
            "the group again after the stack deleted it (with no retention: kept and billed forever)",
            f"a few minutes after destroy: aws logs delete-log-group --log-group-name {group}"))
    return found


def leak_report(found: list[Leak], cluster: str) -> str:
    """The warning destroy gives before deleting anything."""
    return "\n".join([f"destroy of cluster {cluster} will leave {len(found)} thing(s) behind that it cannot delete; "
                      "remove them afterwards (or back them up first):", *(leak.line() for leak in found)])



def refusal(found: list[Blocker], cluster: str) -> str:
    """The message destroy stops with."""
    lines = [f"destroy of cluster {cluster} stopped before deleting Karpenter: {len(found)} object(s) would be "
             "left behind. Remove them (commands below, with a kubeconfig for this cluster: aws eks "
             f"update-kubeconfig --name {cluster}), then run `pulumi destroy --run-program` again:"]
    return "\n".join([*lines, *(b.line() for b in found)])


def check(api: TeardownApi, scope: Scope) -> None:
    """Raise `TeardownRefused` while anything destroy would strand exists."""
    found = blockers(api, scope)
    if found:
        raise TeardownRefused(refusal(found, scope.cluster))


def drain(api: TeardownApi, scope: Scope, timeout: float, poll: float = 10.0,
          clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
    """Delete this stack's NodePools (Karpenter drains and terminates their nodes) and wait until their NodeClaims
    are gone. Raise `TeardownRefused` naming those left after `timeout` seconds."""
    own_pools, cluster = scope.own_pools, scope.cluster
    if not own_pools:
        return
    for pool in sorted(own_pools):
        api.delete_nodepool(pool)
    deadline = clock() + timeout
    while True:
        left = [c for c in api.list_nodeclaims(NODEPOOL_LABEL)
                if (_meta(c, "labels") or {}).get(NODEPOOL_LABEL) in own_pools]
        if not left:
            return
        if clock() >= deadline:
            names = ", ".join(sorted(str(_meta(c, "name")) for c in left))
            raise TeardownRefused(
                f"destroy of cluster {cluster}: {len(left)} NodeClaim(s) of this stack's pools still exist after "
                f"{timeout:.0f}s ({names}); the controller stays until they are gone. See why with `kubectl "
                f"describe nodeclaim <name>` (a PodDisruptionBudget or do-not-disrupt pod blocks the drain), fix "
                "it, then run `pulumi destroy --run-program` again")
        sleep(poll)
