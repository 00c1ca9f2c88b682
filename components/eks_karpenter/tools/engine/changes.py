"""The records a plan diff is made of: one changed value (`PropertyChange`), one changed resource
(`ResourceChange`), and how a property path is written. Their own module so that the diff and the code reading
its changes (fleets, refusals) both import them without importing each other."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from eks_karpenter.config.errors import KeyPath
from eks_karpenter.tools.engine.document import PlannedResource

Op = Literal["create", "update", "replace", "delete", "forget"]
OPS: tuple[Op, ...] = ("create", "update", "replace", "delete", "forget")
SYMBOL: dict[Op, str] = {"create": "+", "update": "~", "replace": "±", "delete": "-", "forget": "○"}
"""`forget`: a resource with `retainOnDelete` leaves the stack's state; Pulumi deletes nothing in the cloud."""

_IDENT = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")


class _Missing:
    """An absent value (a property added or removed), distinct from an explicit null."""

    def __repr__(self) -> str:
        return "(none)"


MISSING: Any = _Missing()


@dataclass(frozen=True)
class PropertyChange:
    """One changed value: an input property path, or a resource option when `option` is true."""

    path: KeyPath
    old: Any
    new: Any
    replaces: bool = False
    option: bool = False

    @property
    def label(self) -> str:
        return f"option {format_path(self.path)}" if self.option else format_path(self.path)


@dataclass(frozen=True)
class ResourceChange:
    """A resource that is created, updated, replaced or deleted."""

    op: Op
    resource: PlannedResource
    """The new registration (the old one for a delete)."""
    properties: tuple[PropertyChange, ...] = ()
    protected: bool = False
    delete_first: bool = False
    """For a replacement: the old resource is deleted before the new one exists (`deleteBeforeReplace`, or a
    fixed physical name); otherwise Pulumi creates the replacement first."""

    @property
    def order(self) -> str:
        """How a replacement happens: `create-before-delete` or `delete-before-create` (empty otherwise)."""
        if self.op != "replace":
            return ""
        return "delete-before-create" if self.delete_first else "create-before-delete"
    replaced_with: tuple[str, ...] = ()
    """URNs of replaced dependencies that replace this resource too (`REPLACED_WITH`)."""

    @property
    def blocked(self) -> bool:
        """`pulumi up` refuses to delete or replace a protected resource."""
        return self.protected and self.op in ("replace", "delete", "forget")


def parse_path(dotted: str) -> KeyPath:
    """`spec.requirements[0].values` -> ("spec", "requirements", 0, "values")."""
    parts: list[str | int] = []
    for piece in dotted.split("."):
        name, *indexes = piece.split("[")
        if name:
            parts.append(name)
        parts += [int(i.rstrip("]")) for i in indexes]
    return tuple(parts)


def format_path(path: KeyPath) -> str:
    """The inverse of `parse_path`; keys that are not identifiers are quoted, as Pulumi prints them."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _IDENT.match(part):
            text += f".{part}" if text else part
        else:
            text += f"[{json.dumps(part)}]"
    return text or "(all)"
