"""Whether a NodePool or EC2NodeClass edit drifts running nodes, by Karpenter's rules (`drift_rules.py`): pure.

- `pool_drift`: the causes of drift in a NodePool edit: hashed template fields (every node of the pool), and
  requirements narrowed (the nodes that no longer satisfy them); widened requirements and behavioural fields
  (budgets, limits, weight, disruption) drift nothing.
- `class_drift`: the causes in an EC2NodeClass edit: hashed fields (every node using the class), and selector
  terms (nodes roll only if what the terms resolve to changes; a new AMI alias release does change it).

Values are compared as Karpenter hashes them: lists as sets, a null field as absent; so reordering taints or
block devices drifts nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from eks_karpenter.catalogue.match import Requirement
from eks_karpenter.tools.engine.document import input_at
from eks_karpenter.tools.engine.drift_rules import HASHED, RESOLVED, RESOLVES, DriftClass, DriftRules, field_class


def hash_view(value: Any) -> Any:
    """`value` as Karpenter's hash sees it: nulls dropped, lists as sorted sets."""
    if isinstance(value, Mapping):
        return {str(k): hash_view(v) for k, v in sorted(value.items()) if v is not None}
    if isinstance(value, list | tuple):
        items = {json.dumps(hash_view(v), sort_keys=True) for v in value}
        return [json.loads(i) for i in sorted(items)]
    return value


def _leaves(table: Mapping[str, DriftClass], old: Mapping[str, Any], new: Mapping[str, Any], hashed_under: str,
            ) -> dict[str, tuple[Any, Any]]:
    """Table path -> (old, new) for every table entry whose value differs as hashed, and for every field under
    `hashed_under` that the table does not know (a later release's): such a field is hashed unless tagged."""
    changed: dict[str, tuple[Any, Any]] = {}
    unknown = sorted(set(input_at(old, hashed_under) or {}) | set(input_at(new, hashed_under) or {}))
    paths = [*table, *(f"{hashed_under}.{k}" for k in unknown
                       if field_class(table, (*hashed_under.split("."), k)) is None)]
    for path in paths:
        a, b = input_at(old, path), input_at(new, path)
        if hash_view(a) != hash_view(b):
            changed[path] = (a, b)
    return changed


def _short(path: str) -> str:
    return path.removeprefix("spec.template.spec.").removeprefix("spec.template.").removeprefix("spec.")


def _fields(paths: Iterable[str]) -> str:
    names = sorted(_short(p) for p in paths)
    return ", ".join(f"`{n}`" for n in names[:3]) + (" ..." if len(names) > 3 else "")


# --- NodePool ---------------------------------------------------------------------------------------------------

def pool_drift(old: Mapping[str, Any], new: Mapping[str, Any], rules: DriftRules) -> list[str]:
    """Why the edit of a NodePool manifest (`old` -> `new`) drifts nodes, one line per cause; empty when none."""
    changed = _leaves(rules.node_pool, old, new, "spec.template.spec")
    causes = []
    hashed = [p for p in changed if (field_class(rules.node_pool, tuple(p.split("."))) or HASHED) == HASHED]
    if hashed:
        causes.append(f"its template changed ({_fields(hashed)}): every node drifts (Karpenter {rules.release} "
                      "hashes these fields)")
    if "spec.template.spec.requirements" in changed:
        before, after = changed["spec.template.spec.requirements"]
        narrowed = narrowed_requirements(_requirements(before), _requirements(after))
        if narrowed:
            causes.append("its requirements narrowed (" + "; ".join(narrowed) + "): nodes that no longer satisfy "
                          "them drift, the others stay")
    return causes


def _requirements(items: Any) -> list[Requirement]:
    return [Requirement.from_manifest(r) for r in items or ()]


@dataclass(frozen=True)
class _Allowed:
    """What one label key's requirements admit on a node: the label absent, and which values."""

    absent: bool = True
    values: frozenset[str] | None = None
    """The values admitted; None: any value but `excluded` (within the bounds)."""
    excluded: frozenset[str] = frozenset()
    low: int | None = None
    """Inclusive integer bounds; with a bound, only integer values are admitted."""
    high: int | None = None

    def admits(self, value: str) -> bool:
        if (self.values is not None and value not in self.values) or value in self.excluded:
            return False
        if self.low is None and self.high is None:
            return True
        try:
            number = int(value)
        except ValueError:
            return False
        return (self.low is None or number >= self.low) and (self.high is None or number <= self.high)


