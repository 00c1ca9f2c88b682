"""The cost sections of the plan comment and the plan diff, computed from the plans themselves (no config)."""

from __future__ import annotations

import datetime as dt
import json
import re

from eks_karpenter.tools.cost import estimate, inputs_from_plan
from eks_karpenter.tools.cost.report import diff_section, plan_section
from eks_karpenter.tools.engine.document import PlanDocument

_ARN_REGION = re.compile(r"arn:aws[a-z-]*:[a-z0-9-]+:([a-z]{2}(?:-gov|-iso[a-z]?)?-[a-z]+-\d):")


def plan_region(doc: PlanDocument) -> str | None:
    """The stack's region as the plan shows it: a subnet's zone, else a regional ARN in some input."""
    for r in doc.by_type("aws:ec2/subnet:Subnet"):
        zone = str(r.inputs.get("availabilityZone") or "")
        if zone:
            return zone[:-1]
    for r in doc.resources:
        if match := _ARN_REGION.search(json.dumps(r.inputs)):
            return match[1]
    return None


def _estimate(doc: PlanDocument, on: dt.date) -> dict[str, object] | None:
    inputs = inputs_from_plan(doc.resources, plan_region(doc) or "unknown")
    if not inputs.pools and inputs.cluster_version is None:
        return None  # nothing priced in this plan
    return estimate(inputs, on)


def plan_cost_lines(doc: PlanDocument, on: dt.date | None = None) -> list[str]:
    """Fixed monthly cost and each pool's ceiling, for the plan comment."""
    found = _estimate(doc, on or dt.date.today())
    return plan_section(found) if found else []


def plan_cost_pools(doc: PlanDocument, on: dt.date | None = None) -> list[dict[str, object]]:
    """Each NodePool's cost figures (`name`, `cpuLimit`, `monthlyAtCpuLimit` ...), as the plan comment shows them."""
    found = _estimate(doc, on or dt.date.today())
    pools = found.get("pools") if found else None
    return list(pools) if isinstance(pools, list) else []


def diff_cost_lines(old: PlanDocument, new: PlanDocument, on: dt.date | None = None) -> tuple[str, ...]:
    """How the fixed monthly cost and each pool's ceiling change, for the plan diff (empty when neither moves)."""
    day = on or dt.date.today()
    before, after = _estimate(old, day), _estimate(new, day)
    if before is None and after is None:
        return ()
    if before is None or after is None:  # a stack planned from nothing, or emptied: compare with no cost
        known = before or after
        assert known is not None
        empty = {**known, "pools": [], "fixedMonthly": 0.0}
        before, after = before or empty, after or empty
    return tuple(diff_section(before, after))
