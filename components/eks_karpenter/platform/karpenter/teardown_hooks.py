"""The destroy guard's wiring: Pulumi resource hooks (`before_delete`) that run the guard (`teardown.py`).

- `check` on a sentinel ConfigMap (`eks-karpenter-destroy-guard` in the Karpenter namespace) that depends on
  every NodePool and EC2NodeClass, so a destroy deletes it first: the check runs before any pool or class goes,
  and says first what the destroy will leave behind (`teardown.leaks`). A routine `up` that drops one pool never
  deletes the sentinel (its data only changes), so a team's load balancer does not block everyday changes;
- `check`, then `drain`, on the Karpenter controller release: this stack's pools deleted and their NodeClaims
  gone before the controller that terminates their instances is removed.

Hooks run inside the program, so a destroy must run it: `pulumi destroy --run-program`. They talk to the cluster
only with the kubeconfig this stack's Kubernetes provider uses (`aws eks get-token`), resolved while the program
runs, and only once the client is shown to be the stack's cluster (`stack_cluster.py`): never with the
operator's own kubeconfig.
"""

from __future__ import annotations

from typing import Any

import pulumi

from eks_karpenter.platform.karpenter.teardown import Scope, TeardownRefused
from eks_karpenter.platform.stack_cluster import OtherCluster, StackCluster

GUARD_CONFIGMAP = "eks-karpenter-destroy-guard"
CHECK_HOOK = "eks-karpenter-destroy-check"
DRAIN_HOOK = "eks-karpenter-destroy-drain"


def _seconds(duration: str) -> float:
    """A Pulumi custom timeout (`10m`, `1h30m`, `90s`) in seconds."""
    total, number = 0.0, ""
    units = {"h": 3600, "m": 60, "s": 1}
    for char in duration:
        if char.isdigit() or char == ".":
            number += char
        elif char in units and number:
            total += float(number) * units[char]
            number = ""
        else:
            raise ValueError(f"not a duration such as 10m or 1h30m: {duration!r}")
    return total + (float(number) if number else 0.0)


class TeardownHooks:
    """The two hooks for one stack: bind `check_binding` to the guard ConfigMap, `drain` (before delete) to the
    controller release."""

    def __init__(self, scope: Scope, cluster: StackCluster, drain_timeout: str, namespace: str | None = None) -> None:
        self.scope = scope
        self.namespace = namespace
        """The Karpenter namespace this run's config names: a delete from another one is a move, not a teardown."""
        self.cluster = cluster
        self.drain_timeout = _seconds(drain_timeout)
        self.poll = 10.0
        """Seconds between looks at the draining NodeClaims."""
        self.check = pulumi.ResourceHook(CHECK_HOOK, self._check)
        self.drain = pulumi.ResourceHook(DRAIN_HOOK, self._drain)

    def _api(self) -> Any:
        try:
            return self.cluster.api()
        except OtherCluster as exc:
            raise TeardownRefused(
                f"destroy of cluster {self.scope.cluster} stopped before deleting Karpenter: the destroy guard "
                f"checks, drains and deletes nothing, because {exc}. It only uses the kubeconfig built from this "
                "stack's cluster endpoint and certificate authority: run `pulumi destroy --run-program` with the "
                "stack's own AWS credentials") from None

    def _moved(self, args: pulumi.ResourceHookArgs) -> bool:
        """The deleted resource sat in another namespace than this run's config names: a replacement by a move
        (which `diff` refuses), not a teardown; draining every pool for it would empty the cluster."""
        old = dict(args.old_inputs or {})
        namespace = old.get("namespace") or dict(old.get("metadata") or {}).get("namespace")
        if self.namespace is None or namespace in (None, self.namespace):
            return False
        pulumi.log.warn(f"{args.name}: deleted from namespace {namespace} while the stack now names "
                        f"{self.namespace}: a move, not a destroy, so the destroy guard neither checks nor drains")
        return True

    def _check(self, args: pulumi.ResourceHookArgs) -> None:
        from eks_karpenter.platform.karpenter.teardown import check, leak_report, leaks

        if self._moved(args):
            return
        api = self._api()
        found = leaks(api, self.scope)
        if found:
            pulumi.log.warn(leak_report(found, self.scope.cluster))
        check(api, self.scope)

    def _drain(self, args: pulumi.ResourceHookArgs) -> None:
        from eks_karpenter.platform.karpenter.teardown import check, drain

        if self._moved(args):
            return
        api = self._api()
        check(api, self.scope)
        drain(api, self.scope, timeout=self.drain_timeout, poll=self.poll)

    @property
    def check_binding(self) -> pulumi.ResourceHookBinding:
        return pulumi.ResourceHookBinding(before_delete=[self.check])
