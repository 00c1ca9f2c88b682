"""Disruption windows in local time, rendered to Karpenter's budget schedules (cron in UTC, no time zones).

A window is local business hours on some weekdays (`08:00`-`18:00`, mon-fri, Europe/Berlin). A zone with
daylight saving has two UTC offsets a year, and one UTC cron cannot follow both, so the rendered budget covers
the local window under every offset the zone uses: it starts at the local start under the largest offset and
lasts until the local end under the smallest. Windows are nearly always restrictions (`nodes: "0"` while people
work), so the budget errs on the side of holding nodes longer: with Europe/Berlin, 06:00-17:00 UTC, which is
07:00-18:00 local in winter (an hour early) and 08:00-19:00 in summer (an hour late). `describe` says so, and the
plan exports it per pool (`disruptionWindows`). Zones without daylight saving render exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
"""Cron's weekday names, Sunday = 0."""
MINUTES_PER_DAY = 24 * 60


def _minutes(hhmm: str) -> int:
    hours, minutes = hhmm.split(":")
    return int(hours) * 60 + int(minutes)


def _hhmm(minutes: int) -> str:
    minutes %= MINUTES_PER_DAY
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _duration(minutes: int) -> str:
    hours, rest = divmod(minutes, 60)
    return f"{hours}h{rest}m" if hours and rest else f"{hours}h" if hours else f"{rest}m"


def _offset(minutes: int) -> str:
    sign = "+" if minutes >= 0 else "-"
    return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def zone_offsets(zone: str, year: int) -> list[int]:
    """The UTC offsets (minutes) the zone uses in `year`, smallest first (noon of every day)."""
    tz = ZoneInfo(zone)
    start = date(year, 1, 1)
    found = set()
    for day in range(366 if year % 4 == 0 else 365):
        moment = datetime.combine(start + timedelta(days=day), time(12), tzinfo=tz)
        offset = moment.utcoffset()
        assert offset is not None
        found.add(int(offset.total_seconds() // 60))
    return sorted(found)


def transitions(zone: str, after: date, count: int = 2) -> list[tuple[date, int]]:
    """The next `count` offset changes after `after`: (local date, new offset in minutes)."""
    tz = ZoneInfo(zone)
    out: list[tuple[date, int]] = []
    previous: int | None = None
    for day in range(800):
        current = after + timedelta(days=day)
        moment = datetime.combine(current, time(12), tzinfo=tz).utcoffset()
        assert moment is not None
        offset = int(moment.total_seconds() // 60)
        if previous is not None and offset != previous:
            out.append((current, offset))
            if len(out) == count:
                break
        previous = offset
    return out


@dataclass(frozen=True)
class RenderedWindow:
    """One local window as a Karpenter budget, with what it means in local time."""

    budget: dict[str, Any]
    """`{nodes, schedule, duration[, reasons]}` in UTC."""
    local: str
    """The window as given, e.g. `mon-fri 08:00-18:00 Europe/Berlin`."""
    utc: str
    """The rendered window in UTC, e.g. `mon,tue,wed,thu,fri 06:00 UTC for 11h`."""
    daylight_saving: str
    """What the window covers under each offset, and the next changes (empty for a zone without DST)."""


def render_window(window: Any, zone: str, today: date) -> RenderedWindow:
    """`window` (a `LocalWindow`: nodes, days, start, end, reasons) as a UTC budget covering it all year."""
    offsets = zone_offsets(zone, today.year) + zone_offsets(zone, today.year + 1)
    low, high = min(offsets), max(offsets)
    start = _minutes(window.start)
    length = (_minutes(window.end) - start) % MINUTES_PER_DAY or MINUTES_PER_DAY
    utc_start = start - high  # the earliest the local start falls in UTC
    shift, utc_minute = divmod(utc_start, MINUTES_PER_DAY)  # shift: -1 when it falls on the previous UTC day
    duration = length + (high - low)
    days = [DAYS[(DAYS.index(d) + shift) % 7] for d in window.days]
    days = sorted(set(days), key=DAYS.index)
    schedule = f"{utc_minute % 60} {utc_minute // 60} * * {','.join(days)}"
    budget: dict[str, Any] = {"nodes": window.nodes, "schedule": schedule, "duration": _duration(duration)}
    if window.reasons:
        budget["reasons"] = list(window.reasons)
    local = f"{','.join(window.days)} {window.start}-{window.end} {zone}"
    utc = f"{','.join(days)} {_hhmm(utc_minute)} UTC for {_duration(duration)}"
    if low == high:
        return RenderedWindow(budget, local, utc, "")
    covered = "; ".join(
        f"at {_offset(off)} it holds {_hhmm(utc_minute + off)}-{_hhmm(utc_minute + off + duration)} local"
        for off in sorted({low, high}))
    changes = ", ".join(f"{d.isoformat()} to {_offset(o)}" for d, o in transitions(zone, today))
    note = (f"{zone} changes between {_offset(low)} and {_offset(high)} (daylight saving); one UTC schedule "
            f"covers {window.start}-{window.end} local under both: {covered}. Next changes: {changes}.")
    return RenderedWindow(budget, local, utc, note)


def render_windows(windows: Sequence[Any], zone: str | None, today: date | None = None) -> list[RenderedWindow]:
    """Every window of a pool (none without a time zone: the rules refuse windows without one)."""
    if not windows or zone is None:
        return []
    return [render_window(w, zone, today or datetime.now(UTC).date()) for w in windows]
