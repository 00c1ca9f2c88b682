"""The shipped instance-type catalogue: typed rows over `instance_types.py` (see generate.py for provenance)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eks_karpenter.labels import ARCH, INSTANCE_CPU, INSTANCE_FAMILY

DATA = Path(__file__).with_name("instance_types.py")


# Not frozen, though nothing assigns to a type once built: a frozen dataclass's `__init__` sets every field through
# `object.__setattr__`, far slower than plain slots, and loading the catalogue builds one per type
# (figures: benchmarks/results/catalogue_load.md).
@dataclass(eq=False, slots=True)
class InstanceType:
    """One EC2 instance type as Karpenter sees it (read-only by convention)."""

    name: str
    cpu_millis: int
    """Allocatable CPU after Karpenter's overhead model, millicores."""
    memory_mib: int
    """Allocatable memory after Karpenter's overhead model (AL2023), MiB."""
    pods: int
    """Maximum pods (ENI-limited)."""
    ephemeral_storage_mib: int
    extended: Mapping[str, int]
    """Extended resources (`nvidia.com/gpu`, `vpc.amazonaws.com/efa`, ...)."""
    on_demand_hourly: float | None
    """On-demand Linux price in USD per hour from the catalogue's price table; None where it has none."""
    label_values: tuple[str | None, ...] = field(repr=False)
    """The type's value of each of `label_names` (None: the type has no such label)."""
    label_names: tuple[str, ...] = field(repr=False)
    """The catalogue's label keys, shared by every type."""
    _labels: dict[str, str] | None = field(default=None, init=False, repr=False)

    @property
    def labels(self) -> Mapping[str, str]:
        """Every label Karpenter puts on a node of this type (absent keys: the type has no such property).

        Built on first use: admission reads the catalogue by column (`Catalogue.column`), and only the types a
        report or the simulator looks at need their labels as a mapping."""
        labels = self._labels
        if labels is None:
            labels = {k: v for k, v in zip(self.label_names, self.label_values, strict=True) if v is not None}
            self._labels = labels
        return labels

    @property
    def vcpus(self) -> int:
        return int(self.labels[INSTANCE_CPU])

    @property
    def arch(self) -> str:
        return self.labels[ARCH]

    @property
    def family(self) -> str:
        return self.labels[INSTANCE_FAMILY]


def vcpu_hour_prices(types: Iterable[InstanceType],
                     hourly: Callable[[InstanceType], float | None] | None = None) -> list[float]:
    """What a vCPU-hour costs on each type that has a price: its hourly price (`hourly`, default the catalogue's
    on-demand price) over its vCPUs, in the order given. The one definition the dashboard's cost table and the
    cost report both read, so their figures agree."""
    out = []
    for t in types:
        price = t.on_demand_hourly if hourly is None else hourly(t)
        cpus = t.labels.get(INSTANCE_CPU, "")
        if price is not None and cpus.isdigit() and int(cpus) > 0:
            out.append(price / int(cpus))
    return out


@dataclass(frozen=True, eq=False)
class Catalogue:
    """All instance types, with the provenance every figure taken from them must be printed with."""

    types: tuple[InstanceType, ...]
    source: str
    karpenter_version: str
    price_region: str
    price_date: str
    currency: str
    label_keys: frozenset[str]
    """Every label key some type carries: requirements on other keys do not restrict the instance type."""

    def __iter__(self) -> Iterator[InstanceType]:
        return iter(self.types)

    def __len__(self) -> int:
        return len(self.types)

    @functools.cached_property
    def by_name(self) -> dict[str, InstanceType]:
        return {t.name: t for t in self.types}

    @functools.cached_property
    def _columns(self) -> dict[str, tuple[str | None, ...]]:
        if not self.types:
            return {}
        names = self.types[0].label_names
        return dict(zip(names, zip(*(t.label_values for t in self.types), strict=True), strict=True))

    def column(self, key: str) -> tuple[str | None, ...]:
        """Every type's value of a label, in catalogue order (None where the type has no such label); a key no
        type carries gives all None."""
        found = self._columns.get(key)
        return found if found is not None else (None,) * len(self.types)

    def values(self, key: str) -> list[str]:
        """Every value of a label across the catalogue, sorted."""
        return sorted({v for v in self.column(key) if v is not None})

    def provenance(self) -> str:
        """One line to print with every figure taken from the catalogue."""
        return (f"instance types and {self.price_region} on-demand prices from Karpenter v{self.karpenter_version} "
                f"data generated {self.price_date}")


def build_catalogue(data: Any) -> Catalogue:
    """The catalogue from the generated module's constants (`instance_types.py`, or any object with the same
    attributes)."""
    keys = tuple(data.LABELS)
    return Catalogue(
        types=tuple(InstanceType(name, cpu, memory, pods, storage, dict(extended), price, values, keys)
                    for name, values, cpu, memory, pods, storage, extended, price in data.TYPES),
        source=data.SOURCE, karpenter_version=data.KARPENTER_VERSION, price_region=data.PRICE_REGION,
        price_date=data.PRICE_DATE, currency=data.CURRENCY, label_keys=frozenset(keys),
    )


@functools.cache
def load_catalogue() -> Catalogue:
    """The catalogue shipped in the package (loaded once per process)."""
    from eks_karpenter.catalogue import instance_types

    return build_catalogue(instance_types)
