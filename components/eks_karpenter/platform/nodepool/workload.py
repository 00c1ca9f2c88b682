"""Helpers for workloads: the pod-spec fragment that lands a Deployment's pods on one pool. Pure dicts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from eks_karpenter.catalogue.match import allowed_values
from eks_karpenter.labels import CAPACITY_TYPE, NODEPOOL_LABEL
from eks_karpenter.platform.nodepool.config import NodePoolConfig, Taint
from eks_karpenter.platform.nodepool.manifests import pool_requirements

_CAPACITY_TYPES = ("spot", "on-demand", "reserved")


def toleration_for(taint: Taint | Mapping[str, Any]) -> dict[str, Any]:
    """The toleration matching one taint, from config or a rendered manifest (`Equal` on its value, or `Exists`
    for a taint without one)."""
    t = taint.dump() if isinstance(taint, Taint) else taint
    if t.get("value") is None:
        return {"key": t["key"], "operator": "Exists", "effect": t["effect"]}
    return {"key": t["key"], "operator": "Equal", "value": t["value"], "effect": t["effect"]}


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """Kubernetes' rule for one toleration against one taint: an empty effect matches every effect, an empty key
    with `Exists` every taint, and `Equal` compares values (a missing value is the empty string)."""
    effect = toleration.get("effect")
    if effect not in (None, "") and effect != taint["effect"]:
        return False
    exists: bool = toleration.get("operator", "Equal") == "Exists"
    if toleration.get("key") in (None, ""):
        return exists
    if toleration["key"] != taint["key"]:
        return False
    return exists or str(toleration.get("value") or "") == str(taint.get("value") or "")


def scheduling_for(pool_cfg: NodePoolConfig) -> dict[str, Any]:
    """`nodeSelector`, `tolerations` and `affinity` for a pod template, to merge into its `spec`.

    - `nodeSelector` pins the pool (`karpenter.sh/nodepool`), plus `karpenter.sh/capacity-type` when the pool
      allows a single capacity type.
    - `tolerations` match the pool's `taints` (not its `startupTaints`, which pods need not tolerate). Left out
      when the pool has no taints.
    - `affinity` is added only when the pool allows exactly spot and on-demand: a preferred (not required) node
      affinity for spot. Karpenter first tries to satisfy preferences, so new capacity is spot when EC2 has it and
      falls back to on-demand when it does not; the scheduler also prefers existing spot nodes. With `reserved`
      allowed no preference is added: reservations are paid for whether used or not, and Karpenter already picks
      them first.
    """
    capacity = allowed_values(pool_requirements(pool_cfg), CAPACITY_TYPE, _CAPACITY_TYPES)
    selector = {NODEPOOL_LABEL: pool_cfg.name}
    if len(capacity) == 1:
        selector[CAPACITY_TYPE] = capacity[0]
    out: dict[str, Any] = {"nodeSelector": selector}
    if pool_cfg.taints:
        out["tolerations"] = [toleration_for(t) for t in pool_cfg.taints]
    if set(capacity) == {"spot", "on-demand"}:
        prefer_spot = {"matchExpressions": [{"key": CAPACITY_TYPE, "operator": "In", "values": ["spot"]}]}
        out["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "preference": prefer_spot}]}}
    return out
