"""What a stack can cost: fixed monthly items, per-unit prices, and each NodePool's price range and ceiling.

Pure: built from a validated `StackConfig` (`inputs_from_config`) or from an offline plan's resources
(`inputs_from_plan`, for the plan comment and the PR diff), then `estimate()` gives the JSON contract:

    {"region", "priceRegion", "priceSource", "priceDate", "priceFallback", "currency", "hoursPerMonth",
     "fixed": [{"item", "quantity", "hourly", "monthly"}], "perUnit": [{"item", "unit", "price"}],
     "pools": [{"name", "admitted", "priced", "families", "capacityTypes", "arch", "cheapest": {"type", "hourly"},
                "usdPerVcpuHour": {"min", "max"}, "cpuLimit", "monthlyAtCpuLimit": {"min", "max"},
                "fallbackPriced"}],
     "warnings": [...]}

Instance prices are on-demand: offline, the stack's region's as `catalogue.prices` rules (Karpenter's table for
us-east-1, the regional table elsewhere, a type without a regional price at us-east-1's: `priceFallback` names
that table and each pool's `fallbackPriced` counts such types; a region without a table is priced with
us-east-1's and says so), or `--live` prices for the stack's region; a spot figure only appears from `--live`,
labelled as such. `usdPerVcpuHour` is the on-demand price over the type's vCPUs,
across the priced admitted types; `monthlyAtCpuLimit` is `cpuLimit x usdPerVcpuHour x hoursPerMonth`: what the
pool costs if it runs up to its cpu limit on its cheapest (min) or dearest (max) vCPUs, on-demand.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from eks_karpenter.catalogue import Admission, admitted, ami_family_of, load_catalogue, requirements_of
from eks_karpenter.catalogue.match import allowed_values
from eks_karpenter.catalogue.model import InstanceType, vcpu_hour_prices
from eks_karpenter.catalogue.prices import REFERENCE_REGION, RegionPrices, region_prices
from eks_karpenter.labels import ARCH, CAPACITY_TYPE, INSTANCE_FAMILY
from eks_karpenter.platform.cluster.plan import SYSTEM_GROUP, node_volumes
from eks_karpenter.platform.nodepool.admission import pool_warnings
from eks_karpenter.quantities import quantity_value
from eks_karpenter.tools.cost import prices as P

if TYPE_CHECKING:
    from eks_karpenter.platform.stack import StackConfig

_CAPACITY_TYPES = ("spot", "on-demand", "reserved")


@dataclass(frozen=True)
class NodeGroup:
    """An EKS managed node group this stack creates (fixed capacity)."""

    name: str
    capacity_type: str
    """`ON_DEMAND` or `SPOT`."""
    instance_types: tuple[str, ...]
    count: int
    """Desired size: the nodes it runs when nothing scales it."""
    disk_gib: int


@dataclass(frozen=True)
class PoolSpec:
    """A NodePool as rendered, with its node class's AMI family (lower-case, None when unknown)."""

    name: str
    manifest: Mapping[str, Any]
    ami_family: str | None


@dataclass(frozen=True)
class CostInputs:
    """Everything that has a price in one stack."""

    region: str
    cluster_version: str | None
    """None when the stack does not create the control plane (an existing cluster)."""
    nat_gateways: int = 0
    kms_keys: int = 0
    control_plane_logs: bool = False
    flow_logs: str | None = None
    """Where the VPC's flow logs go when this stack records them: `cloudWatchLogs` or `s3`."""
    interruption_queue: bool = False
    node_groups: tuple[NodeGroup, ...] = ()
    pools: tuple[PoolSpec, ...] = ()


@dataclass(frozen=True)
class LivePrices:
    """Prices fetched with `--live` for the stack's region (see eks_karpenter/tools/cost/live.py)."""

    region: str
    fetched_at: str
    on_demand: Mapping[str, float]
    """Instance type -> on-demand Linux USD/hour."""
    spot: Mapping[str, tuple[float, str]] = field(default_factory=dict)
    """Instance type -> (lowest current spot USD/hour over the region's zones, that zone)."""
    source: str = "AWS Price List API (get_products) and EC2 DescribeSpotPriceHistory"


# --- inputs -----------------------------------------------------------------------------------------------------

