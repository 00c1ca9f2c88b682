"""Reading IAM policy documents in tests: the actions they grant and their size as IAM counts it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from eks_karpenter.tools.deploy_role import MANAGED_POLICY_SIZE_LIMIT, policy_size

__all__ = ["MANAGED_POLICY_SIZE_LIMIT", "all_actions", "policy_size"]


def all_actions(documents: Iterable[Mapping[str, Any]]) -> set[str]:
    """Every action any Allow statement of these documents grants."""
    actions: set[str] = set()
    for document in documents:
        statements = document["Statement"]
        for statement in [statements] if isinstance(statements, Mapping) else statements:
            if statement.get("Effect") == "Allow" and "Action" in statement:
                action = statement["Action"]
                actions.update([action] if isinstance(action, str) else action)
    return actions
