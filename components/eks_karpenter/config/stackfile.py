"""Read a Pulumi stack file (`Pulumi.<stack>.yaml`) the way the Pulumi CLI reads it, keeping every value's line.

The Pulumi CLI parses stack files with Go's gopkg.in/yaml.v3 and hands the program a flat map of namespaced keys
(objects as JSON text). This module reproduces that reading, so the offline plan and `pulumi up` see the same
values, and keeps where each value was written, so every error can say `stacks/Pulumi.prod.yaml:42: key: ...`:

- one parse per file, with libyaml (PyYAML's C loader) when it is installed, the pure-Python parser otherwise;
- duplicate mapping keys are refused, naming both lines (yaml.v3: "mapping key already defined");
- plain scalars resolve as yaml.v3 resolves them into an untyped value: only `true`/`false` (any case spelling
  of those two) are booleans, so `on`, `yes`, `no` and `off` stay strings; date-like values stay strings; no
  sexagesimal numbers (`1:30` is a string); integers in Go syntax (`0x1F`, `0o17`, `0b101`, `017`, `1_000`);
  numbers too large for 64 bits become floats; `~`/`null`/empty are null;
- anchors, aliases and `<<` merge keys work as in yaml.v3, with a bound on alias expansion;
- `{secure: ...}` values (ciphertext that needs the stack's secrets provider) become the placeholder `[secret]`.

Nothing here raises on bad input except `ConfigError`: every problem becomes an `Issue` with a key path.
Pure: no Pulumi engine, no network.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from eks_karpenter.config.errors import ConfigError, Issue, KeyPath, suggest

SECRET = "[secret]"
"""What a `{secure: ...}` value reads as offline: its plaintext needs the stack's secrets provider."""

MAX_BYTES = 4 * 1024 * 1024
"""Stack files are hand-written; anything this large is a mistake (and would only slow every plan down)."""
MAX_NODES = 200_000
"""Bound on values after alias expansion (yaml.v3 refuses "excessive aliasing" the same way)."""

# Top-level keys of a stack file (Pulumi's ProjectStack).
STACK_FILE_KEYS = ("config", "secretsprovider", "encryptedkey", "encryptionsalt", "environment")

_PLAIN = "tag:eks-karpenter:plain"  # an untagged plain scalar: resolved below, as yaml.v3 resolves it
_STR, _INT, _FLOAT = "tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"
_BOOL, _NULL = "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null"
_MAP, _SEQ, _MERGE = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:merge"

# yaml.v3's resolve table (YAML 1.2 core schema spellings).
_CONSTANTS: dict[str, Any] = {
    "true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False,
    "": None, "~": None, "null": None, "Null": None, "NULL": None,
    ".nan": math.nan, ".NaN": math.nan, ".NAN": math.nan,
    ".inf": math.inf, ".Inf": math.inf, ".INF": math.inf, "+.inf": math.inf, "+.Inf": math.inf, "+.INF": math.inf,
    "-.inf": -math.inf, "-.Inf": -math.inf, "-.INF": -math.inf,
}
# Go's strconv.ParseInt(s, 0, 64) syntax (after yaml.v3 removes underscores).
_GO_INT = re.compile(r"([+-]?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)")
_YAML_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_DOT_FLOAT = re.compile(r"\.[0-9]+([eE][-+]?[0-9]+)?")


class _PlainMarker:
    """Composes nodes only; untagged plain scalars get a marker tag so they are resolved as yaml.v3 does."""

    def resolve(self, kind: type[Node], value: Any, implicit: Any) -> str:
        if kind is ScalarNode:
            return _PLAIN if implicit[0] else _STR
        return _SEQ if kind is SequenceNode else _MAP


if getattr(yaml, "__with_libyaml__", False):  # libyaml: a C parser, far faster on large files
    class _Loader(_PlainMarker, yaml.CSafeLoader):
        pass
else:  # pragma: no cover - PyYAML built without libyaml
    class _Loader(_PlainMarker, yaml.SafeLoader):  # type: ignore[no-redef]
        pass


