"""Who answers the preflight's in-cluster look-up: the cluster's API server (a real run), or the offline plan's
mocks, which install themselves here for the length of a run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

InClusterLookup = Callable[[dict[str, Any]], dict[str, Any]]


def _real(request: dict[str, Any]) -> dict[str, Any]:
    from eks_karpenter.platform.preflight.probe import probe

    return probe(request)


_lookup: InClusterLookup = _real


def set_in_cluster_lookup(lookup: InClusterLookup | None) -> InClusterLookup:
    """Answer the in-cluster look-up with `lookup` (None: the API server again); returns the previous one."""
    global _lookup
    previous, _lookup = _lookup, lookup or _real
    return previous


def in_cluster(request: dict[str, Any]) -> dict[str, Any]:
    """The in-cluster look-up's answer to `request` (see lookup.py for what it asks)."""
    return _lookup(request)
