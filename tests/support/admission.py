"""Test support: the library's admission evaluator (`eks_karpenter.platform.access.admission`) called the way the
tests read best: `admit(policy, operation, groups, obj, old, resource=..., namespace=...)`."""

from __future__ import annotations

from typing import Any

from eks_karpenter.platform.access.admission import Decision, Request
from eks_karpenter.platform.access.admission import admit as evaluate

_KINDS = {"pods": "Pod", "services": "Service"}


def admit(policy: dict[str, Any], operation: str, groups: list[str], obj: dict[str, Any] | None,
          old: dict[str, Any] | None = None, resource: str | None = None, namespace: str | None = None) -> Decision:
    """The policy's decision on one request by a user in `groups`; `resource` names the kind of a core object
    written without `apiVersion` and `kind` (`pods`, `services`)."""
    if resource in _KINDS:
        obj = {"apiVersion": "v1", "kind": _KINDS[resource], **(obj or {})}
    return evaluate(policy, Request(operation, tuple(groups), obj, old, namespace))