def _go_int(text: str) -> int | None:
    match = _GO_INT.fullmatch(text)
    if match is None or len(text) > 80:
        return None
    sign, digits = match.groups()
    if digits[:2] in ("0x", "0X"):
        value = int(digits[2:], 16)
    elif digits[:2] in ("0o", "0O"):
        value = int(digits[2:], 8)
    elif digits[:2] in ("0b", "0B"):
        value = int(digits[2:], 2)
    elif digits.startswith("0") and len(digits) > 1:
        value = int(digits[1:], 8)  # yaml.v3 still reads YAML 1.1 octals (0777)
    else:
        value = int(digits)
    value = -value if sign == "-" else value
    # int64, or uint64 for positive values; anything larger falls through to a float, as in Go.
    return value if -(2**63) <= value < 2**64 else None


def _finite(text: str) -> float | None:
    value = float(text)
    return value if math.isfinite(value) else None  # Go's ParseFloat fails on overflow: the text stays a string


def resolve_plain(text: str) -> Any:
    """The value of an untagged plain scalar, as yaml.v3 decodes it into an untyped (`interface{}`) value."""
    if text in _CONSTANTS:
        return _CONSTANTS[text]
    first = text[0]
    if first == "." and _DOT_FLOAT.fullmatch(text):
        value = _finite(text)
        return text if value is None else value
    if first in "+-0123456789":
        plain = text.replace("_", "")
        number = _go_int(plain)
        if number is not None:
            return number
        if _YAML_FLOAT.fullmatch(plain):
            value = _finite(plain)
            if value is not None:
                return value
    # Dates (`2026-01-31`), times (`1:30`), `on`/`yes`/`no`/`off` and everything else: a string.
    return text


