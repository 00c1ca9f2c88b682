"""Whether a NodePool's disruption settings let Karpenter remove an empty node now.

Karpenter removes an empty node `consolidateAfter` after it became empty (reason `Empty`), unless
`consolidateAfter` is `Never` or a budget that applies to `Empty` allows zero disruptions at that moment. A
budget's window opens at each time its cron `schedule` (UTC) matches and lasts `duration`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

_MACROS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
           "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_NAMES: tuple[dict[str, int], ...] = (
    {}, {}, {}, {m: i + 1 for i, m in enumerate(_MONTHS)}, {d: i for i, d in enumerate(_DAYS)})
_RANGES = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 6))
_DURATION = re.compile(r"([0-9]+)([hms])")
_UNIT = {"h": 3600, "m": 60, "s": 1}


def parse_duration(text: str) -> float | None:
    """Seconds in a Go duration as Karpenter's fields spell them (`1h30m`, `30s`); None for `Never`."""
    if text == "Never":
        return None
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"not a duration: {text!r}")
    return float(sum(int(n) * _UNIT[u] for n, u in parts))


def _field(text: str, index: int) -> set[int]:
    low, high = _RANGES[index]
    names = _NAMES[index]
    out: set[int] = set()
    for item in text.lower().split(","):
        span, _, step_text = item.partition("/")
        step = int(step_text) if step_text else 1
        if span in ("*", "?"):
            start, end = low, high
        else:
            ends = [names[e] if e in names else int(e) for e in span.split("-")]
            start, end = ends[0], ends[-1]
            if step_text and len(ends) == 1:
                end = high  # `5/15` means from 5 to the end in steps of 15
        if not (low <= start <= high and low <= end <= high + (1 if index == 4 else 0)) or step < 1:
            raise ValueError(f"cron field {text!r} out of range")
        out.update(v % 7 if index == 4 else v for v in range(start, end + 1, step))
    return out


@dataclass(frozen=True)
class Cron:
    """A 5-field cron expression (minute hour day-of-month month day-of-week), evaluated in UTC."""

    minutes: set[int]
    hours: set[int]
    days: set[int]
    months: set[int]
    weekdays: set[int]
    day_restricted: bool
    weekday_restricted: bool

    @staticmethod
    def parse(text: str) -> Cron:
        text = _MACROS.get(text, text)
        fields = text.split()
        if len(fields) != 5:
            raise ValueError(f"not a 5-field cron expression: {text!r}")
        minutes, hours, days, months, weekdays = (_field(f, i) for i, f in enumerate(fields))
        return Cron(minutes, hours, days, months, weekdays, day_restricted=fields[2] not in ("*", "?"),
                    weekday_restricted=fields[4] not in ("*", "?"))

    def matches(self, t: datetime) -> bool:
        if t.minute not in self.minutes or t.hour not in self.hours or t.month not in self.months:
            return False
        day = t.day in self.days
        weekday = (t.isoweekday() % 7) in self.weekdays
        # Standard cron: with both day fields restricted, either may match.
        if self.day_restricted and self.weekday_restricted:
            return day or weekday
        return day and weekday


def window_open(schedule: str, duration: str, now: datetime) -> bool:
    """Whether a window starting at each match of `schedule` and lasting `duration` contains `now` (UTC)."""
    cron = Cron.parse(schedule)
    seconds = parse_duration(duration) or 0.0
    start = now.replace(second=0, microsecond=0)
    # Every minute that could have opened a window still open now, newest first.
    for back in range(int(seconds // 60) + 1):
        t = start - timedelta(minutes=back)
        if cron.matches(t) and t + timedelta(seconds=seconds) > now:
            return True
    return False


class ConsolidationState(StrEnum):
    """Whether Karpenter may remove the empty node now (the values are the report's)."""

    ENABLED = "enabled"
    DISABLED = "disabled"
    """consolidateAfter: Never."""
    BLOCKED = "blocked"
    """A zero budget for Empty is active now."""
    MAYBE_BLOCKED = "maybe-blocked"
    """A zero budget whose window could not be evaluated."""


@dataclass(frozen=True)
class Consolidation:
    """What the pool's disruption settings mean for the empty node the smoke test leaves behind."""

    state: ConsolidationState
    policy: str
    consolidate_after: float | None
    """Seconds; None for Never."""
    detail: str = ""


def _zero(nodes: Any) -> bool:
    return str(nodes).strip() in ("0", "0%")


def consolidation_of(disruption: Mapping[str, Any] | None, now: datetime) -> Consolidation:
    """Evaluate a NodePool manifest's `spec.disruption` at `now` (UTC) for an empty node."""
    disruption = disruption or {}
    policy = str(disruption.get("consolidationPolicy", "WhenEmptyOrUnderutilized"))
    after_text = str(disruption.get("consolidateAfter", "0s"))
    after = parse_duration(after_text)
    if after is None:
        return Consolidation(ConsolidationState.DISABLED, policy, None, "consolidateAfter: Never")
    budgets: Sequence[Mapping[str, Any]] = disruption.get("budgets") or [{"nodes": "10%"}]
    maybe = ""
    for i, budget in enumerate(budgets):
        reasons = budget.get("reasons")
        if not _zero(budget.get("nodes", "10%")) or (reasons and "Empty" not in reasons):
            continue
        schedule, duration = budget.get("schedule"), budget.get("duration")
        where = f"budgets[{i}] nodes: {budget.get('nodes')!r}"
        if not schedule:
            return Consolidation(ConsolidationState.BLOCKED, policy, after, f"{where} (no schedule: always)")
        try:
            if window_open(str(schedule), str(duration or "0s"), now):
                return Consolidation(ConsolidationState.BLOCKED, policy, after,
                                     f"{where}, window {schedule!r} for {duration} is open now")
        except ValueError as exc:
            maybe = f"{where}, schedule {schedule!r}: {exc}"
    if maybe:
        return Consolidation(ConsolidationState.MAYBE_BLOCKED, policy, after, maybe)
    return Consolidation(ConsolidationState.ENABLED, policy, after, f"consolidateAfter: {after_text}")
