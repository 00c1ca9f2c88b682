"""The destroy guard's wiring: Pulumi resource hooks (`before_delete`) that run the guard (`teardown.py`).

- `check` on a sentinel ConfigMap (`eks-karpenter-destroy-guard` in the Karpenter namespace) that depends on
  every NodePool and EC2NodeClass, so a destroy deletes it first: the check runs before any pool or class goes.
  A routine `up` that drops one pool never deletes the sentinel (its data only changes), so a team's load
  balancer does not block everyday changes;
- `check`, then `drain`, on the Karpenter controller release: this stack's pools deleted and their NodeClaims
  gone before the controller that terminates their instances is removed.

Hooks run inside the program, so a destroy must run it: `pulumi destroy --run-program`. They talk to the cluster
as the identity this stack's Kubernetes provider uses, with a token minted in-process (platform/cluster_access.py:
no `aws` command), from the endpoint and CA resolved while the program runs.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import pulumi

from eks_karpenter.platform.cluster_access import ClusterAccess
from eks_karpenter.platform.kube import KubeApi

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
    """The two hooks for one stack: bind `check_binding` to pools and classes, `drain_binding` to the controller."""

    def __init__(self, cluster: str, own_pools: Collection[str], access: pulumi.Output[ClusterAccess],
                 drain_timeout: str) -> None:
        self.cluster = cluster
        self.own_pools = frozenset(own_pools)
        self.drain_timeout = _seconds(drain_timeout)
        self._access: ClusterAccess | None = None
        access.apply(self._remember)
        self.check = pulumi.ResourceHook(CHECK_HOOK, self._check)
        self.drain = pulumi.ResourceHook(DRAIN_HOOK, self._drain)

    def _remember(self, access: ClusterAccess) -> None:
        if access.endpoint:
            self._access = access

    def _api(self) -> Any:
        if self._access is None:
            return KubeApi.from_file(None)  # the operator's own kubeconfig ($KUBECONFIG, ~/.kube/config)
        return KubeApi.for_cluster(self._access)

    def _check(self, args: pulumi.ResourceHookArgs) -> None:
        from eks_karpenter.platform.karpenter.teardown import check

        check(self._api(), self.own_pools, self.cluster)

    def _drain(self, args: pulumi.ResourceHookArgs) -> None:
        from eks_karpenter.platform.karpenter.teardown import check, drain

        api = self._api()
        check(api, self.own_pools, self.cluster)
        drain(api, self.own_pools, self.cluster, timeout=self.drain_timeout)

    @property
    def check_binding(self) -> pulumi.ResourceHookBinding:
        return pulumi.ResourceHookBinding(before_delete=[self.check])

    @property
    def drain_binding(self) -> pulumi.ResourceHookBinding:
        return pulumi.ResourceHookBinding(before_delete=[self.drain])
