"""Which on-demand price an instance type has in a stack's region, and where the figure comes from.

One rule, read by `cost`, `simulate` and the plan's cost section:

- us-east-1: Karpenter's own table (the catalogue's prices), as Karpenter itself starts with.
- a region of the regional table (`regional_prices.py`, Apache Libcloud's figures, see generate_prices.py): that
  region's price; a type the table has no price for there takes Karpenter's us-east-1 price, and is named as
  such (`fallback`); a type with neither is unpriced.
- any other region (no table): every type at Karpenter's us-east-1 price, and the output says so plainly.

Offline figures are list prices as of each source's date; `cost --live` fetches today's.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from eks_karpenter.catalogue.model import Catalogue, load_catalogue

REFERENCE_REGION = "us-east-1"
"""The region of Karpenter's table, which every other region falls back to."""


@dataclass(frozen=True)
class RegionPrices:
    """The on-demand prices a stack in `region` is priced with."""

    region: str
    price_region: str
    """Whose prices these are: `region` when a table has it, else us-east-1."""
    source: str
    """The full citation (package, version, sha256)."""
    label: str
    """The source in a few words, for warnings."""
    date: str
    hourly: Mapping[str, float]
    """Instance type -> USD/hour, the fallback applied."""
    fallback: frozenset[str]
    """Types priced at Karpenter's us-east-1 price because the regional table has none for them here."""
    fallback_source: str
    """Karpenter's table, named as a figure's provenance."""

    def price(self, name: str) -> float | None:
        return self.hourly.get(name)

    @property
    def has_table(self) -> bool:
        return self.price_region == self.region

    def fallbacks(self, names: Iterable[str]) -> list[str]:
        """Those of `names` priced at us-east-1's price, sorted."""
        return sorted(n for n in set(names) if n in self.fallback)

    def provenance(self, catalogue: Catalogue) -> str:
        """One line naming the instance types' and prices' sources and dates (and the fallback, where there is
        one)."""
        if self.price_region == REFERENCE_REGION:
            return catalogue.provenance()
        line = f"instance types from Karpenter v{catalogue.karpenter_version} data generated {catalogue.price_date}; "
        line += f"{self.price_region} on-demand prices: {self.source}, prices of {self.date}"
        if self.fallback:
            line += f"; a type without a {self.region} price there: {self.fallback_source}"
        return line


def karpenter_source(catalogue: Catalogue) -> str:
    return (f"Karpenter v{catalogue.karpenter_version}'s {REFERENCE_REGION} price (its table generated "
            f"{catalogue.price_date})")


@functools.cache
def region_prices(region: str) -> RegionPrices:
    """The prices for `region` under the rule above (loaded once per region and process; us-east-1's without
    loading the regional table, which a us-east-1 stack never needs)."""
    catalogue = load_catalogue()
    karpenter = {t.name: usd for t in catalogue if (usd := t.on_demand_hourly) is not None}
    reference = karpenter_source(catalogue)
    karpenters = RegionPrices(region, REFERENCE_REGION, catalogue.source, reference, catalogue.price_date, karpenter,
                              frozenset(), reference)
    if region == REFERENCE_REGION:
        return karpenters
    from eks_karpenter.catalogue import regional_prices as table

    if region not in table.REGIONS:
        return karpenters
    column = table.REGIONS.index(region)
    own: dict[str, float] = {name: usd for name, row in table.PRICES.items() if (usd := row[column]) is not None}
    fallback = frozenset(name for name in karpenter if name not in own)
    hourly = {**{name: karpenter[name] for name in fallback}, **own}
    label = f"Apache Libcloud {table.VERSION}'s price table"
    source = f"{label} (PyPI {table.PACKAGE}, libcloud/data/pricing.json sha256 {table.SHA256[:12]}...)"
    return RegionPrices(region, region, source, label, table.PRICE_DATE, hourly, fallback, reference)


@functools.cache
def priced_catalogue(region: str) -> Catalogue:
    """The shipped catalogue with each type's `on_demand_hourly` as `region_prices(region)` prices it: what the
    simulator reads, so that its choice of the cheapest type is the region's."""
    catalogue = load_catalogue()
    prices = region_prices(region)
    if prices.price_region == REFERENCE_REGION:
        return catalogue
    types = tuple(dataclasses.replace(t, on_demand_hourly=prices.price(t.name)) for t in catalogue)
    return dataclasses.replace(catalogue, types=types, price_region=region)