def inputs_from_config(cfg: StackConfig) -> CostInputs:
    """The priced parts of a validated stack config (no engine needed)."""
    from eks_karpenter.platform.nodepool.manifests import render_node_pool

    families = {c.name: (c.family.lower() if c.family else None) for c in cfg.node_classes}
    pools = tuple(sorted((PoolSpec(p.name, render_node_pool(p), families.get(p.node_class)) for p in cfg.node_pools),
                         key=lambda p: p.name))
    cluster, network = cfg.cluster, cfg.network
    base = CostInputs(region=cfg.region, cluster_version=None, interruption_queue=cfg.interruption.enabled,
                      pools=tuple(pools))
    if cluster.existing:
        return base
    nats = 0 if network.vpc_id else (len(network.zones) if network.nat_gateways == "perAz" else 1)
    flow = network.flow_logs
    system = cluster.system_node_group
    # Named as EKS names them (by prefix), with every gp3 volume their launch template gives a node.
    groups = [NodeGroup(SYSTEM_GROUP, "ON_DEMAND", tuple(system.instance_types), system.desired_size,
                        sum(gib for _, gib in node_volumes(system.ami_type, system.disk_size)))]
    groups += [NodeGroup(g.name, "SPOT", tuple(g.instance_types), g.desired_size,
                         sum(gib for _, gib in node_volumes(g.ami_type, g.disk_size)))
               for g in cluster.spot_node_groups]
    return replace(
        base, cluster_version=cluster.version, nat_gateways=nats,
        flow_logs=flow.destination if flow.enabled and not network.vpc_id else None,
        kms_keys=1 if cluster.secrets_encryption and not cluster.kms_key_arn else 0,
        control_plane_logs=bool(cluster.log_types), node_groups=tuple(sorted(groups, key=lambda g: g.name)))


def inputs_from_plan(resources: Sequence[Any], region: str) -> CostInputs:
    """The priced parts of an offline plan (`PlannedResource`s): what the plan comment and the diff show."""
    def of(type_: str) -> list[Any]:
        return [r for r in resources if r.type == type_]

    classes = {(r.inputs.get("metadata") or {}).get("name"): ami_family_of(r.inputs)
               for r in of("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")}
    pools = []
    for r in of("kubernetes:karpenter.sh/v1:NodePool"):
        template = ((r.inputs.get("spec") or {}).get("template") or {}).get("spec") or {}
        name = (r.inputs.get("metadata") or {}).get("name")
        if name and "requirements" in template:  # a NodePool as the program renders it (not a hand-cut fixture)
            pools.append(PoolSpec(name, r.inputs, classes.get((template.get("nodeClassRef") or {}).get("name"))))
    pools.sort(key=lambda p: p.name)
    clusters = of("eks:index:Cluster")
    templates = {r.urn: r for r in of("aws:ec2/launchTemplate:LaunchTemplate")}
    groups = []
    for r in of("eks:index:ManagedNodeGroup"):
        # A group with a launch template gets its volumes from the template (the one it references, hence
        # depends on); without one, EKS gives it a `diskSize` (default 20 GiB) root volume.
        template = next((templates[u] for u in r.dependencies if u in templates), None)
        if template is not None:
            disk = sum(int((m.get("ebs") or {}).get("volumeSize", 0))
                       for m in template.inputs.get("blockDeviceMappings") or ())
        else:
            disk = int(r.inputs.get("diskSize", 20))
        name = r.inputs.get("nodeGroupName") or str(r.inputs.get("nodeGroupNamePrefix") or "").rstrip("-") or r.name
        groups.append(NodeGroup(str(name),
                                str(r.inputs.get("capacityType", "ON_DEMAND")),
                                tuple(r.inputs.get("instanceTypes") or ()),
                                int((r.inputs.get("scalingConfig") or {}).get("desiredSize", 0)),
                                disk))
    flow_logs = of("aws:ec2/flowLog:FlowLog")
    return CostInputs(
        region=region, cluster_version=str(clusters[0].inputs.get("version")) if clusters else None,
        nat_gateways=len(of("aws:ec2/natGateway:NatGateway")), kms_keys=len(of("aws:kms/key:Key")),
        control_plane_logs=any(c.inputs.get("enabledClusterLogTypes") for c in clusters),
        flow_logs=(("s3" if flow_logs[0].inputs.get("logDestinationType") == "s3" else "cloudWatchLogs")
                   if flow_logs else None),
        interruption_queue=bool(of("aws:sqs/queue:Queue")), node_groups=tuple(sorted(groups, key=lambda g: g.name)),
        pools=tuple(pools))


