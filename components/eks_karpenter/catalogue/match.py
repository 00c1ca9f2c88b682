"""Which instance types a NodePool admits: its requirements evaluated against the catalogue as Karpenter does.

Karpenter gives every instance type a requirement per well-known label it knows (`In [value]`), and
`DoesNotExist` for the labels a type lacks (a type without a GPU has no `instance-gpu-count`). A NodePool's
requirements are then intersected with each type's, key by key:

- `In` / `NotIn` / `Exists` / `DoesNotExist` as in Kubernetes node selectors, so `In` on a label a type lacks
  excludes it and `NotIn` keeps it; `Gt` / `Lt` (strict) and `Gte` / `Lte` (Karpenter 1.x's inclusive forms)
  compare integers and exclude types without the label;
- several requirements on one key all apply;
- keys no instance type defines (capacity type, zone, custom labels) do not restrict the type: they are
  offering- or node-level;
- `minValues` asks for at least that many distinct values of its key among the admitted types.

The EC2NodeClass's AMI family joins in: Windows AMIs run amd64 only and label nodes `kubernetes.io/os: windows`;
the other families resolve AMIs for both architectures and label nodes linux.

Each label value's set of types is a bitmask over the catalogue (a Python int), so a pool costs a few dozen
integer operations however many types there are.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress
from typing import Any

from eks_karpenter.catalogue.model import Catalogue, InstanceType, load_catalogue
from eks_karpenter.labels import ARCH, INSTANCE_MEMORY, OS

WINDOWS_FAMILIES = frozenset({"windows2019", "windows2022", "windows2025"})
"""AMI families (lower-cased, as in aliases) whose nodes are Windows: amd64 only."""


@dataclass(frozen=True)
class Requirement:
    """One NodePool requirement, as in the rendered manifest (the stack file's entry is the config model
    `platform.nodepool.config.Requirement`); rendering, validation, admission, cost and the simulator share it."""

    key: str
    operator: str
    values: tuple[str, ...] = ()
    min_values: int | None = None
    source: str | int = field(default="", compare=False)
    """Where the stack file wrote it, for error paths: the shortcut key that produced it, or its index in the
    pool's `requirements`; "" when read from a manifest. Not part of its identity: admission is cached per
    distinct requirement set, whoever wrote it."""

    @staticmethod
    def from_manifest(item: Mapping[str, Any]) -> Requirement:
        return Requirement(str(item["key"]), str(item["operator"]), tuple(str(v) for v in item.get("values") or ()),
                           item.get("minValues"))

    def manifest(self) -> dict[str, Any]:
        """The requirement as the NodePool manifest spells it (`values` and `minValues` only when set)."""
        out: dict[str, Any] = {"key": self.key, "operator": self.operator}
        if self.values:
            out["values"] = list(self.values)
        if self.min_values is not None:
            out["minValues"] = self.min_values
        return out


def allowed_values(reqs: Iterable[Requirement], key: str, universe: Sequence[str]) -> list[str]:
    """The values of `key` (from `universe`, in its order) that the requirements leave open; numeric operators
    are ignored. For keys no instance type carries, such as the capacity type."""
    allowed = set(universe)
    for r in reqs:
        if r.key != key:
            continue
        if r.operator == "In":
            allowed &= set(r.values)
        elif r.operator == "NotIn":
            allowed -= set(r.values)
        elif r.operator == "DoesNotExist":
            allowed = set()
    return [v for v in universe if v in allowed]


def requirements_of(pool_manifest: Mapping[str, Any]) -> list[Requirement]:
    """The requirements of a rendered NodePool manifest."""
    spec = pool_manifest["spec"]["template"]["spec"]
    return [Requirement.from_manifest(r) for r in spec.get("requirements") or ()]


def ami_family_of(node_class_manifest: Mapping[str, Any] | None) -> str | None:
    """The AMI family of a rendered EC2NodeClass (`al2023`, `bottlerocket`, `windows2022`, ...), lower-cased;
    None when it selects AMIs by id, name or tags without a family (any architecture)."""
    if not node_class_manifest:
        return None
    spec = node_class_manifest.get("spec") or {}
    for term in spec.get("amiSelectorTerms") or ():
        if alias := term.get("alias"):
            return str(alias).split("@", 1)[0].lower()
    family = spec.get("amiFamily")
    return str(family).lower() if family else None


@dataclass(frozen=True)
class _Index:
    """Bitmasks over the catalogue: per label key, the types that carry it and, per value, those with it. A key's
    masks are built the first time a requirement names it: pools name a handful of the catalogue's keys."""

    catalogue: Catalogue
    all: int
    _by_key: dict[str, tuple[int, dict[str, int]]]
    masks: dict[tuple[str, str, tuple[str, ...]], int]
    """Memo of `mask` (the index is built once per catalogue and lives as long)."""

    @staticmethod
    def build(catalogue: Catalogue) -> _Index:
        return _Index(catalogue, (1 << len(catalogue.types)) - 1, {}, {})

    @property
    def keys(self) -> frozenset[str]:
        """Every label key some type carries."""
        return self.catalogue.label_keys

    def key(self, key: str) -> tuple[int, dict[str, int]]:
        """The types carrying `key`, and per value the types with it."""
        found = self._by_key.get(key)
        if found is None:
            positions: dict[str, list[int]] = {}
            for i, value in enumerate(self.catalogue.column(key)):
                if value is not None:
                    positions.setdefault(value, []).append(i)
            size = len(self.catalogue.types)
            by_value = {value: _mask_of(at, size) for value, at in positions.items()}
            found = self._by_key[key] = (_union(by_value.values()), by_value)
        return found

    def mask(self, req: Requirement, os_values: frozenset[str]) -> int:
        """The types a requirement admits (memoised per key, operator and values: pools repeat requirements)."""
        if req.key == OS:
            return self._mask(req, os_values)
        key = (req.key, req.operator, req.values)
        found = self.masks.get(key)
        if found is None:
            found = self.masks[key] = self._mask(req, os_values)
        return found

    def _mask(self, req: Requirement, os_values: frozenset[str]) -> int:
        if req.key == OS:
            # The node's OS comes from the AMI family, not the type: a requirement either fits it or excludes all.
            return self.all if _set_admits(req, os_values) else 0
        if req.key not in self.keys:
            return self.all  # not an instance-type label: restricts offerings or nodes, not types
        has, values = self.key(req.key)
        op = req.operator
        if op == "In":
            return _union(values.get(v, 0) for v in req.values)
        if op == "NotIn":
            return self.all & ~_union(values.get(v, 0) for v in req.values)
        if op == "Exists":
            return has
        if op == "DoesNotExist":
            return self.all & ~has
        if op in ("Gt", "Lt", "Gte", "Lte"):
            bound = int(req.values[0])
            return _union(m for v, m in values.items() if _numeric_admits(op, v, bound))
        raise ValueError(f"unknown operator {op!r}")


