"""Disruption windows in local time: the UTC budget schedules they render to, across daylight-saving changes."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from eks_karpenter.platform.nodepool import render_node_pool
from eks_karpenter.platform.nodepool.config import LocalWindow, NodePoolConfig
from eks_karpenter.platform.nodepool.manifests import disruption_spec
from eks_karpenter.platform.nodepool.windows import render_window, transitions, zone_offsets

from tests.support import plan_config, plan_stack, requires_upstream, stack_config

TODAY = date(2026, 11, 26)
OFFICE = LocalWindow(start="08:00", end="18:00", reasons=["Underutilized", "Drifted"])


def covered(budget: dict[str, object], moment: datetime) -> bool:
    """Whether a UTC cron budget (`M H * * days`) is active at `moment` (UTC), as Karpenter evaluates it."""
    minute, hour, _, _, days = str(budget["schedule"]).split(" ")
    duration = str(budget["duration"])
    hours = int(duration.split("h")[0]) if "h" in duration else 0
    minutes = int(duration.split("h")[-1].rstrip("m") or 0) if duration.endswith("m") else 0
    length = timedelta(hours=hours, minutes=minutes)
    names = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
    for back in range(0, 3):  # a window started on one of the previous days may still run
        day = (moment - timedelta(days=back)).date()
        start = datetime(day.year, day.month, day.day, int(hour), int(minute), tzinfo=UTC)
        if names[(day.weekday() + 1) % 7] in days.split(",") and start <= moment < start + length:
            return True
    return False


def test_berlin_renders_one_schedule_covering_summer_and_winter() -> None:
    w = render_window(OFFICE, "Europe/Berlin", TODAY)
    assert w.budget == {"nodes": "0", "schedule": "0 6 * * mon,tue,wed,thu,fri", "duration": "11h",
                        "reasons": ["Underutilized", "Drifted"]}
    assert w.local == "mon,tue,wed,thu,fri 08:00-18:00 Europe/Berlin"
    assert "UTC+01:00" in w.daylight_saving and "UTC+02:00" in w.daylight_saving
    assert "at UTC+01:00 it holds 07:00-18:00 local" in w.daylight_saving
    assert "at UTC+02:00 it holds 08:00-19:00 local" in w.daylight_saving
    assert "2027-03-28 to UTC+02:00" in w.daylight_saving  # the next spring change


@pytest.mark.parametrize("zone", ["Europe/Berlin", "America/New_York", "Australia/Sydney", "Asia/Kolkata"])
def test_every_local_office_hour_of_the_year_is_covered(zone: str) -> None:
    """Walk a year in 30-minute steps across both DST changes: every local mon-fri 08:00-18:00 moment is inside the
    rendered UTC budget, and the budget never runs more than the offset difference beyond it."""
    budget = render_window(OFFICE, zone, TODAY).budget
    offsets = zone_offsets(zone, 2027)
    slack = timedelta(minutes=max(offsets) - min(offsets))
    tz = ZoneInfo(zone)
    moment = datetime(2027, 1, 1, tzinfo=UTC)
    while moment < datetime(2028, 1, 1, tzinfo=UTC):
        local = moment.astimezone(tz)
        in_office = local.weekday() < 5 and 8 <= local.hour < 18
        if in_office:
            assert covered(budget, moment), (zone, local)
        elif covered(budget, moment):
            near = [moment.astimezone(tz) + d for d in (slack, -slack)]
            assert any(n.weekday() < 5 and 8 <= n.hour < 18 for n in near), (zone, local)
        moment += timedelta(minutes=30)


def test_a_zone_ahead_of_utc_moves_the_days_back() -> None:
    w = render_window(OFFICE, "Australia/Sydney", TODAY)  # 08:00 AEST/AEDT is 21:00/22:00 UTC the day before
    assert w.budget["schedule"] == "0 21 * * sun,mon,tue,wed,thu"
    assert w.budget["duration"] == "11h"


def test_a_zone_without_daylight_saving_renders_exactly() -> None:
    w = render_window(OFFICE, "Asia/Kolkata", TODAY)  # UTC+05:30 all year
    assert w.budget["schedule"] == "30 2 * * mon,tue,wed,thu,fri"
    assert w.budget["duration"] == "10h"
    assert w.daylight_saving == ""


def test_an_overnight_window() -> None:
    w = render_window(LocalWindow(start="22:00", end="06:00", days=["sat"], nodes="100%"), "UTC", TODAY)
    assert w.budget == {"nodes": "100%", "schedule": "0 22 * * sat", "duration": "8h"}


def test_transitions_list_the_next_changes() -> None:
    assert transitions("America/New_York", TODAY) == [(date(2027, 3, 14), -240), (date(2027, 11, 7), -300)]
    assert transitions("UTC", TODAY) == []


def test_windows_join_the_pools_budgets() -> None:
    pool = NodePoolConfig.model_validate({"name": "general", "disruption": {
        "budgets": [{"nodes": "10%"}], "timeZone": "Europe/Berlin",
        "windows": [{"start": "08:00", "end": "18:00"}]}})
    spec = disruption_spec(pool.disruption, TODAY)
    assert spec["budgets"] == [{"nodes": "10%"},
                               {"nodes": "0", "schedule": "0 6 * * mon,tue,wed,thu,fri", "duration": "11h"}]
    assert "timeZone" not in spec and "windows" not in spec


@requires_upstream
def test_rendered_pool_passes_the_crd() -> None:
    from tests.support.crd_validator import validate_object

    pool = NodePoolConfig.model_validate({"name": "general", "disruption": {
        "timeZone": "Australia/Sydney", "windows": [{"start": "08:00", "end": "18:00", "reasons": ["Drifted"]}]}})
    assert validate_object(render_node_pool(pool)) == []


def test_prod_plan_shows_local_windows() -> None:
    doc = plan_stack("prod")
    windows = doc.outputs["disruptionWindows"]["general"]
    assert windows[0]["local"] == "mon,tue,wed,thu,fri 08:00-18:00 America/New_York"
    assert windows[0]["budget"]["schedule"] == "0 12 * * mon,tue,wed,thu,fri"
    assert "daylight saving" in windows[0]["daylightSaving"]
    spec = doc.get("kubernetes:karpenter.sh/v1:NodePool", "nodepool-general").inputs["spec"]["disruption"]
    assert windows[0]["budget"] in spec["budgets"]
    from eks_karpenter.tools.engine.render import render_markdown

    markdown = render_markdown(doc)
    assert ("- `general`: mon,tue,wed,thu,fri 08:00-18:00 America/New_York -> mon,tue,wed,thu,fri 12:00 UTC "
            "for 11h. America/New_York changes between UTC-05:00 and UTC-04:00") in markdown


@pytest.mark.parametrize(("disruption", "key", "message"), [
    ({"windows": [{"start": "08:00", "end": "18:00"}]}, "timeZone", "IANA time zone"),
    ({"timeZone": "Europe/Berlinn", "windows": [{"start": "08:00", "end": "18:00"}]}, "timeZone", "not an IANA"),
    ({"timeZone": "UTC", "windows": [{"start": "8:00", "end": "18:00"}]}, "start", "pattern"),
    ({"timeZone": "UTC", "windows": [{"start": "08:00", "end": "08:00"}]}, "end", "equals start"),
])
def test_bad_windows_are_refused_naming_the_key(tmp_path: Path, disruption: dict[str, object], key: str,
                                                message: str) -> None:
    config = stack_config("dev")
    config["eks-karpenter:nodePools"][0]["disruption"] = disruption
    result = plan_config(config, tmp_path)
    text = str(result.error)
    assert key in text and message in text, text
    assert not result.document.resources
