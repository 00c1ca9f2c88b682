"""Render a simulation: text (default), Markdown, or JSON (the documented contract, see docs/cost-and-scale.md)."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass
from typing import Any

from eks_karpenter.catalogue import Catalogue
from eks_karpenter.catalogue.prices import RegionPrices, region_prices
from eks_karpenter.tools.simulate.schedule import FixedResult, KarpenterResult, Unschedulable
from eks_karpenter.tools.simulate.workload import Workload

HOURS_PER_MONTH = 730

HEURISTIC = (
    "first-fit decreasing as Karpenter provisions: pods largest first (CPU, then memory); each goes to the first "
    "in-flight node that can still hold it, else opens a node in the highest-weight pool that accepts it; a node "
    "grows while one of its pool's admitted types holds all its pods (allocatable CPU, memory, pods) within the "
    "pool's limits, and launches as the cheapest such type. No consolidation, topology spread, affinity or "
    "existing nodes.")

SPOT_NOTE = "spot allowed: spot would be lower, but spot prices are not modelled offline"


@dataclass(frozen=True)
class Simulation:
    """Everything a report shows."""

    stack: str
    region: str
    workload_file: str
    workload: Workload
    karpenter: KarpenterResult
    fixed: FixedResult
    catalogue: Catalogue


def _money(value: float, places: int = 4) -> float:
    return round(value, places)


def _unschedulable(items: tuple[Unschedulable, ...]) -> list[dict[str, Any]]:
    return [{"deployment": u.deployment, "pods": u.pods, "reason": u.reason, "pools": dict(u.pools)} for u in items]


def _prices(sim: Simulation) -> RegionPrices:
    """The prices the simulation's catalogue carries: the stack's region's (`priced_catalogue`), else those of the
    catalogue's own region."""
    found = region_prices(sim.region)
    return found if found.price_region == sim.catalogue.price_region else region_prices(sim.catalogue.price_region)


def _fallbacks(sim: Simulation) -> list[str]:
    """The types this simulation launched at us-east-1's price for want of one in the stack's region."""
    prices = _prices(sim)
    launched = {n.type.name for p in sim.karpenter.pools for n in p.nodes} | {sim.fixed.type.name}
    return prices.fallbacks(launched)


def _notes(sim: Simulation) -> list[str]:
    cat, prices = sim.catalogue, _prices(sim)
    notes = [f"prices are the on-demand ceiling: {prices.provenance(cat)}"]
    if prices.price_region != sim.region:
        why = "" if region_prices(sim.region).has_table else f": the shipped tables have no {sim.region} prices"
        notes.append(f"prices are {prices.price_region}'s, not {sim.region}'s{why} (on-demand often differs by "
                     f"region); `cost --stack {sim.stack} --live` gives {sim.region}'s current prices")
    if fallbacks := _fallbacks(sim):
        notes.append(f"launched at {prices.fallback_source} for want of a {sim.region} price in {prices.label}: "
                     f"{', '.join(fallbacks)}")
    unpriced = {p.pool.name: p.pool.unpriced for p in sim.karpenter.pools if p.pool.unpriced}
    for name, count in unpriced.items():
        notes.append(f"pool {name}: {count} admitted types have no catalogue price and are never chosen")
    if unrequested := [d.name for d in sim.workload.deployments if d.cpu_millis == 0 and d.memory_bytes == 0]:
        notes.append(f"no cpu or memory requests (placed as taking none, as the scheduler places them): "
                     f"{', '.join(unrequested)}")
    if not sim.workload.daemon_sets:
        notes.append("no DaemonSets in the workload file: node overhead beyond Karpenter's allocatable model is "
                     "not modelled")
    k_left = sum(u.pods for u in sim.karpenter.unschedulable)
    f_left = sum(u.pods for u in sim.fixed.unschedulable)
    if k_left != f_left:
        notes.append(f"not like for like: {k_left} pods unschedulable on Karpenter, {f_left} on the fixed group")
    return notes