_BITS = bytes.maketrans(b"01", b"\x00\x01")


def _mask_of(positions: list[int], size: int) -> int:
    """The bitmask with these bits set: through a digit string, as OR-ing 1,336-bit integers one by one is slow."""
    if len(positions) < 16:
        return _union(1 << i for i in positions)
    digits = bytearray(b"0" * size)
    for i in positions:
        digits[size - 1 - i] = 0x31  # "1"; the last digit is bit 0
    return int(digits, 2)


def _union(masks: Iterable[int]) -> int:
    out = 0
    for m in masks:
        out |= m
    return out


def _numeric_admits(op: str, value: str, bound: int) -> bool:
    try:
        number = int(value)
    except ValueError:
        return False
    return {"Gt": number > bound, "Lt": number < bound, "Gte": number >= bound, "Lte": number <= bound}[op]


def _set_admits(req: Requirement, present: frozenset[str]) -> bool:
    if req.operator == "In":
        return bool(present & set(req.values))
    if req.operator == "NotIn":
        return bool(present - set(req.values))
    return req.operator == "Exists"


@functools.cache
def _index(catalogue: Catalogue) -> _Index:
    return _Index.build(catalogue)


def _family_requirements(ami_family: str | None) -> tuple[frozenset[str], list[Requirement]]:
    if ami_family in WINDOWS_FAMILIES:
        return frozenset({"windows"}), [Requirement(ARCH, "In", ("amd64",))]
    return frozenset({"linux"}), []


