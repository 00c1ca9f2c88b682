"""Rules on a pool's disruption windows in local time (`disruption.timeZone`, `disruption.windows`) against its
UTC budgets: settings that would be ignored, windows an always-on budget makes meaningless, and zones that do
not follow the local clock's daylight saving.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from eks_karpenter.config.errors import Issue, KeyPath
from eks_karpenter.platform.nodepool.config import Budget, LocalWindow, NodePoolConfig

_FIXED = re.compile(r"^(Etc/GMT[+-][0-9]+|(Etc/)?(GMT|GMT0|GMT[+-]0|Greenwich)|EST|MST|HST)$")
"""The tz database's abbreviation zones (`EST`, `MST`, `HST`, `GMT`) and fixed offsets (`Etc/GMT+5`): one offset
all year. Zones named after a place (`America/New_York`) and the rule names (`EST5EDT`, `CET`) follow the local
daylight saving; UTC is a deliberate choice, not a local clock."""


def fixed_offset_zone(zone: str) -> bool:
    """Whether `zone` is an abbreviation or fixed-offset zone of the tz database (UTC excluded)."""
    return _FIXED.match(zone) is not None


def _zero(nodes: str) -> bool:
    return nodes.rstrip("%") == "0"


def _covers(budget: Budget, window: LocalWindow) -> bool:
    """An always-on `nodes: "0"` budget that holds every node for every reason the window limits."""
    if budget.schedule is not None or not _zero(budget.nodes):
        return False
    return budget.reasons is None or (window.reasons is not None and set(window.reasons) <= set(budget.reasons))


def window_issues(pool: NodePoolConfig, at: KeyPath) -> list[Issue]:
    """`timeZone` with nothing to apply to, and windows an always-on `nodes: "0"` budget makes meaningless."""
    d = pool.disruption
    here = at + ("disruption",)
    issues: list[Issue] = []
    if d.time_zone is not None and not d.windows:
        scheduled = any(b.schedule is not None for b in d.budgets)
        why = ("budgets' `schedule` is UTC (Karpenter's cron has no time zone): write the local hours as windows "
               "instead" if scheduled else "it only applies to windows, and this pool has none")
        issues.append(Issue(here + ("timeZone",), f"is ignored: {why}", d.time_zone))
    for k, window in enumerate(d.windows):
        blocking = next((j for j, b in enumerate(d.budgets) if _covers(b, window)), None)
        if blocking is not None:
            issues.append(Issue(here + ("windows", k), f"has no effect: budgets[{blocking}] (nodes: "
                                f"\"{d.budgets[blocking].nodes}\", no schedule) already holds every node at all "
                                "hours for these reasons, and the most restrictive budget wins. Give that budget a "
                                "schedule or reasons, or drop this window", window.dump()))
    return issues


def window_warnings(pools: Sequence[NodePoolConfig], at_pools: KeyPath) -> list[Issue]:
    """Legal but almost surely unintended: a zone without daylight saving for local business hours, and UTC
    budget schedules beside windows whose `timeZone` they do not follow."""
    found: list[Issue] = []
    for i, pool in enumerate(pools):
        d = pool.disruption
        here = at_pools + (i, "disruption")
        if not d.windows or d.time_zone is None:
            continue
        if fixed_offset_zone(d.time_zone):
            found.append(Issue(here + ("timeZone",), "is an abbreviation or a fixed offset, with no daylight "
                               "saving: in summer the windows are an hour off the local clock of the place they "
                               "are meant for; name the place (America/New_York, Europe/London)", d.time_zone))
        for k, budget in enumerate(d.budgets):
            if budget.schedule is not None:
                found.append(Issue(here + ("budgets", k, "schedule"), f"is UTC: timeZone ({d.time_zone}) applies "
                                   "to windows only; write local hours as a window", budget.schedule))
    return found
