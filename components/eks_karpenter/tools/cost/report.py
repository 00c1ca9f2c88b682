"""Views of a cost document (see estimate.py): text for a terminal, Markdown for a PR, and the short sections the
plan comment and the plan diff carry. Every view prints where its figures come from."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Doc = Mapping[str, Any]


def provenance(doc: Doc) -> list[str]:
    """Where the figures come from, one line each."""
    cat = doc["catalogue"]
    fixed = doc["fixedPrices"]
    types = f"Karpenter v{cat['karpenterVersion']} data generated {cat['date']}"
    fallback = doc.get("priceFallback")
    if doc["priceSource"] == cat["source"]:
        lines = [f"instance types and {doc['priceRegion']} on-demand prices: {types} (no spot prices offline)"]
    elif doc["instancePrices"].startswith("live"):
        lines = [f"instance types: {types}",
                 f"instance prices: {doc['instancePrices']} for {doc['priceRegion']}, {doc['priceSource']}, "
                 f"fetched {doc['priceDate']}"]
    else:
        lines = [f"instance types: {types}",
                 f"instance prices: {doc['priceRegion']} on-demand list prices from {doc['priceSource']}, prices of "
                 f"{doc['priceDate']} (no spot prices offline)"]
        if fallback:
            lines.append(f"a type without a {doc['region']} price there: {fallback['source']}")
    lines.append(f"fixed prices: {fixed['region']} list prices read {fixed['date']}, control-plane rate as of "
                 f"{fixed['asOf']}")
    if doc["priceRegion"] != doc["region"]:
        lines.append(f"prices are {doc['priceRegion']}'s, not {doc['region']}'s: the shipped tables have no "
                     f"{doc['region']} prices; --live fetches {doc['region']}'s current ones")
    return lines


def _usd(x: float | None, places: int = 2) -> str:
    return "n/a" if x is None else f"${x:,.{places}f}"


def _range(r: Mapping[str, float] | None, places: int = 2) -> str:
    if not r:
        return "n/a"
    return _usd(r["min"], places) if r["min"] == r["max"] else f"{_usd(r['min'], places)}-{_usd(r['max'], places)}"


def _cheapest(p: Mapping[str, Any]) -> str:
    c = p.get("cheapest")
    if not c:
        return "n/a"
    return f"{c['type']} {_usd(c['hourly'], 4)}/h" + (" (us-east-1's price)" if c.get("fallback") else "")


def _limit(p: Mapping[str, Any]) -> str:
    return "no cpu limit" if p["cpuLimit"] is None else f"{p['cpuLimit']} vCPU"


def render_text(doc: Doc, title: str) -> str:
    lines = [f"{title}: region {doc['region']}, {doc['currency']}, {doc['hoursPerMonth']} h/month"]
    lines += [f"  {line}" for line in provenance(doc)]
    lines += ["", "fixed (monthly, at the desired size)"]
    width = max((len(f["item"]) for f in doc["fixed"]), default=10)
    for f in doc["fixed"]:
        hourly = _usd(f["hourly"], 4)
        lines.append(f"  {f['item']:<{width}}  x{f['quantity']:<3} {hourly:>9}/h {_usd(f['monthly']):>11}")
    lines.append(f"  {'total':<{width}}        {'':>9}   {_usd(doc['fixedMonthly']):>11}")
    if doc["perUnit"]:
        lines += ["", "per unit (usage-dependent, not in the total)"]
        lines += [f"  {u['item']}: ${u['price']} per {u['unit']}" for u in doc["perUnit"]]
    lines += ["", "node pools (on-demand prices; what spot costs is only known live)"]
    for p in doc["pools"]:
        lines.append(f"  {p['name']}: {p['admitted']} types admitted ({p['priced']} priced), "
                     f"{len(p['families'])} families, {'/'.join(p['capacityTypes'])}, {'/'.join(p['arch'])}")
        lines.append(f"    cheapest {_cheapest(p)}; per vCPU-hour {_range(p['usdPerVcpuHour'], 4)}; "
                     f"{_limit(p)}; at the cpu limit {_range(p['monthlyAtCpuLimit'])}/month")
        if spot := p.get("liveSpot"):
            cheapest = spot["cheapest"]
            where = f"{cheapest['type']} {_usd(cheapest['hourly'], 4)}/h in {cheapest['zone']}" if cheapest else "n/a"
            lines.append(f"    live spot: cheapest {where}; per vCPU-hour {_range(spot['usdPerVcpuHour'], 4)}; "
                         f"at the cpu limit {_range(spot['monthlyAtCpuLimit'])}/month")
        lines.append(f"    families: {', '.join(p['families'])}")
        if "types" in p:
            lines.append(f"    types: {', '.join(p['types'])}")
    if doc["warnings"]:
        lines += [""] + [f"warning: {w}" for w in doc["warnings"]]
    return "\n".join(lines) + "\n"


def _pool_rows(doc: Doc) -> list[str]:
    rows = ["| pool | types | capacity | cheapest | $/vCPU-h | cpu limit | monthly at cpu limit |",
            "| --- | ---: | --- | --- | --- | ---: | --- |"]
    for p in doc["pools"]:
        rows.append(f"| `{p['name']}` | {p['admitted']} | {', '.join(p['capacityTypes'])} | {_cheapest(p)} | "
                    f"{_range(p['usdPerVcpuHour'], 4)} | {p['cpuLimit'] if p['cpuLimit'] is not None else 'none'} | "
                    f"{_range(p['monthlyAtCpuLimit'])} |")
    return rows


def render_markdown(doc: Doc, title: str) -> str:
    lines = [f"### Cost: {title}", "", *(f"- {line}" for line in provenance(doc)), "",
             "| fixed item | qty | $/h | $/month |", "| --- | ---: | ---: | ---: |"]
    lines += [f"| {f['item']} | {f['quantity']} | {_usd(f['hourly'], 4)} | {_usd(f['monthly'])} |"
              for f in doc["fixed"]]
    lines += [f"| **total** | | | **{_usd(doc['fixedMonthly'])}** |", ""]
    if doc["perUnit"]:
        lines += ["Usage-dependent: " + "; ".join(f"{u['item']} ${u['price']}/{u['unit']}" for u in doc["perUnit"]),
                  ""]
    lines += ["Node pools, on-demand prices (spot costs less; only `--live` shows it):", "", *_pool_rows(doc)]
    spot = [p for p in doc["pools"] if p.get("liveSpot")]
    if spot:
        lines += ["", f"Live spot prices ({doc['priceSource']}, fetched {doc['priceDate']}):", "",
                  "| pool | types with a spot price | cheapest | $/vCPU-h | monthly at cpu limit |",
                  "| --- | ---: | --- | --- | --- |"]
        for p in spot:
            live = p["liveSpot"]
            best = live["cheapest"]
            where = f"{best['type']} {_usd(best['hourly'], 4)}/h in {best['zone']}" if best else "n/a"
            lines.append(f"| `{p['name']}` | {live['types']} | {where} | {_range(live['usdPerVcpuHour'], 4)} | "
                         f"{_range(live['monthlyAtCpuLimit'])} |")
    if doc["warnings"]:
        lines += ["", *(f"- warning: {w}" for w in doc["warnings"])]
    return "\n".join(lines) + "\n"


def plan_section(doc: Doc) -> list[str]:
    """The short cost section of the plan comment: fixed monthly cost and each pool's ceiling."""
    lines = ["", "**Cost** (on-demand list prices; " + "; ".join(provenance(doc)) + ")", "",
             f"Fixed: **{_usd(doc['fixedMonthly'])}/month**.", ""]
    if doc["pools"]:
        lines += ["| pool | types | cheapest | monthly at cpu limit |", "| --- | ---: | --- | --- |"]
        lines += [f"| `{p['name']}` | {p['admitted']} | {_cheapest(p)} | "
                  f"{_range(p['monthlyAtCpuLimit']) if p['cpuLimit'] is not None else 'no cpu limit'} |"
                  for p in doc["pools"]]
    return lines