class _Reader:
    """Nodes -> plain values, recording the line of every key path and every problem.

    With `project`, children of the top-level `config:` mapping are keyed by their namespaced config key
    (`nodePools` -> `eks-karpenter:nodePools`), so lines and issues use the paths messages show. Mappings
    `{secure: <ciphertext>}` read as `SECRET`.
    """

    def __init__(self, project: str | None = None) -> None:
        self.project = project
        self.issues: list[Issue] = []
        self.lines: dict[KeyPath, int] = {}
        self.config_key_lines: dict[str, int] = {}
        self.nodes = 0
        self.active: set[int] = set()

    def issue(self, path: KeyPath, line: int, message: str, value: Any = None, has_value: bool = True) -> None:
        self.issues.append(Issue(path, message, value, has_value, line))

    def scalar(self, node: ScalarNode, path: KeyPath) -> Any:
        tag, text = node.tag, node.value
        if tag == _PLAIN:
            return resolve_plain(text)
        if tag == _STR:
            return text
        if tag == _BOOL and text in ("true", "True", "TRUE", "false", "False", "FALSE"):
            return text.lower() == "true"
        if tag == _NULL and text in ("", "~", "null", "Null", "NULL"):
            return None
        if tag in (_INT, _FLOAT):
            value = resolve_plain(text) if text else text
            if (isinstance(value, int) and not isinstance(value, bool)) or (
                    tag == _FLOAT and isinstance(value, float)):
                return float(value) if tag == _FLOAT else value
        self.issue(path, node.start_mark.line + 1, f"unsupported YAML tag {tag} here (quote the value to keep it "
                   "a string)", text)
        return None

    def value(self, node: Node, path: KeyPath) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise _TooLarge
        cls = node.__class__
        if cls is ScalarNode:
            if node.tag == _PLAIN:  # the common case, inlined: most values are plain scalars
                text = node.value
                return _CONSTANTS[text] if text in _CONSTANTS else resolve_plain(text)
            return self.scalar(node, path)  # type: ignore[arg-type]
        ident = id(node)
        if ident in self.active:  # an alias inside its own anchor
            self.issue(path, node.start_mark.line + 1, "recursive YAML alias: a value may not contain itself", None,
                       False)
            return None
        self.active.add(ident)
        try:
            if cls is SequenceNode and node.tag == _SEQ:
                out: list[Any] = []
                lines = self.lines
                for i, item in enumerate(node.value):
                    item_path = path + (i,)
                    if item_path not in lines:
                        lines[item_path] = item.start_mark.line + 1
                    out.append(self.value(item, item_path))
                return out
            if cls is MappingNode and node.tag == _MAP:
                return self.mapping(node, path)  # type: ignore[arg-type]
            self.issue(path, node.start_mark.line + 1, f"unsupported YAML tag {node.tag} here", None, False)
            return None
        finally:
            self.active.discard(ident)

    def key(self, node: Node, path: KeyPath) -> str | None:
        if isinstance(node, ScalarNode):
            key = self.scalar(node, path)
            if isinstance(key, str):
                return key
            self.issue(path + (str(node.value),), node.start_mark.line + 1, "keys must be strings: quote this key",
                       key)
        else:
            self.issue(path, node.start_mark.line + 1, "keys must be strings, not lists or mappings", None, False)
        return None

    def _child(self, path: KeyPath, key: str, line: int) -> KeyPath | None:
        if path != ("config",) or self.project is None:
            return path + (key,)
        full = config_key(key, self.project)
        if full is None:
            self.issue((key,), line, "not a config key: keys are `namespace:name` or a bare `name` of this project",
                       None, False)
            return None
        if full in self.config_key_lines:
            first = next(k for k, n in self.config_key_lines.items() if config_key(k, self.project) == full)
            self.issue((full,), line, f"duplicate key: {key!r} is the same key as {first!r} at line "
                       f"{self.config_key_lines[first]}; Pulumi refuses a stack file with a key written twice",
                       None, False)
            return None
        self.config_key_lines[key] = self.config_key_lines[full] = line
        return (full,)

    def mapping(self, node: MappingNode, path: KeyPath) -> Any:
        out: dict[str, Any] = {}
        seen: dict[str, int] = {}
        merged: dict[str, Any] = {}
        lines = self.lines
        for key_node, value_node in node.value:
            if key_node.__class__ is ScalarNode and key_node.tag == _PLAIN:
                key = key_node.value  # a plain key: resolves to itself unless it reads as null, bool or number
                if key == "<<":
                    merged.update(self.merge(value_node, path))
                    continue
                if key in _CONSTANTS or key[:1] in "+-.0123456789":
                    key = self.key(key_node, path)
            else:
                key = self.key(key_node, path)
            if key is None:
                continue
            line = key_node.start_mark.line + 1
            if key in seen:
                named = (config_key(key, self.project) or key,) if path == ("config",) and self.project else (
                    path + (key,))
                why = "; Pulumi refuses a stack file with a key written twice" if self.project else ""
                self.issue(named, line, f"duplicate key {key!r}: also defined at line {seen[key]}{why}", None, False)
                continue
            seen[key] = line
            child = self._child(path, key, line)
            if child is None:
                continue
            if child not in lines:
                lines[child] = line
            out[str(child[-1])] = self.value(value_node, child)
        if len(out) == 1 and isinstance(out.get("secure"), str) and not merged:
            return SECRET  # ciphertext for the stack's secrets provider
        # yaml.v3: keys written in the mapping win over merged ones.
        return {**{k: v for k, v in merged.items() if k not in out}, **out} if merged else out

    def merge(self, node: Node, path: KeyPath) -> dict[str, Any]:
        sources = node.value if isinstance(node, SequenceNode) else [node]
        out: dict[str, Any] = {}
        for source in sources:
            value = self.value(source, path)
            if not isinstance(value, dict):
                self.issue(path, source.start_mark.line + 1, "a `<<` merge key takes a mapping or a list of mappings",
                           value)
                continue
            out = {**value, **out}  # earlier mappings in the list win
        return out


class _TooLarge(Exception):
    pass


def config_key(key: str, project: str) -> str | None:
    """Pulumi's config key spelling: `ns:name`, a bare `name` (this project's), or the legacy `ns:config:name`."""
    parts = key.split(":")
    if len(parts) == 1:
        return f"{project}:{key}" if key else None
    if len(parts) == 2:
        return key if all(parts) else None
    if len(parts) == 3 and parts[1] == "config" and parts[0] and parts[2]:
        return f"{parts[0]}:{parts[2]}"
    return None