def to_data(sim: Simulation) -> dict[str, Any]:
    """The JSON document (keys documented in docs/cost-and-scale.md)."""
    cat, k, f = sim.catalogue, sim.karpenter, sim.fixed
    pools = []
    for p in k.pools:
        pools.append({
            "name": p.pool.name, "weight": p.pool.weight, "capacityTypes": list(p.pool.capacity_types),
            "spotAllowed": p.pool.spot, "admittedPriced": len(p.pool.types),
            "limits": dict(sorted(p.pool.limits_text.items())),
            "nodes": [{"type": n.type.name, "count": n.count, "pods": n.pods, "vcpus": n.type.vcpus,
                       "capacityTypes": list(n.capacity_types),
                       "hourlyEach": n.type.on_demand_hourly, "hourly": _money(n.hourly),
                       "monthly": _money(n.hourly * HOURS_PER_MONTH, 2)} for n in p.nodes],
            "nodeCount": p.node_count, "pods": p.pods, "placed": dict(sorted(p.placed.items())),
            "hourly": _money(p.hourly), "monthly": _money(p.hourly * HOURS_PER_MONTH, 2),
        })
    fixed_each = f.type.on_demand_hourly or 0.0
    prices = _prices(sim)
    return {
        "stack": sim.stack, "region": sim.region, "priceRegion": prices.price_region, "priceSource": prices.source,
        "priceDate": prices.date, "priceFallback": _fallbacks(sim), "priceKind": "on-demand", "currency": cat.currency,
        "hoursPerMonth": HOURS_PER_MONTH, "heuristic": HEURISTIC,
        "workload": {"file": sim.workload_file, "deployments": len(sim.workload.deployments),
                     "pods": sim.workload.pods, "daemonSets": [d.name for d in sim.workload.daemon_sets]},
        "karpenter": {"pools": pools, "nodeCount": k.node_count, "pods": k.pods, "hourly": _money(k.hourly),
                      "monthly": _money(k.hourly * HOURS_PER_MONTH, 2),
                      "unschedulable": _unschedulable(k.unschedulable)},
        "fixed": {"instanceType": f.type.name, "hourlyEach": fixed_each, "nodes": f.nodes, "pods": f.pods,
                  "hourly": _money(f.hourly), "monthly": _money(f.hourly * HOURS_PER_MONTH, 2),
                  "unschedulable": _unschedulable(f.unschedulable)},
        "difference": {"hourly": _money(k.hourly - f.hourly),
                       "monthly": _money((k.hourly - f.hourly) * HOURS_PER_MONTH, 2)},
        "notes": _notes(sim),
    }


def render_json(sim: Simulation) -> str:
    return json.dumps(to_data(sim), indent=2) + "\n"


def _usd(value: float, places: int = 4) -> str:
    sign = "-" if value < 0 else ""
    return f"{sign}${abs(value):,.{places}f}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _signed(value: float, places: int) -> str:
    return ("+" if value > 0 else "") + _usd(value, places)