# --- estimate ---------------------------------------------------------------------------------------------------

def _money(x: float, places: int = 4) -> float:
    return round(x, places)


def _number(x: Decimal) -> int | float:
    return int(x) if x == x.to_integral_value() else float(x)


def _fixed(item: str, quantity: float, unit_hourly: float) -> dict[str, Any]:
    hourly = quantity * unit_hourly
    return {"item": item, "quantity": quantity, "hourly": _money(hourly, 6),
            "monthly": _money(hourly * P.HOURS_PER_MONTH, 2)}


def rendered_admission(pool: PoolSpec) -> Admission:
    """The catalogue types a rendered pool admits (cached per distinct requirement set)."""
    return admitted(requirements_of(pool.manifest), pool.ami_family)


def _hourly(t: InstanceType, live: LivePrices | None, prices: RegionPrices) -> float | None:
    return live.on_demand.get(t.name) if live else prices.price(t.name)


def _range(values: list[float], places: int) -> dict[str, float] | None:
    return {"min": _money(min(values), places), "max": _money(max(values), places)} if values else None


def pool_figures(pool: PoolSpec, live: LivePrices | None = None,
                 prices: RegionPrices | None = None) -> dict[str, Any]:
    """One entry of the document's `pools` (see the module docstring); offline prices are `prices` (default:
    us-east-1's)."""
    prices = prices or region_prices(REFERENCE_REGION)
    adm = rendered_admission(pool)
    spec = pool.manifest["spec"]
    capacity = allowed_values(requirements_of(pool.manifest), CAPACITY_TYPE, _CAPACITY_TYPES)
    priced = [(t, h) for t in adm.types if (h := _hourly(t, live, prices)) is not None]
    per_vcpu = vcpu_hour_prices(adm.types, lambda t: _hourly(t, live, prices))
    cheapest = min(priced, key=lambda p: (p[1], p[0].name)) if priced else None
    cpu_text = (spec.get("limits") or {}).get("cpu")
    cpu = quantity_value(str(cpu_text)) if cpu_text is not None else None
    out: dict[str, Any] = {
        "name": pool.name, "admitted": len(adm.types), "priced": len(priced),
        "families": adm.values(INSTANCE_FAMILY), "capacityTypes": capacity, "arch": adm.values(ARCH),
        "cheapest": _cheapest(cheapest, live, prices),
        "usdPerVcpuHour": _range(per_vcpu, 6),
        "cpuLimit": _number(cpu) if cpu is not None else None,
        "monthlyAtCpuLimit": _range([float(cpu) * v * P.HOURS_PER_MONTH for v in per_vcpu], 2)
        if cpu is not None and per_vcpu else None,
        "fallbackPriced": 0 if live else len(prices.fallbacks(t.name for t, _ in priced)),
    }
    if live and "spot" in capacity:
        spot = [(t, *live.spot[t.name]) for t in adm.types if t.name in live.spot]
        spot_per_vcpu = vcpu_hour_prices((t for t, _, _ in spot), lambda t: live.spot[t.name][0])
        best = min(spot, key=lambda s: (s[1], s[0].name)) if spot else None
        out["liveSpot"] = {
            "types": len(spot),
            "cheapest": {"type": best[0].name, "hourly": best[1], "zone": best[2]} if best else None,
            "usdPerVcpuHour": _range(spot_per_vcpu, 6),
            "monthlyAtCpuLimit": _range([float(cpu) * v * P.HOURS_PER_MONTH for v in spot_per_vcpu], 2)
            if cpu is not None and spot_per_vcpu else None,
        }
    return out


def _cheapest(found: tuple[InstanceType, float] | None, live: LivePrices | None,
              prices: RegionPrices) -> dict[str, Any] | None:
    """The cheapest priced type; `fallback` (true) when its price is us-east-1's for want of a regional one."""
    if found is None:
        return None
    out: dict[str, Any] = {"type": found[0].name, "hourly": found[1]}
    if not live and found[0].name in prices.fallback:
        out["fallback"] = True
    return out


