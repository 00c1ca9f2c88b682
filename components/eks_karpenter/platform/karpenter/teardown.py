"""The destroy guard: what `pulumi destroy` cannot clean up, found before anything is deleted, and the drain of
this stack's NodePools before the Karpenter controller goes.

A destroy that deletes the controller while instances still run leaves them running (nothing terminates them);
a load balancer a Service or Ingress made keeps its ENIs in the VPC's subnets, so the VPC delete then hangs
until it times out. So, before the first NodePool, EC2NodeClass or the controller is deleted:

- `check`: refuse while there are NodeClaims of pools this stack does not manage (a consumer stack's pool: its
  nodes would lose their controller), Services of type LoadBalancer, or Ingresses with a cloud load balancer.
  The refusal names each object and the command that removes it;
- `drain`: delete this stack's NodePools (Karpenter drains and terminates their nodes) and wait until their
  NodeClaims are gone; refuse (naming what is left) when they do not go within the timeout.

The logic is pure over a small API (`TeardownApi`: `KubeApi` implements it); the platform runs it from Pulumi
resource hooks (`before_delete`) on its NodePools, EC2NodeClasses and the controller release.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, Protocol

from eks_karpenter.labels import INGRESS_CLASS_ANNOTATION, NODEPOOL_LABEL

ALB_CLASSES = frozenset({"alb"})
"""Ingress classes served by the AWS Load Balancer Controller, which makes an ALB even before it reports one."""


class TeardownApi(Protocol):
    """The Kubernetes calls the guard makes."""

    def list_nodeclaims(self, label_selector: str = "") -> list[dict[str, Any]]: ...
    def list_services(self) -> list[dict[str, Any]]: ...
    def list_ingresses(self) -> list[dict[str, Any]]: ...
    def delete_nodepool(self, name: str) -> None: ...


class TeardownRefused(Exception):
    """Destroy must not go on: the message says what is left and what to run."""


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


def blockers(api: TeardownApi, own_pools: Collection[str], namespaces: Collection[str] | None = None) -> list[Blocker]:
    """What destroy would leave behind. `namespaces` limits the Service and Ingress search (None: all)."""
    found: list[Blocker] = []
    for claim in api.list_nodeclaims():
        pool = (_meta(claim, "labels") or {}).get(NODEPOOL_LABEL)
        if pool not in own_pools:
            found.append(Blocker(
                "NodeClaim", _meta(claim, "name"), None,
                f"a node of NodePool {pool or '(none)'}, which this stack does not manage: without the controller "
                "its instance would keep running",
                f"destroy the stack that owns NodePool {pool}, or: kubectl delete nodepool {pool}"))
    for service in api.list_services():
        ns = _meta(service, "namespace")
        if service.get("spec", {}).get("type") == "LoadBalancer" and (namespaces is None or ns in namespaces):
            found.append(Blocker("Service", _meta(service, "name"), ns,
                                 "type LoadBalancer: its load balancer's ENIs would block deleting the VPC",
                                 f"kubectl delete service -n {ns} {_meta(service, 'name')}"))
    for ingress in api.list_ingresses():
        ns = _meta(ingress, "namespace")
        if _cloud_ingress(ingress) and (namespaces is None or ns in namespaces):
            found.append(Blocker("Ingress", _meta(ingress, "name"), ns,
                                 "has a cloud load balancer: its ENIs would block deleting the VPC",
                                 f"kubectl delete ingress -n {ns} {_meta(ingress, 'name')}"))
    return found


def refusal(found: list[Blocker], cluster: str) -> str:
    """The message destroy stops with."""
    lines = [f"destroy of cluster {cluster} stopped before deleting Karpenter: {len(found)} object(s) would be "
             "left behind. Remove them (commands below, with a kubeconfig for this cluster: aws eks "
             f"update-kubeconfig --name {cluster}), then run `pulumi destroy --run-program` again:"]
    return "\n".join([*lines, *(b.line() for b in found)])


def check(api: TeardownApi, own_pools: Collection[str], cluster: str,
          namespaces: Collection[str] | None = None) -> None:
    """Raise `TeardownRefused` while anything destroy cannot delete exists."""
    found = blockers(api, own_pools, namespaces)
    if found:
        raise TeardownRefused(refusal(found, cluster))


def drain(api: TeardownApi, own_pools: Collection[str], cluster: str, timeout: float,
          poll: float = 10.0, clock: Callable[[], float] = time.monotonic,
          sleep: Callable[[float], None] = time.sleep) -> None:
    """Delete this stack's NodePools (Karpenter drains and terminates their nodes) and wait until their NodeClaims
    are gone. Raise `TeardownRefused` naming those left after `timeout` seconds."""
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
