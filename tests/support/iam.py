"""Reading IAM policy documents in tests: the actions they grant and their size as IAM counts it."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

MANAGED_POLICY_SIZE_LIMIT = 6144
"""Characters (whitespace excluded) IAM accepts in one customer managed policy document."""


def policy_size(document: Mapping[str, Any]) -> int:
    """Size of a policy document as IAM counts it against its quotas: compact JSON, whitespace excluded."""
    return len(json.dumps(document, separators=(",", ":"), ensure_ascii=False))


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