def _ceiling(p: Mapping[str, Any] | None) -> str:
    if p is None:
        return "-"
    return _range(p["monthlyAtCpuLimit"]) if p["cpuLimit"] is not None else "no cpu limit"


def diff_section(old: Doc, new: Doc) -> list[str]:
    """The cost change between two plans: fixed monthly cost and each pool's ceiling (empty when nothing moved)."""
    old_pools = {p["name"]: p for p in old["pools"]}
    new_pools = {p["name"]: p for p in new["pools"]}
    rows = []
    for name in sorted(old_pools.keys() | new_pools.keys()):
        before, after = _ceiling(old_pools.get(name)), _ceiling(new_pools.get(name))
        types_before = old_pools[name]["admitted"] if name in old_pools else "-"
        types_after = new_pools[name]["admitted"] if name in new_pools else "-"
        if before != after or types_before != types_after:
            rows.append(f"| `{name}` | {types_before} → {types_after} | {before} → {after} |")
    fixed_old, fixed_new = old["fixedMonthly"], new["fixedMonthly"]
    if fixed_old == fixed_new and not rows:
        return []
    delta = fixed_new - fixed_old
    lines = ["", "**Cost change** (on-demand list prices; " + "; ".join(provenance(new)) + ")", "",
             f"Fixed: {_usd(fixed_old)} → {_usd(fixed_new)}/month ({'+' if delta >= 0 else '-'}{_usd(abs(delta))})."]
    if rows:
        lines += ["", "| pool | types | monthly at cpu limit |", "| --- | --- | --- |", *rows]
    return lines