def _group_hourly(group: NodeGroup, live: LivePrices | None, prices: RegionPrices) -> tuple[float | None, str]:
    """A node group's per-node price: its first listed type (EKS prefers types in the listed order on-demand)."""
    first = group.instance_types[0] if group.instance_types else ""
    if group.capacity_type == "SPOT":
        if live:
            spot = [live.spot[t] for t in group.instance_types if t in live.spot]
            if spot:
                price, zone = min(spot)
                return price, f"live spot, lowest of its types ({zone})"
        on_demand = [p for t in group.instance_types
                     if (p := (live.on_demand.get(t) if live else prices.price(t))) is not None]
        return (max(on_demand) if on_demand else None), "spot, at the on-demand price: a ceiling"
    if live:
        return live.on_demand.get(first), "on-demand"
    return prices.price(first), "on-demand"


def estimate(inputs: CostInputs, on: dt.date, live: LivePrices | None = None, types: bool = False) -> dict[str, Any]:
    """The cost document for one stack (see the module docstring), priced as of day `on`; with `types`, each pool
    also lists its admitted instance types (`types`, in name order)."""
    cat = load_catalogue()
    prices = region_prices(inputs.region)
    fixed, warnings = _fixed_items(inputs, on, live, prices)
    pools, about_pools = _pool_items(inputs, live, types, prices)
    warnings += about_pools
    price_region = live.region if live else prices.price_region
    if price_region != inputs.region:
        warnings.append(f"instance and fixed prices are {price_region}'s, not {inputs.region}'s (no {inputs.region} "
                        f"price table here): add --live for {inputs.region}'s current instance prices")
    elif inputs.region != P.PRICE_REGION:
        warnings.append(f"fixed prices (control plane, NAT, EBS, KMS, logs) are {P.PRICE_REGION}'s")
    warnings += _fallback_warnings(inputs, pools, prices, live)
    for p in pools:
        if p["priced"] < p["admitted"]:
            warnings.append(f"pool {p['name']}: {p['admitted'] - p['priced']} admitted types have no on-demand "
                            "price and are left out of its figures")
    return {
        "region": inputs.region, "priceRegion": price_region,
        "priceSource": live.source if live else prices.source,
        "priceDate": live.fetched_at if live else prices.date,
        "priceFallback": None if live or not prices.fallback else {
            "region": REFERENCE_REGION, "source": prices.fallback_source, "date": cat.price_date},
        "catalogue": {"source": cat.source, "karpenterVersion": cat.karpenter_version, "date": cat.price_date},
        "fixedPrices": {"region": P.PRICE_REGION, "date": P.PRICES_DATE, "asOf": on.isoformat(),
                        "source": "AWS public pricing pages (see eks_karpenter/tools/cost/prices.py)"},
        "currency": cat.currency, "hoursPerMonth": P.HOURS_PER_MONTH,
        "instancePrices": "live on-demand, with live spot" if live else "on-demand (no spot prices offline)",
        "fixed": fixed, "fixedMonthly": _money(sum(f["monthly"] for f in fixed), 2),
        "perUnit": _per_unit_items(inputs), "pools": pools, "warnings": warnings,
    }


def _fallback_warnings(inputs: CostInputs, pools: list[dict[str, Any]], prices: RegionPrices,
                       live: LivePrices | None) -> list[str]:
    """Which admitted and node-group types are priced at us-east-1's price for want of a regional one."""
    if live or not prices.fallback:
        return []
    out = []

    def where(one: bool) -> str:
        return f"no {inputs.region} price in {prices.label}, so take{'s' if one else ''} {prices.fallback_source}"

    for spec, p in zip(inputs.pools, pools, strict=True):
        names = prices.fallbacks(t.name for t in rendered_admission(spec).types)
        if names:
            shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
            out.append(f"pool {p['name']}: {len(names)} of {p['admitted']} admitted types have {where(False)}: {shown}")
    for group in inputs.node_groups:
        names = prices.fallbacks(group.instance_types if group.capacity_type == "SPOT" else group.instance_types[:1])
        if names:
            one = len(names) == 1
            out.append(f"node group {group.name}: {', '.join(names)} {'has' if one else 'have'} {where(one)}")
    return out


