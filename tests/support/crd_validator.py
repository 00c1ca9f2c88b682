"""Test support: check a Karpenter object against its upstream CRD the way the apiserver would.

Three passes, in the apiserver's order: apply the schema's defaults; validate the structure with a strict copy
of the OpenAPI schema (unknown fields refused, `nullable` honoured, set-lists unique); evaluate every
`x-kubernetes-validations` CEL rule at the node it is attached to. Transition rules (those using `oldSelf`) only
run on updates, so they are skipped. The object name is checked as a DNS-1123 subdomain, as for any resource.

The CRDs are read from `tests.conftest.UPSTREAM / "karpenter"`, compiled once and cached.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from cel_expr_python import cel
from cel_expr_python.ext import ext_optional, ext_strings

from tests.support import UPSTREAM

CRD_DIR = UPSTREAM / "karpenter"
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_JSON_TYPES: dict[str, type | tuple[type, ...]] = {"object": dict, "array": list, "string": str, "boolean": bool,
                                                   "integer": int, "number": (int, float)}


@dataclass(frozen=True)
class CompiledCrd:
    """One served version of a CRD: its raw schema (defaults, CEL) and a strict structural validator."""

    schema: dict[str, Any]
    validator: jsonschema.Draft7Validator


def strict_schema(node: Any) -> Any:
    """A copy of an OpenAPI v3 CRD schema for jsonschema: unknown fields refused, `nullable` as a null type,
    `x-kubernetes-list-type: set` as unique items."""
    if isinstance(node, list):
        return [strict_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: strict_schema(v) for k, v in node.items()}
    if out.pop("nullable", False) and "type" in out:
        out["type"] = [out["type"], "null"]
    if "properties" in out and "additionalProperties" not in out and not out.get(
            "x-kubernetes-preserve-unknown-fields"):
        out["additionalProperties"] = False
    if out.get("x-kubernetes-list-type") == "set":
        out["uniqueItems"] = True
    return out


@functools.cache
def _crds(crd_dir: Path = CRD_DIR) -> dict[tuple[str, str], CompiledCrd]:
    """(apiVersion, kind) -> compiled schema, for every served version of every CRD in `crd_dir` (default: the
    pinned release's; `UPSTREAM / "karpenter-<version>"` for an earlier supported release's)."""
    out: dict[tuple[str, str], CompiledCrd] = {}
    for path in sorted(crd_dir.glob("*_*.yaml")):  # CRD files are <group>_<plural>.yaml
        doc = yaml.safe_load(path.read_text())
        if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
            continue
        spec = doc["spec"]
        for version in spec["versions"]:
            if not version.get("served"):
                continue
            schema = version["schema"]["openAPIV3Schema"]
            strict = strict_schema(schema)
            strict.setdefault("properties", {})["metadata"] = {"type": "object"}
            jsonschema.Draft7Validator.check_schema(strict)
            validator = jsonschema.Draft7Validator(strict, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
            out[(f"{spec['group']}/{version['name']}", spec["names"]["kind"])] = CompiledCrd(schema, validator)
    return out


def apply_defaults(schema: dict[str, Any], value: Any) -> None:
    """Fill in schema defaults in place, recursing into defaulted values too (as the apiserver does)."""
    if isinstance(value, dict):
        for key, sub in schema.get("properties", {}).items():
            if key not in value and "default" in sub:
                value[key] = copy.deepcopy(sub["default"])
            if key in value:
                apply_defaults(sub, value[key])
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for item in value.values():
                apply_defaults(extra, item)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for item in value:
            apply_defaults(schema["items"], item)


def _find(text: str, pattern: str) -> str:
    # Kubernetes' CEL regex library: the first match, or "" when there is none.
    match = re.search(pattern, text)
    return match.group(0) if match else ""


@functools.cache
def _env() -> Any:
    t = cel.Type
    find = cel.FunctionDecl("find", [cel.Overload("string_find_string", return_type=t.STRING,
                                                  parameters=[t.STRING, t.STRING], is_member=True, impl=_find)])
    return cel.NewEnv(variables={"self": t.DYN, "oldSelf": t.DYN},
                      extensions=[ext_strings.ExtStrings(), ext_optional.ExtOptional()], functions=[find])


@functools.cache
def _compile(rule: str) -> Any:
    return _env().compile(rule)


def rule_holds(rule: str, value: Any) -> bool:
    """Evaluate one CEL rule with `self` = value. An evaluation error counts as a failure, as in the apiserver."""
    result = _compile(rule).eval(data={"self": value})
    return bool(result.type() == cel.Type.BOOL and result.plain_value() is True)


def _matches_type(schema: dict[str, Any], value: Any) -> bool:
    expected = _JSON_TYPES.get(schema.get("type", ""))
    if expected is None:
        return True
    return isinstance(value, expected) and not (expected is int and isinstance(value, bool))


def cel_errors(schema: dict[str, Any], value: Any, path: str = "") -> Iterable[str]:
    """Every failing CEL rule under `schema`, as `<path>: <message>`. Structural mismatches are left to the schema
    pass (a rule on an object is not run on a string)."""
    if not _matches_type(schema, value):
        return
    for rule in schema.get("x-kubernetes-validations", []):
        text = rule["rule"]
        if "oldSelf" in text:
            continue
        if not rule_holds(text, value):
            yield f"{path or '.'}: {rule.get('message') or 'failed rule: ' + text}"
    if isinstance(value, dict):
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                yield from cel_errors(sub, value[key], f"{path}.{key}")
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            for key, item in value.items():
                yield from cel_errors(extra, item, f"{path}[{key}]")
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            yield from cel_errors(schema["items"], item, f"{path}[{i}]")


def _json_path(parts: Iterable[str | int]) -> str:
    out = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)
    return out or "."


def defaulted(obj: dict[str, Any]) -> dict[str, Any]:
    """A copy of `obj` with its CRD's defaults applied (what the apiserver stores)."""
    crd = _crds()[(obj["apiVersion"], obj["kind"])]
    out = copy.deepcopy(obj)
    apply_defaults(crd.schema, out)
    return out


def validate_object(obj: dict[str, Any], crd_dir: Path = CRD_DIR) -> list[str]:
    """Every reason the apiserver would refuse to create `obj` with the CRDs of `crd_dir`; empty when it would
    accept it."""
    key = (str(obj.get("apiVersion")), str(obj.get("kind")))
    crd = _crds(crd_dir).get(key)
    if crd is None:
        return [f".: no CRD in {crd_dir} serves apiVersion {key[0]} kind {key[1]}"]
    value = copy.deepcopy(obj)
    apply_defaults(crd.schema, value)
    errors: list[str] = []
    name = value.get("metadata", {}).get("name") if isinstance(value.get("metadata"), dict) else None
    if not isinstance(name, str) or len(name) > 253 or not _SUBDOMAIN.match(name):
        errors.append(f".metadata.name: must be a lowercase RFC 1123 subdomain (got {name!r})")
    errors += [f"{_json_path(e.absolute_path)}: {e.message}" for e in crd.validator.iter_errors(value)]
    errors += cel_errors(crd.schema, value)
    return errors
