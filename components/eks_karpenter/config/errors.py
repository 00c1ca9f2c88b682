"""Config problems and how they are reported: an `Issue` at a key path, `ConfigError` listing them with the
stack file's lines, and pydantic's errors turned into issues."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

import pulumi
from pydantic import BaseModel, ValidationError

KeyPath = tuple[str | int, ...]
"""A path of keys and list indexes into a document: a stack file's `config:` block (relative to it), a resource's
inputs in a plan, a legacy manifest."""


@dataclass(frozen=True)
class Issue:
    """One problem in the config, at a key path relative to the stack file's `config:` block."""

    path: KeyPath
    message: str
    value: Any = None
    has_value: bool = True
    line: int | None = None
    """Where the stack file says it, when the key path alone does not (a key written twice)."""

    def render(self, source: str, line: int | None = None) -> str:
        got = f" (got {show(self.value)})" if self.has_value else " (got nothing)" if self.path else ""
        where = f"{source}:{line}" if line else source
        key = f" {render_path(self.path)}:" if self.path else ""
        return f"{where}:{key} {self.message}{got}"


def line_of(lines: Mapping[KeyPath, int], path: KeyPath) -> int | None:
    """The line of `path`, or of its longest prefix that was written in the file."""
    for end in range(len(path), -1, -1):
        line = lines.get(path[:end])
        if line is not None:
            return line
    return None


def render_path(path: Sequence[str | int]) -> str:
    """`('eks-karpenter:nodePools', 0, 'name')` -> `eks-karpenter:nodePools[0].name`."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not part:
            out += '[""]'  # an empty key, which dots alone would hide
        elif any(c.isspace() for c in part):
            out += f"[{json.dumps(part, ensure_ascii=False)}]"  # quoted, or its spaces would read as the message's
        else:
            out += f".{part}" if out else part
    return out


def show(value: Any, width: int = 80) -> str:
    """A config value as it would be written in JSON, cut to `width` characters for messages."""
    try:
        text = json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= width else text[:width - 3] + "..."


class ConfigError(pulumi.RunError):
    """Invalid stack config. `pulumi.RunError`, so Pulumi prints the message without a traceback.

    `lines` maps key paths to the stack file line they were written on (see eks_karpenter/config/stackfile.py); an issue
    gets the line of its longest written prefix (a missing key: the line of the object that lacks it).
    """

    def __init__(self, source: str, issues: Iterable[Issue], lines: Mapping[KeyPath, int] | None = None) -> None:
        self.source = source
        self.lines = dict(lines or {})

        def line(issue: Issue) -> int:
            return issue.line or line_of(self.lines, issue.path) or 0

        # In file order, as a reader goes through the file to fix them.
        self.issues = sorted(issues, key=lambda i: (line(i), render_path(i.path), i.message))
        rendered = [i.render(source, line(i) or None) for i in self.issues]
        noun = "problem" if len(rendered) == 1 else "problems"
        super().__init__(f"invalid stack config, {len(rendered)} {noun}:\n" + "\n".join(rendered))


def suggest(word: str, candidates: Iterable[str]) -> str:
    """`: did you mean X?` for the closest candidate, or nothing."""
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f": did you mean `{close[0]}`?" if close else ""


def keys_at(annotation: Any, path: KeyPath) -> list[str]:
    """The keys (aliases) a config model accepts at `path` inside a value of type `annotation` (lists and maps
    walked through, optional and union members tried in turn); none when no model is there."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return keys_at(args[0], path)
    if origin in (Union, UnionType):
        return next((keys for a in args if a is not type(None) and (keys := keys_at(a, path))), [])
    if origin in (list, tuple, Sequence) and args:
        return keys_at(args[0], path[1:]) if path and isinstance(path[0], int) else []
    if origin in (dict, Mapping) and len(args) == 2:
        return keys_at(args[1], path[1:]) if path and isinstance(path[0], str) else []
    if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        return []
    fields = {(f.alias or name): f for name, f in annotation.__pydantic_fields__.items()}
    if not path:
        return list(fields)
    field = fields.get(str(path[0]))
    return keys_at(field.annotation, path[1:]) if field is not None else []


def issues_from_validation_error(err: ValidationError, prefix: KeyPath = (), schema: Any = None) -> list[Issue]:
    """Pydantic's errors as `Issue`s; locations already use the YAML (alias) spelling. With `schema`, the type
    validated, an unknown key at any depth gets the closest key of its mapping (`requirments`: did you mean
    `requirements`?)."""
    issues = []
    for e in err.errors():
        loc: KeyPath = tuple(p for p in e["loc"] if not _is_union_tag(p))
        missing = e["type"] == "missing"
        message = e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden" and schema is not None and loc and \
                (hint := suggest(str(loc[-1]), keys_at(schema, loc[:-1]))):
            message = f"unknown key{hint}"
        value = e.get("input")
        if e["type"] == "string_type" and isinstance(value, (bool, int, float)):
            # Unquoted, YAML reads `1.30` as 1.3, `0777` as 511 and `true` as a boolean.
            kind = "a boolean" if isinstance(value, bool) else "a number"
            message += f"; YAML read this value as {kind}: quote it to keep it as written"
        issues.append(Issue(prefix + loc, message, None if missing else e.get("input"), has_value=not missing))
    return issues


def _is_union_tag(part: Any) -> bool:
    # pydantic adds the member type name for unions (e.g. 'function-after[...]'); it is not a key.
    return isinstance(part, str) and ("[" in part or part in {"str", "int", "bool", "float"})