@dataclass(frozen=True)
class Admission:
    """What a pool's requirements admit from the catalogue."""

    types: tuple[InstanceType, ...]
    """Admitted types, in catalogue (name) order."""
    min_values_unmet: tuple[tuple[Requirement, int], ...]
    """Requirements whose `minValues` the admitted types cannot meet, with the distinct values found."""
    catalogue: Catalogue

    # Cached: an admission is itself cached per pool shape, and validation, the plan's warnings and `cost` all ask.
    @functools.cached_property
    def priced(self) -> tuple[InstanceType, ...]:
        return tuple(t for t in self.types if t.on_demand_hourly is not None)

    @functools.cached_property
    def _cheapest(self) -> InstanceType | None:
        priced = self.priced
        return min(priced, key=lambda t: (t.on_demand_hourly, t.name)) if priced else None

    @functools.cached_property
    def smallest(self) -> tuple[int, int]:
        """The fewest vCPUs and the least memory (MiB) of any admitted type ((0, 0) when none is admitted)."""
        if not self.types:
            return 0, 0
        return min(t.vcpus for t in self.types), min(int(t.labels[INSTANCE_MEMORY]) for t in self.types)

    def cheapest(self) -> InstanceType | None:
        """The admitted type with the lowest on-demand price (ties: the smaller name)."""
        return self._cheapest

    def values(self, key: str) -> list[str]:
        return sorted({t.labels[key] for t in self.types if key in t.labels})


def admitted(requirements: Sequence[Requirement], ami_family: str | None = None,
             catalogue: Catalogue | None = None) -> Admission:
    """Evaluate requirements (joined with the node class's AMI family) against the catalogue.

    Against the shipped catalogue, results are cached per distinct (requirements, AMI family): validation, the
    plan's warnings and `cost` ask about the same pools, and many pools share one shape."""
    if catalogue is None:
        return _admitted_shipped(tuple(requirements), ami_family)
    return _evaluate(requirements, ami_family, catalogue)


@functools.lru_cache(maxsize=8192)
def _admitted_shipped(requirements: tuple[Requirement, ...], ami_family: str | None) -> Admission:
    return _evaluate(requirements, ami_family, load_catalogue())


def _evaluate(requirements: Sequence[Requirement], ami_family: str | None, catalogue: Catalogue) -> Admission:
    index = _index(catalogue)
    os_values, extra = _family_requirements(ami_family)
    mask = index.all
    for req in [*requirements, *extra]:
        mask &= index.mask(req, os_values)
    # The mask's binary digits, lowest bit first, select the types (far faster than shifting a 1,336-bit int).
    types = tuple(compress(catalogue.types, bin(mask)[:1:-1].encode().translate(_BITS)))
    unmet = []
    for req in requirements:
        if req.min_values is None:
            continue
        if req.key in index.keys:
            found = sum(1 for m in index.key(req.key)[1].values() if m & mask)
        else:
            found = len(req.values) if req.operator == "In" else 0  # not a type label: offerings decide
            if req.operator != "In":
                continue
        if found < req.min_values:
            unmet.append((req, found))
    return Admission(types, tuple(unmet), catalogue)


def admitted_for(pool_manifest: Mapping[str, Any], node_class_manifest: Mapping[str, Any] | None = None,
                 catalogue: Catalogue | None = None) -> Admission:
    """`admitted` for a rendered NodePool and its EC2NodeClass."""
    return admitted(requirements_of(pool_manifest), ami_family_of(node_class_manifest), catalogue)
