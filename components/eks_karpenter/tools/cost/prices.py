"""Dated AWS list prices for what the platform runs besides nodes (us-east-1, USD, on-demand, no free tier).

Every figure names its source page and the date it was read. This project is built offline, so these are the
prices published on those pages as of PRICES_DATE; confirm them before relying on a total, and use `--live` for
current instance prices. Regions other than PRICE_REGION are priced with this table, and the output says so.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from eks_karpenter.versions import EKS_KUBERNETES_SUPPORT

PRICE_REGION = "us-east-1"
PRICES_DATE = "2025-06-01"
"""When the figures below were read from AWS's public pricing pages (all unchanged since 2024-04)."""
HOURS_PER_MONTH = 730
"""AWS's own convention for monthly figures (8,760 hours / 12)."""


@dataclass(frozen=True)
class Price:
    """One list price."""

    usd: float
    unit: str
    source: str


EKS_STANDARD = Price(0.10, "cluster-hour", "https://aws.amazon.com/eks/pricing/ (Kubernetes version in standard "
                     "support)")
EKS_EXTENDED = Price(0.60, "cluster-hour", "https://aws.amazon.com/eks/pricing/ (Kubernetes version in extended "
                     "support)")
NAT_GATEWAY_HOUR = Price(0.045, "gateway-hour", "https://aws.amazon.com/vpc/pricing/ (NAT gateway)")
NAT_GATEWAY_GB = Price(0.045, "GB processed", "https://aws.amazon.com/vpc/pricing/ (NAT gateway data processing)")
PUBLIC_IPV4_HOUR = Price(0.005, "address-hour", "https://aws.amazon.com/vpc/pricing/ (public IPv4 address, e.g. a "
                         "NAT gateway's Elastic IP)")
LOGS_INGESTION_GB = Price(0.50, "GB ingested", "https://aws.amazon.com/cloudwatch/pricing/ (CloudWatch Logs "
                          "standard ingestion; EKS control-plane logs and VPC flow logs to CloudWatch)")
LOGS_STORAGE_GB_MONTH = Price(0.03, "GB-month stored", "https://aws.amazon.com/cloudwatch/pricing/ (CloudWatch "
                              "Logs archival storage)")
FLOW_LOGS_S3_GB = Price(0.25, "GB delivered", "https://aws.amazon.com/cloudwatch/pricing/ (vended logs: VPC flow "
                        "logs delivered to S3, first 10 TB a month)")
KMS_KEY_MONTH = Price(1.00, "key-month", "https://aws.amazon.com/kms/pricing/ (customer managed key)")
KMS_REQUESTS = Price(0.03, "10,000 requests", "https://aws.amazon.com/kms/pricing/ (symmetric key requests)")
EBS_GP3_GB_MONTH = Price(0.08, "GB-month", "https://aws.amazon.com/ebs/pricing/ (gp3 storage; 3,000 IOPS and "
                         "125 MB/s included)")
SQS_REQUESTS = Price(0.40, "million requests", "https://aws.amazon.com/sqs/pricing/ (standard queue, after the "
                     "first million a month)")

def control_plane_rate(version: str, on: dt.date) -> tuple[Price, str]:
    """The control-plane price of a cluster on `version` on day `on`, and a note saying why.

    The support windows come from the one calendar in `versions.py` (the same one validation uses)."""
    support = EKS_KUBERNETES_SUPPORT.get(version)
    if support is None:
        return EKS_STANDARD, f"{version}, standard support (no support dates for this version)"
    ends = support.end_of_standard
    if on > ends:
        return EKS_EXTENDED, f"{version}, extended support since {(ends + dt.timedelta(days=1)).isoformat()}"
    return EKS_STANDARD, f"{version}, standard support until {ends.isoformat()}"
