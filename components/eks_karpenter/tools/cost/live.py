"""`cost --live`: current on-demand and spot prices for the stack's region, with the user's AWS credentials.

- On-demand: the Price List API (`pricing:GetProducts`, served from us-east-1 for every region), EC2 products in
  the region (`regionCode`) for Linux, shared tenancy, no pre-installed software, capacity status Used.
- Spot: EC2 `DescribeSpotPriceHistory` in the stack's region for `Linux/UNIX`, from now: the latest price per
  type and zone; a type's figure is its lowest zone.

boto3 is an optional extra (`pip install 'eks-karpenter[live]'`): without it, or without credentials, `LiveError`
says what to do. Read-only calls; nothing is created. IAM needs `pricing:GetProducts` and
`ec2:DescribeSpotPriceHistory`.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from typing import Any

from eks_karpenter.tools.cost.estimate import LivePrices

PRICING_REGION = "us-east-1"
"""The Price List API endpoint (it also answers for every other region's prices)."""


class LiveError(Exception):
    """Live prices could not be fetched; the message says why and what to do."""


def on_demand_filters(region: str) -> list[dict[str, str]]:
    """The GetProducts filters for plain Linux on-demand instances in `region`."""
    wanted = {"regionCode": region, "operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA",
              "capacitystatus": "Used"}
    return [{"Type": "TERM_MATCH", "Field": k, "Value": v} for k, v in wanted.items()]


def _pages(call: Any, key: str, **kwargs: Any) -> Iterator[Any]:
    token: str | None = None
    while True:
        page = call(**kwargs, **({"NextToken": token} if token else {}))
        yield from page.get(key, [])
        token = page.get("NextToken")
        if not token:
            return


def fetch_on_demand(pricing: Any, region: str) -> dict[str, float]:
    """Instance type -> on-demand USD/hour (the lowest, should a type have several matching products)."""
    out: dict[str, float] = {}
    for text in _pages(pricing.get_products, "PriceList", ServiceCode="AmazonEC2", Filters=on_demand_filters(region)):
        product = json.loads(text) if isinstance(text, str) else text
        itype = product.get("product", {}).get("attributes", {}).get("instanceType")
        for term in (product.get("terms", {}).get("OnDemand") or {}).values():
            for dim in (term.get("priceDimensions") or {}).values():
                usd = float(dim.get("pricePerUnit", {}).get("USD", "0"))
                if itype and usd > 0 and (itype not in out or usd < out[itype]):
                    out[itype] = usd
    return out


def fetch_spot(ec2: Any, now: dt.datetime) -> dict[str, tuple[float, str]]:
    """Instance type -> (lowest latest spot USD/hour over zones, that zone)."""
    latest: dict[tuple[str, str], tuple[dt.datetime, float]] = {}
    for item in _pages(ec2.describe_spot_price_history, "SpotPriceHistory", ProductDescriptions=["Linux/UNIX"],
                       StartTime=now):
        key = (item["InstanceType"], item["AvailabilityZone"])
        stamp = item["Timestamp"]
        if key not in latest or stamp > latest[key][0]:
            latest[key] = (stamp, float(item["SpotPrice"]))
    out: dict[str, tuple[float, str]] = {}
    for (itype, zone), (_, price) in sorted(latest.items()):
        if itype not in out or price < out[itype][0]:
            out[itype] = (price, zone)
    return out


def fetch_live_prices(region: str, session: Any = None, now: dt.datetime | None = None) -> LivePrices:
    """Current prices for `region`; `session` is a boto3 Session (default: the user's credential chain)."""
    try:
        import boto3
        from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError
    except ImportError:
        raise LiveError("--live needs boto3: pip install 'eks-karpenter[live]'") from None
    session = session or boto3.Session()
    if session.get_credentials() is None:
        raise LiveError("--live needs AWS credentials (AWS_PROFILE, environment variables or SSO login) allowed "
                        "pricing:GetProducts and ec2:DescribeSpotPriceHistory")
    now = now or dt.datetime.now(dt.UTC)
    try:
        on_demand = fetch_on_demand(session.client("pricing", region_name=PRICING_REGION), region)
        spot = fetch_spot(session.client("ec2", region_name=region), now)
    except NoCredentialsError:
        raise LiveError("--live needs AWS credentials") from None
    except (ClientError, BotoCoreError) as exc:
        raise LiveError(f"fetching live prices for {region} failed: {exc}") from None
    if not on_demand:
        raise LiveError(f"the Price List API returned no Linux on-demand prices for {region}")
    return LivePrices(region=region, fetched_at=now.strftime("%Y-%m-%dT%H:%MZ"), on_demand=on_demand, spot=spot)
