"""Typed reads of untrusted YAML: each refusal becomes a problem naming the file, the document and the
field path, and reading goes on, so one run reports every problem."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from eks_karpenter.config.errors import KeyPath, show
from eks_karpenter.tools.migrate.fields import NEW_API_FIELDS, PLACEHOLDER, QUANTITY

# --- reporting ------------------------------------------------------------------------------------------------


def render_path(path: KeyPath) -> str:
    """`('spec', 'tags', 'kubernetes.io/cluster/x')` -> `spec.tags["kubernetes.io/cluster/x"]`."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part)}]"
    return out


@dataclass
class Where:
    """Which document a problem is in."""

    file: str
    doc: int
    prefix: KeyPath = ()
    kind: str = ""
    name: str = ""

    def label(self) -> str:
        """`file (document n): Kind 'name'`."""
        what = f"{self.kind} {self.name!r}" if self.kind and self.name else self.kind
        return f"{self.file} (document {self.doc})" + (f": {what}" if what else "")

    def at(self, path: KeyPath) -> str:
        where = render_path(self.prefix + path)
        return f"{self.label()}: {where}" if where else self.label()


@dataclass
class Report:
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def problem(self, where: Where, path: KeyPath, message: str) -> None:
        self.problems.append(f"{where.at(path)}: {message}")

    def note(self, where: Where, path: KeyPath, message: str) -> None:
        self.notes.append(f"{where.at(path)}: {message}")


# --- typed reads of untrusted YAML ------------------------------------------------------------------------------


@dataclass
class Ctx:
    report: Report
    where: Where

    def problem(self, path: KeyPath, message: str) -> None:
        self.report.problem(self.where, path, message)

    def note(self, path: KeyPath, message: str) -> None:
        self.report.note(self.where, path, message)

    def mapping(self, path: KeyPath, value: Any) -> dict[str, Any] | None:
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            self.problem(path, f"must be a mapping with string keys (got {brief(value)})")
            return None
        return value

    def seq(self, path: KeyPath, value: Any) -> list[Any] | None:
        if not isinstance(value, list):
            self.problem(path, f"must be a list (got {brief(value)})")
            return None
        return value

    def text(self, path: KeyPath, value: Any, placeholders_ok: bool = False) -> str | None:
        if not isinstance(value, str):
            self.problem(path, f"must be a string (got {brief(value)})")
            return None
        placeholder = None if placeholders_ok else PLACEHOLDER.search(value)
        if placeholder:
            self.problem(path, f"contains the shell placeholder {placeholder.group(0)}: run the file through "
                         "envsubst (or fill the value in) first")
            return None
        return value

    def scalar_text(self, path: KeyPath, value: Any) -> str | None:
        """A string-valued field that YAML may have typed as a number (`cost-center: 4711`)."""
        if isinstance(value, bool) or value is None or isinstance(value, dict | list):
            self.problem(path, f"must be a string (got {brief(value)})")
            return None
        return self.text(path, value if isinstance(value, str) else str(value))

    def integer(self, path: KeyPath, value: Any, low: int | None = None, high: int | None = None) -> int | None:
        if isinstance(value, bool) or not isinstance(value, int):
            self.problem(path, f"must be an integer (got {brief(value)})")
            return None
        if (low is not None and value < low) or (high is not None and value > high):
            bounds = f"{low if low is not None else '-inf'}..{high if high is not None else 'inf'}"
            self.problem(path, f"must be in {bounds} (got {value})")
            return None
        return value

    def boolean(self, path: KeyPath, value: Any) -> bool | None:
        if not isinstance(value, bool):
            self.problem(path, f"must be true or false (got {brief(value)})")
            return None
        return value

    def choice(self, path: KeyPath, value: Any, allowed: Iterable[str]) -> str | None:
        options = tuple(allowed)
        if value not in options:
            self.problem(path, f"must be one of {', '.join(options)} (got {brief(value)})")
            return None
        return str(value)

    def text_map(self, path: KeyPath, value: Any) -> dict[str, str] | None:
        data = self.mapping(path, value)
        if data is None:
            return None
        out: dict[str, str] = {}
        for key, item in data.items():
            text = self.scalar_text(path + (key,), item)
            if text is not None:
                out[key] = text
        return out if len(out) == len(data) else None

    def quantity_map(self, path: KeyPath, value: Any, keys: Iterable[str] | None = None) -> dict[str, str] | None:
        data = self.text_map(path, value)
        if data is None:
            return None
        allowed = tuple(keys) if keys is not None else None
        ok = True
        for key, item in data.items():
            if allowed is not None and key not in allowed:
                self.problem(path + (key,), f"unknown key; v1 accepts {', '.join(allowed)}")
                ok = False
            elif not QUANTITY.fullmatch(item):
                self.problem(path + (key,), f"not a Kubernetes quantity (got {brief(item)})")
                ok = False
        return data if ok else None

    def only(self, path: KeyPath, data: Mapping[str, Any], known: Iterable[str],
             hint: Callable[[str], str | None] | None = None) -> None:
        """Refuse every key of `data` not in `known`, with a hint for misplaced or newer-API fields."""
        allowed = frozenset(known)
        for key in data:
            if key in allowed:
                continue
            extra = hint(key) if hint else None
            if extra is None and key in NEW_API_FIELDS:
                extra = (f"`{key}` is the v1beta1/v1 spelling; this command reads v1alpha5/v1alpha1 objects "
                         f"(there it is {NEW_API_FIELDS[key]})")
            self.problem(path + (key,), extra or f"unknown field; expected one of {', '.join(sorted(allowed))}")


def brief(value: Any) -> str:
    """A value as a message quotes it (shortened)."""
    return show(value, width=60)