def or_json_text(schema: dict[str, Any]) -> dict[str, Any]:
    """A stack-file value's JSON Schema that also accepts the value written as its JSON text, which `pulumi new`
    writes for a prompted object or list (`'{"natGateways": "single"}'`) and a program reads the same (`as_text`:
    every value reaches it as text). Scalars are returned as they are."""
    if schema.get("type") in ("string", "boolean", "integer", "number"):
        return schema
    value = {k: v for k, v in schema.items() if k not in ("description", "default", "title")}
    text = {"type": "string", "contentMediaType": "application/json", "contentSchema": value}
    return {**{k: v for k, v in schema.items() if k not in value}, "anyOf": [value, text]}


def as_text(value: Any) -> str:
    """A config value as the Pulumi CLI hands it to a program: strings as they are, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), allow_nan=True)


@dataclass(frozen=True)
class StackFile:
    """A parsed stack file: namespaced config values, the line of every key path, and reading problems."""

    source: str
    """The file as named in messages (relative to the project, e.g. `stacks/Pulumi.prod.yaml`)."""
    config: dict[str, Any] = field(default_factory=dict)
    """`config:` with namespaced keys (`eks-karpenter:nodePools`), secure values as `[secret]`."""
    lines: dict[KeyPath, int] = field(default_factory=dict)
    """Line (1-based) where each key path was written, keys namespaced as in `config`."""
    issues: tuple[Issue, ...] = ()
    """Problems the Pulumi CLI itself refuses (syntax, duplicate keys, bad key names): fatal."""

    def flat(self) -> dict[str, str]:
        """Pulumi's flat config map, as the runtime gives it to the program."""
        return {key: as_text(value) for key, value in self.config.items()}

    def error(self, extra: Iterable[Issue] = ()) -> ConfigError:
        return ConfigError(self.source, [*self.issues, *extra], self.lines)


def parse_yaml(text: str, project: str | None = None) -> tuple[Any, dict[KeyPath, int], list[Issue]]:
    """One YAML document as yaml.v3 reads it: (value, line of each key path, problems). Never raises.

    With `project`, it is read as a stack file: `config:` keys namespaced (see `_Reader`)."""
    reader = _Reader(project)
    try:
        loader = _Loader(text)
        try:
            root = loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = int(mark.line) + 1 if mark is not None else 1
        problem = " ".join(filter(None, (exc.context, exc.problem))) or "invalid YAML"
        return None, {(): line}, [Issue((), f"not valid YAML: {problem}", None, False)]
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow (control characters, ...)
        line = text.count("\n", 0, exc.position) + 1
        what = f"character {exc.character!r}" if isinstance(exc.character, str) else "byte"
        return None, {(): line}, [Issue((), f"not valid YAML: {what} is not allowed in YAML text ({exc.reason})",
                                        None, False)]
    except (yaml.YAMLError, ValueError, RecursionError) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return None, {}, [Issue((), f"not valid YAML: {message}", None, False)]
    if root is None:
        return None, {}, []  # an empty document
    try:
        body = reader.value(root, ())
    except _TooLarge:
        return None, {}, [Issue((), f"more than {MAX_NODES} values after expanding YAML aliases", None, False)]
    except RecursionError:
        return None, {}, [Issue((), "nested too deeply", None, False)]
    return body, reader.lines, reader.issues


