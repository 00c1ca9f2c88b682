"""IAM role and policy names: one naming scheme, pure (no Pulumi), so config, components and tests share it.

IAM names are account-wide, while a cluster name is only unique per region: the default (`regional`) puts the
region in every name. A role's name is its identity, so a stack deployed with the older scheme keeps it
(`legacy`): renaming a role replaces it, and running nodes lose the access entry that names it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

IAM_NAME_LIMIT = 64
"""IAM's limit on role (and instance profile) names."""
IAM_POLICY_NAME_LIMIT = 128
"""IAM's limit on managed policy names."""
_HASH_LENGTH = 8

IamNameStyle = Literal["regional", "legacy"]
"""`regional`: `<cluster>-<purpose>-<region>`, unique per region (the default); `legacy`: `<cluster>-<purpose>`,
the names of stacks deployed before regional names (IAM names are account-wide: two regions collide)."""


def iam_name(*parts: str, limit: int = IAM_NAME_LIMIT) -> str:
    """The legacy IAM name: `<cluster>-<purpose>` within `limit`, a long cluster name cut from the end. Kept
    exactly as it was, because a role's name is its identity: renaming it replaces it."""
    name = "-".join(parts)
    if len(name) <= limit:
        return name
    head, *rest = parts
    tail = "-".join(rest)
    return f"{head[:limit - len(tail) - 1]}-{tail}"


def regional_iam_name(cluster: str, purpose: str, region: str, limit: int = IAM_NAME_LIMIT) -> str:
    """`<cluster>-<purpose>-<region>` within `limit`. A name too long keeps its purpose and region, cuts the
    cluster name and adds a hash of the full name, so two long cluster names never cut to the same string."""
    name = f"{cluster}-{purpose}-{region}"
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:_HASH_LENGTH]
    tail = f"-{digest}-{purpose}-{region}"
    if len(tail) >= limit:  # a purpose alone too long for IAM: hash it in as well
        return f"{cluster[:limit - len(region) - _HASH_LENGTH - 2]}-{digest}-{region}"[:limit]
    return f"{cluster[:limit - len(tail)]}{tail}"


@dataclass(frozen=True)
class IamNames:
    """Names of the IAM roles and policies a stack creates (one home for the naming scheme)."""

    cluster: str
    region: str
    style: IamNameStyle = "regional"

    def role(self, purpose: str) -> str:
        """A role (or instance profile) name, at most 64 characters."""
        return self._name(purpose, IAM_NAME_LIMIT)

    def policy(self, purpose: str) -> str:
        """A managed policy name, at most 128 characters."""
        return self._name(purpose, IAM_POLICY_NAME_LIMIT if self.style == "regional" else IAM_NAME_LIMIT)

    def _name(self, purpose: str, limit: int) -> str:
        if self.style == "legacy":
            return iam_name(self.cluster, purpose, limit=limit)
        return regional_iam_name(self.cluster, purpose, self.region, limit)