def _fixed_items(inputs: CostInputs, on: dt.date, live: LivePrices | None,
                 prices: RegionPrices) -> tuple[list[dict[str, Any]], list[str]]:
    """What runs whatever the load: control plane, NAT gateways, managed node groups, KMS keys; and warnings."""
    fixed: list[dict[str, Any]] = []
    warnings: list[str] = []
    if inputs.cluster_version is not None:
        rate, note = P.control_plane_rate(inputs.cluster_version, on)
        fixed.append(_fixed(f"EKS control plane ({note})", 1, rate.usd))
        if rate is P.EKS_EXTENDED:
            warnings.append(f"Kubernetes {inputs.cluster_version} is in EKS extended support: the control plane "
                            f"costs ${P.EKS_EXTENDED.usd}/h instead of ${P.EKS_STANDARD.usd}/h; upgrade")
    if inputs.nat_gateways:
        fixed.append(_fixed("NAT gateway", inputs.nat_gateways, P.NAT_GATEWAY_HOUR.usd))
        fixed.append(_fixed("public IPv4 address (NAT gateway Elastic IP)", inputs.nat_gateways,
                            P.PUBLIC_IPV4_HOUR.usd))
    for group in inputs.node_groups:
        hourly, how = _group_hourly(group, live, prices)
        label = f"node group {group.name}: {group.instance_types[0] if group.instance_types else '?'} ({how})"
        if hourly is None:
            warnings.append(f"node group {group.name}: no price for {', '.join(group.instance_types)}")
        else:
            fixed.append(_fixed(label, group.count, hourly))
        fixed.append(_fixed(f"node group {group.name}: gp3 root volumes ({group.disk_gib} GiB each)", group.count,
                            group.disk_gib * P.EBS_GP3_GB_MONTH.usd / P.HOURS_PER_MONTH))
    if inputs.kms_keys:
        fixed.append(_fixed("KMS key (secrets encryption)", inputs.kms_keys, P.KMS_KEY_MONTH.usd / P.HOURS_PER_MONTH))
    return fixed, warnings


def _unit(item: str, price: P.Price) -> dict[str, Any]:
    return {"item": item, "unit": price.unit, "price": price.usd}


def _per_unit_items(inputs: CostInputs) -> list[dict[str, Any]]:
    """What is billed by use (data processed, requests, log volume), at its unit price."""
    per_unit: list[dict[str, Any]] = []
    if inputs.nat_gateways:
        per_unit.append(_unit("NAT gateway data processing", P.NAT_GATEWAY_GB))
    if inputs.kms_keys:
        per_unit.append(_unit("KMS requests", P.KMS_REQUESTS))
    if inputs.control_plane_logs:
        per_unit.append(_unit("control-plane log ingestion (CloudWatch Logs)", P.LOGS_INGESTION_GB))
        per_unit.append(_unit("control-plane log storage (CloudWatch Logs)", P.LOGS_STORAGE_GB_MONTH))
    if inputs.flow_logs == "cloudWatchLogs":
        per_unit.append(_unit("VPC flow log ingestion (CloudWatch Logs)", P.LOGS_INGESTION_GB))
        per_unit.append(_unit("VPC flow log storage (CloudWatch Logs)", P.LOGS_STORAGE_GB_MONTH))
    elif inputs.flow_logs == "s3":
        per_unit.append(_unit("VPC flow log delivery to S3", P.FLOW_LOGS_S3_GB))
    if inputs.interruption_queue:
        per_unit.append(_unit("interruption queue requests (SQS)", P.SQS_REQUESTS))
    return per_unit


def _pool_items(inputs: CostInputs, live: LivePrices | None, types: bool,
                prices: RegionPrices) -> tuple[list[dict[str, Any]], list[str]]:
    """Each pool's figures (with its admitted types when asked) and what is wrong with what it can launch."""
    pools = [pool_figures(p, live, prices) for p in inputs.pools]
    warnings: list[str] = []
    for spec, p in zip(inputs.pools, pools, strict=True):
        if types:
            p["types"] = [t.name for t in rendered_admission(spec).types]
        warnings += pool_warnings(spec.name, p["capacityTypes"], rendered_admission(spec),
                                  spec.manifest["spec"].get("limits") or {})
    return pools, warnings