def _allowed(reqs: Iterable[Requirement]) -> _Allowed:
    """Karpenter's drift check reads a NodeClaim's labels against the requirements: `In`, `Exists` and the
    numeric operators need the label, `NotIn` and `DoesNotExist` admit its absence; every requirement applies."""
    absent, values, excluded = True, None, frozenset[str]()
    low: int | None = None
    high: int | None = None
    for r in reqs:
        op = r.operator
        if op in ("In", "Exists", "Gt", "Gte", "Lt", "Lte"):
            absent = False
        if op == "In":
            values = frozenset(r.values) if values is None else values & frozenset(r.values)
        elif op == "NotIn":
            excluded |= frozenset(r.values)
        elif op == "DoesNotExist":
            values = frozenset()
        elif op in ("Gt", "Gte"):
            bound = int(r.values[0]) + (op == "Gt")
            low = bound if low is None else max(low, bound)
        elif op in ("Lt", "Lte"):
            bound = int(r.values[0]) - (op == "Lt")
            high = bound if high is None else min(high, bound)
    return _Allowed(absent, values, excluded, low, high)


_FINITE_RANGE = 1000


def _lost(old: _Allowed, new: _Allowed) -> list[str] | None:
    """Values `old` admits and `new` does not, when they can be listed; None when some are lost that cannot
    (an open set narrowed); [] when none is lost."""
    values = old.values
    if values is None and old.low is not None and old.high is not None and old.high - old.low < _FINITE_RANGE:
        values = frozenset(str(n) for n in range(old.low, old.high + 1))
    if values is not None:
        return sorted((v for v in values if old.admits(v) and not new.admits(v)), key=_natural)
    if new.values is not None:
        return None
    if (new.low is not None and (old.low is None or old.low < new.low)) or \
            (new.high is not None and (old.high is None or old.high > new.high)):
        return None
    return sorted((v for v in new.excluded if old.admits(v)), key=_natural)


def _natural(value: str) -> tuple[int, str]:
    return (int(value), "") if value.lstrip("-").isdigit() else (1 << 62, value)


def narrowed_requirements(old: Sequence[Requirement], new: Sequence[Requirement]) -> list[str]:
    """For each label key whose new requirements admit less than the old ones did, what a node launched under
    the old ones may no longer satisfy; empty when the new requirements admit every such node (widened or
    unchanged). `minValues` is not part of the check: it shapes new launches only."""
    found = []
    for key in sorted({r.key for r in old} | {r.key for r in new}):
        was = [r for r in old if r.key == key]
        now = [r for r in new if r.key == key]
        before, after = _allowed(was), _allowed(now)
        lost = _lost(before, after)
        if lost == [] and not (before.absent and not after.absent):
            continue
        if lost:
            found.append(f"`{key}` no longer admits {', '.join(f'`{v}`' for v in lost)}")
        elif lost is None:
            found.append(f"`{key}`: {_spell(was)} -> {_spell(now)}")
        else:
            found.append(f"`{key}` is now required ({_spell(now)})")
    return found


def _spell(reqs: Sequence[Requirement]) -> str:
    if not reqs:
        return "any"
    return " and ".join(f"{r.operator} [{', '.join(r.values)}]" if r.values else r.operator for r in reqs)


# --- EC2NodeClass -----------------------------------------------------------------------------------------------

def class_drift(old: Mapping[str, Any], new: Mapping[str, Any], rules: DriftRules) -> list[str]:
    """Why the edit of an EC2NodeClass manifest drifts the nodes of the pools using it, one line per cause."""
    changed = _leaves(rules.node_class, old, new, "spec")
    if "spec.amiFamily" in changed and _family(old) == _family(new):
        del changed["spec.amiFamily"]  # hashed as the family it resolves to, which is the same
    causes = []
    hashed = [p for p in changed if (field_class(rules.node_class, tuple(p.split("."))) or HASHED) == HASHED]
    if hashed:
        causes.append(f"changed ({_fields(hashed)}): every node using it drifts (Karpenter {rules.release} hashes "
                      "these fields)")
    for path in sorted(p for p in changed if field_class(rules.node_class, tuple(p.split("."))) == RESOLVED):
        what, which = RESOLVES[path]
        before, after = changed[path]
        was, now = _alias(before), _alias(after)
        if path == "spec.amiSelectorTerms" and was and now and "@latest" not in was + now:
            causes.append(f"`amiSelectorTerms` alias {was} -> {now}: another AMI release, so nodes on the old "
                          "AMI drift")
        else:
            causes.append(f"`{_short(path)}` changed: rolls if the resolved {what} change ({which})")
    return causes


def _alias(terms: Any) -> str | None:
    aliases = [t.get("alias") for t in terms or () if isinstance(t, Mapping) and t.get("alias")]
    return str(aliases[0]) if len(aliases) == 1 else None


def _family(node_class: Mapping[str, Any]) -> str | None:
    """The AMI family Karpenter hashes: `amiFamily` when set, else the alias's family."""
    spec = node_class.get("spec") or {}
    family = spec.get("amiFamily") or (_alias(spec.get("amiSelectorTerms")) or "").split("@")[0]
    return str(family).lower() or None
