"""Which namespaces the platform must create, as plain data. No Pulumi here.

A Helm release into a namespace that does not exist fails, and Helm's own `createNamespace` leaves a namespace
nobody manages (never deleted, never labelled). So every namespace the platform deploys into, other than the
ones Kubernetes itself provides, is a Namespace object the releases depend on: created before them, deleted
after them on destroy.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

BUILTIN_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
"""Namespaces every cluster has: never created nor deleted by the platform."""

MANAGED_BY_LABEL = ("app.kubernetes.io/managed-by", "eks-karpenter")


@dataclass(frozen=True)
class NamespaceSpec:
    """One namespace to create, and who uses it."""

    name: str
    users: tuple[str, ...]
    """What deploys into it (`karpenter`, `node-termination-handler`, `team:<name>`), for labels and messages."""
    owner: Literal["platform", "team"]
    """`platform`: only the platform's releases live there, so destroy deletes it after them. `team`: another
    stack's workloads live there, so destroy (or dropping the team from config) leaves it: deleting a namespace
    deletes everything in it."""

    @property
    def retain_on_delete(self) -> bool:
        return self.owner == "team"

    def labels(self) -> dict[str, str]:
        key, value = MANAGED_BY_LABEL
        return {key: value}


def platform_namespaces(*, karpenter: str, node_termination_handler: str | None,
                        teams: Iterable[tuple[str, Iterable[str]]] = ()) -> list[NamespaceSpec]:
    """The namespaces to create, sorted by name; built-in ones are left out.

    `teams` pairs a team name with the namespaces its access entries are scoped to.
    """
    users: dict[str, list[str]] = {}
    owners: dict[str, Literal["platform", "team"]] = {}

    def add(namespace: str, user: str, owner: Literal["platform", "team"]) -> None:
        if namespace in BUILTIN_NAMESPACES:
            return
        users.setdefault(namespace, []).append(user)
        # A namespace any team uses is kept on destroy, even if a platform release shares it.
        if owners.get(namespace) != "team":
            owners[namespace] = owner

    add(karpenter, "karpenter", "platform")
    if node_termination_handler is not None:
        add(node_termination_handler, "node-termination-handler", "platform")
    for team, namespaces in teams:
        for namespace in namespaces:
            add(namespace, f"team:{team}", "team")
    return [NamespaceSpec(name, tuple(sorted(set(users[name]))), owners[name]) for name in sorted(users)]
