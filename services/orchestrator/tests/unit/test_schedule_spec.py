"""Schedule parsing and the next firing (orchestrator/schedules/spec.py): cron and presets in a
time zone, DST, the minimum interval, and clear refusals. Every time is given: no clock."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from orchestrator.core.schedules.errors import InvalidSchedule
from orchestrator.core.schedules.spec import due, parse

NOW = datetime(2026, 3, 27, 12, 0, tzinfo=UTC)


def test_daily_fires_at_six_local_time_strictly_after_now() -> None:
    spec = parse("daily", "Europe/Paris", NOW, 900)
    assert spec.expression == "0 6 * * *"
    # 27 March 2026, 12:00 UTC: today's 06:00 Paris has passed; tomorrow's is next.
    assert spec.next_after(NOW) == datetime(2026, 3, 28, 5, 0, tzinfo=UTC)
    fire = spec.next_after(NOW)
    assert spec.next_after(fire) > fire


def test_the_same_local_time_across_a_dst_change() -> None:
    spec = parse("0 6 * * *", "Europe/Paris", NOW, 900)
    saturday = spec.next_after(NOW)
    sunday = spec.next_after(saturday)  # clocks went forward at 02:00 on 29 March
    assert (saturday.hour, sunday.hour) == (5, 4)  # 06:00 CET, then 06:00 CEST


def test_weekly_is_monday_morning() -> None:
    spec = parse("Weekly", "UTC", NOW, 900)
    assert spec.next_after(NOW) == datetime(2026, 3, 30, 6, 0, tzinfo=UTC)


def test_a_missed_firing_is_due_once_and_the_next_is_after_now() -> None:
    spec = parse("daily", "UTC", NOW, 900)
    first = spec.next_after(NOW)
    five_days_later = datetime(2026, 4, 2, 9, 30, tzinfo=UTC)
    assert due(first.timestamp(), five_days_later)
    again = spec.next_after(five_days_later)
    assert again == datetime(2026, 4, 3, 6, 0, tzinfo=UTC)
    assert not due(again.timestamp(), five_days_later)


@pytest.mark.parametrize(
    ("cron", "zone", "says"),
    [
        ("", "UTC", "cron expression or daily"),
        ("61 * * * *", "UTC", "Bad cron expression"),
        ("0 6 * *", "UTC", "five fields"),
        ("0 6 * * * *", "UTC", "five fields"),
        ("fortnightly", "UTC", "five fields"),
        ("0 0 30 2 *", "UTC", "Bad cron expression"),
        ("daily", "Mars/Olympus", "Unknown time zone"),
        ("daily", "", "Unknown time zone"),
        ("daily", "../../etc/passwd", "Unknown time zone"),
        ("* * * * *", "UTC", "shortest interval allowed is 15 minutes"),
        ("0,5 * * * *", "UTC", "fires every 5 minutes"),
        ("x" * 200, "UTC", "cron expression or daily"),
    ],
)
def test_bad_schedules_are_refused_with_a_reason(cron: str, zone: str, says: str) -> None:
    with pytest.raises(InvalidSchedule) as caught:
        parse(cron, zone, NOW, 900)
    assert says in caught.value.detail


def test_the_minimum_interval_is_a_setting() -> None:
    assert parse("*/5 * * * *", "UTC", NOW, 300).next_after(NOW) == datetime(
        2026, 3, 27, 12, 5, tzinfo=UTC
    )
