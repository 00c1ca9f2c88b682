"""The destroy guard's wiring: Pulumi resource hooks (`before_delete`) that run the guard (`teardown.py`).

- `check` on a sentinel ConfigMap (`eks-karpenter-destroy-guard` in the Karpenter namespace) that depends on
  every NodePool and EC2NodeClass, so a destroy deletes it first: the check runs before any pool or class goes.
  A routine `up` that drops one pool never deletes the sentinel (its data only changes), so a team's load
  balancer does not block everyday changes;
- `check`, then `drain`, on the Karpenter controller release: this stack's pools deleted and their NodeClaims
  gone before the controller that terminates their instances is removed.

Hooks run inside the program, so a destroy must run it: `pulumi destroy --run-program`. They talk to the cluster
with the kubeconfig this stack's Kubernetes provider uses (`aws eks get-token`), resolved while the program runs.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import pulumi
import yaml

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

    def __init__(self, cluster: str, own_pools: Collection[str], kubeconfig: pulumi.Output[str],
                 drain_timeout: str) -> None:
        self.cluster = cluster
        self.own_pools = frozenset(own_pools)
        self.drain_timeout = _seconds(drain_timeout)
        self._kubeconfig: dict[str, Any] = {}
        kubeconfig.apply(self._remember)
        self.check = pulumi.ResourceHook(CHECK_HOOK, self._check)
        self.drain = pulumi.ResourceHook(DRAIN_HOOK, self._drain)

    def _remember(self, text: str) -> None:
        loaded = yaml.safe_load(text) if text else None
        if isinstance(loaded, dict):
            self._kubeconfig.update(loaded)

    def _api(self) -> Any:
        from eks_karpenter.platform.kube import KubeApi

        if not self._kubeconfig:
            return KubeApi.from_file(None)  # the operator's own kubeconfig ($KUBECONFIG, ~/.kube/config)
        return KubeApi.from_kubeconfig(self._kubeconfig)

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
