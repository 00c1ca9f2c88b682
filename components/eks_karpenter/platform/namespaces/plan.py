"""Which namespaces the platform must create, as plain data. No Pulumi here.

A Helm release into a namespace that does not exist fails, and Helm's own `createNamespace` leaves a namespace
nobody manages (never deleted, never labelled). So every namespace the platform deploys into, other than the
ones Kubernetes itself provides, is a Namespace object the releases depend on: created before them, deleted
after them on destroy.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

PodSecurityLevel = Literal["privileged", "baseline", "restricted"]
"""A Pod Security Standard level (https://kubernetes.io/docs/concepts/security/pod-security-standards/)."""
PodSecurityMode = Literal["enforce", "audit"]

POD_SECURITY_PREFIX = "pod-security.kubernetes.io/"
_STRICTER: dict[str, PodSecurityLevel] = {"privileged": "baseline", "baseline": "restricted",
                                          "restricted": "restricted"}

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

    pod_security: tuple[tuple[str, str], ...] = ()
    """Pod Security admission labels (`pod_security_labels`), on team namespaces."""

    @property
    def retain_on_delete(self) -> bool:
        return self.owner == "team"

    def labels(self) -> dict[str, str]:
        key, value = MANAGED_BY_LABEL
        return {key: value, **dict(self.pod_security)}


def pod_security_labels(level: PodSecurityLevel, mode: PodSecurityMode = "enforce") -> dict[str, str]:
    """The Pod Security admission labels of a namespace held to `level`.

    `enforce`: pods that break `level` are refused; audit and warn run one level stricter, so the team sees what
    the next level would refuse. `audit`: nothing is refused yet; audit and warn run at `level` (the step a
    running stack takes before it enforces). Versions follow the cluster (`latest`).
    """
    labels = {}
    if mode == "enforce":
        labels.update({"enforce": level, "enforce-version": "latest"})
        watched = _STRICTER[level]
    else:
        watched = level
    labels.update({"audit": watched, "audit-version": "latest", "warn": watched, "warn-version": "latest"})
    return {POD_SECURITY_PREFIX + k: v for k, v in labels.items()}


def platform_namespaces(*, karpenter: str, node_termination_handler: str | None,
                        teams: Iterable[tuple[str, Iterable[str]]] = (),
                        pod_security: Mapping[str, Mapping[str, str]] | None = None) -> list[NamespaceSpec]:
    """The namespaces to create, sorted by name; built-in ones are left out.

    `teams` pairs a team name with the namespaces its access entries are scoped to; `pod_security` maps a
    namespace to its Pod Security labels (`pod_security_labels`).
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
    security = pod_security or {}
    return [NamespaceSpec(name, tuple(sorted(set(users[name]))), owners[name],
                          tuple(sorted(security.get(name, {}).items()))) for name in sorted(users)]