def parse_yaml_documents(text: str) -> tuple[list[tuple[Any, dict[KeyPath, int]]], list[Issue]]:
    """Every document of a YAML stream (`---`-separated, as `kubectl get -o yaml` or a manifest folder gives),
    read like `parse_yaml` reads one: ([(value, line of each key path), ...], problems). Lines count from the
    start of the stream; empty documents are left out. Never raises."""
    docs: list[tuple[Any, dict[KeyPath, int]]] = []
    issues: list[Issue] = []
    try:
        loader = _Loader(text)
        try:
            while loader.check_node():
                root = loader.get_node()
                if root is None:
                    continue
                reader = _Reader()
                try:
                    body = reader.value(root, ())
                except _TooLarge:
                    return docs, [Issue((), f"more than {MAX_NODES} values after expanding YAML aliases", None,
                                        False)]
                reader.lines.setdefault((), root.start_mark.line + 1)
                if body is not None:
                    docs.append((body, reader.lines))
                issues += reader.issues
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = " ".join(filter(None, (exc.context, exc.problem))) or "invalid YAML"
        issues.append(Issue((), f"not valid YAML: {problem}", None, False,
                            int(mark.line) + 1 if mark is not None else 1))
    except (yaml.YAMLError, ValueError, RecursionError) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        issues.append(Issue((), f"not valid YAML: {message}", None, False))
    return docs, issues


def parse_stack_text(text: str, source: str, project: str) -> StackFile:
    """Parse a stack file's text. Never raises: problems are in `StackFile.issues`."""
    body, lines, read_issues = parse_yaml(text, project)
    if read_issues and body is None:
        return StackFile(source, {}, lines, tuple(read_issues))
    if body is None:
        return StackFile(source)  # an empty file: no config
    if not isinstance(body, dict):
        return StackFile(source, {}, lines, (*read_issues, Issue(
            (), "a stack file is a mapping with a `config:` mapping", body)))
    issues = list(read_issues)
    for key in body:
        if key not in STACK_FILE_KEYS:
            issues.append(Issue((key,), f"unknown stack file key{suggest(key, STACK_FILE_KEYS)}; known keys: "
                                f"{', '.join(STACK_FILE_KEYS)}", body[key]))
    config = body.get("config")
    if config is not None and not isinstance(config, dict):
        issues.append(Issue(("config",), "`config:` must be a mapping of keys to values", config))
        config = None
    # A key missing from `config:` is reported at the `config:` line.
    if ("config",) in lines:
        lines[()] = lines[("config",)]
    return StackFile(source, config or {}, lines, tuple(issues))


_CACHE: dict[tuple[str, str, bytes], StackFile] = {}


def read_stack_file(path: Path, source: str, project: str) -> StackFile:
    """Read and parse one stack file. Unreadable, binary or oversized files give a `StackFile` with one issue.

    Parsed once per content: the offline plan and the program it runs both read the same file, and the second
    read only compares bytes (keyed on a digest, never on timestamps, which are too coarse for a file rewritten
    in the same millisecond)."""
    try:
        if path.stat().st_size > MAX_BYTES:
            return StackFile(source, issues=(Issue((), f"the stack file is {path.stat().st_size} bytes; a stack "
                                                       f"file over {MAX_BYTES // 1024 // 1024} MiB is not a "
                                                       "hand-written config", None, False),))
        data = path.read_bytes()
    except OSError as exc:
        return StackFile(source, issues=(Issue((), f"cannot read the stack file: {exc.strerror}", None, False),))
    cache_key = (source, project, hashlib.sha256(data).digest())
    hit = _CACHE.get(cache_key)
    if hit is not None:
        return hit
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        result = StackFile(source, issues=(Issue((), f"not UTF-8 text (byte {exc.start})", None, False),))
    else:
        result = parse_stack_text(text, source, project)
    if len(_CACHE) > 64:
        _CACHE.clear()
    _CACHE[cache_key] = result
    return result


@cache
def provider_config_keys(package: str) -> frozenset[str]:
    """The config keys a Pulumi provider package reads (`<package>/config/vars.py`, read as text, not imported,
    so checking a stack file does not import the whole provider SDK)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return frozenset()
    for location in spec.submodule_search_locations:
        vars_file = os.path.join(location, "config", "vars.py")
        try:
            with open(vars_file, encoding="utf-8") as handle:
                text = handle.read()
        except OSError:
            continue
        return frozenset(re.findall(r"__config__\.get\w*\('([A-Za-z0-9_]+)'", text))
    return frozenset()