def render_text(sim: Simulation) -> str:
    d = to_data(sim)
    out = [f"simulate: stack {d['stack']} ({d['region']}), workload {d['workload']['file']}: "
           f"{_plural(d['workload']['deployments'], 'workload')}, {_plural(d['workload']['pods'], 'pod')}",
           textwrap.fill(f"heuristic: {HEURISTIC}", width=116, subsequent_indent="  "), ""]
    k = d["karpenter"]
    out.append(f"Karpenter: {_plural(k['nodeCount'], 'node')}, {_usd(k['hourly'])}/h, {_usd(k['monthly'], 2)}/month "
               "(on-demand ceiling)")
    for p in k["pools"]:
        limits = ", ".join(f"{key} {v}" for key, v in p["limits"].items()) or "none"
        out.append(f"  pool {p['name']} (weight {p['weight']}, {'/'.join(p['capacityTypes'])}): "
                   f"{_plural(p['nodeCount'], 'node')}, {_plural(p['pods'], 'pod')}, {_usd(p['hourly'])}/h, "
                   f"{_usd(p['monthly'], 2)}/month")
        for n in p["nodes"]:
            each = f"{_usd(n['hourlyEach'])}/h each" + (
                "" if n["capacityTypes"] == ["on-demand"] else " at the on-demand price")
            out.append(f"    {n['count']} x {n['type']} ({n['vcpus']} vCPU, {'/'.join(n['capacityTypes'])}, {each}): "
                       f"{_plural(n['pods'], 'pod')}, {_usd(n['hourly'])}/h")
        if any("spot" in n["capacityTypes"] for n in p["nodes"]):
            out.append(f"    {SPOT_NOTE}")
        if p["nodeCount"]:
            out.append(f"    limits: {limits}")
    out += _unschedulable_text(sim.karpenter.unschedulable)
    f = d["fixed"]
    out += ["", f"Fixed node group ({f['instanceType']}, on-demand, Cluster Autoscaler): "
                f"{_plural(f['nodes'], 'node')} x {_usd(f['hourlyEach'])}/h = {_usd(f['hourly'])}/h, "
                f"{_usd(f['monthly'], 2)}/month, {_plural(f['pods'], 'pod')}"]
    out += _unschedulable_text(sim.fixed.unschedulable)
    diff = d["difference"]
    out += ["", f"Difference (Karpenter - fixed): {_signed(diff['hourly'], 4)}/h, {_signed(diff['monthly'], 2)}/month",
            ""]
    out += [f"note: {n}" for n in d["notes"]]
    return "\n".join(out) + "\n"


def _unschedulable_text(items: tuple[Unschedulable, ...]) -> list[str]:
    if not items:
        return ["  unschedulable: none"]
    out = ["  unschedulable:"]
    for u in items:
        out.append(f"    {u.deployment}: {_plural(u.pods, 'pod')}: {u.reason}")
        out += [f"      {pool}: {why}" for pool, why in u.pools.items()]
    return out


def render_markdown(sim: Simulation) -> str:
    d = to_data(sim)
    k, f, diff = d["karpenter"], d["fixed"], d["difference"]
    out = [f"### Simulate `{d['workload']['file']}` on stack `{d['stack']}`", "",
           f"{_plural(d['workload']['pods'], 'pod')} in {_plural(d['workload']['deployments'], 'workload')}. "
           "Prices are the **on-demand ceiling**.", "",
           "| | nodes | pods | $/hour | $/month |", "| --- | ---: | ---: | ---: | ---: |",
           f"| Karpenter | {k['nodeCount']} | {k['pods']} | {_usd(k['hourly'])} | {_usd(k['monthly'], 2)} |",
           f"| Fixed `{f['instanceType']}` | {f['nodes']} | {f['pods']} | {_usd(f['hourly'])} | "
           f"{_usd(f['monthly'], 2)} |",
           f"| Difference | | | {_signed(diff['hourly'], 4)} | {_signed(diff['monthly'], 2)} |", "",
           "| pool | weight | nodes | type | pods | $/hour |", "| --- | ---: | ---: | --- | ---: | ---: |"]
    for p in k["pools"]:
        for n in p["nodes"]:
            out.append(f"| {p['name']} | {p['weight']} | {n['count']} | `{n['type']}` | {n['pods']} | "
                       f"{_usd(n['hourly'])} |")
        if not p["nodes"]:
            out.append(f"| {p['name']} | {p['weight']} | 0 | | 0 | {_usd(0)} |")
    spot = [p["name"] for p in k["pools"] if any("spot" in n["capacityTypes"] for n in p["nodes"])]
    if spot:
        out += ["", f"Pools {', '.join(f'`{s}`' for s in spot)}: {SPOT_NOTE}."]
    for title, items in (("Karpenter", sim.karpenter.unschedulable), ("Fixed group", sim.fixed.unschedulable)):
        if items:
            out += ["", f"**Unschedulable ({title})**", ""]
            out += [f"- `{u.deployment}`: {_plural(u.pods, 'pod')}: {u.reason}" for u in items]
    out += ["", f"Heuristic: {HEURISTIC}", ""]
    out += [f"- {n}" for n in d["notes"]]
    return "\n".join(out) + "\n"
