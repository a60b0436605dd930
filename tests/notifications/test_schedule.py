"""Digest periods in each user's time zone."""

from __future__ import annotations

from datetime import UTC
from datetime import date
from datetime import datetime

from accounts.models import DigestPreferences
from notifications.schedule import Schedule


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_weekly_period_starts_at_the_users_hour_on_their_weekday():
    paris_monday_8 = Schedule("weekly", 0, 8, "Europe/Paris")

    # Wednesday 2026-07-15: the period began on Monday the 13th, 08:00 Paris.
    assert paris_monday_8.current_period(utc(2026, 7, 15, 12)) == (
        date(2026, 7, 13),
        utc(2026, 7, 13, 6),
    )


def test_before_the_hour_on_the_day_the_previous_period_is_current():
    paris_monday_8 = Schedule("weekly", 0, 8, "Europe/Paris")

    day, due = paris_monday_8.current_period(utc(2026, 7, 13, 5, 59))

    assert (day, due) == (date(2026, 7, 6), utc(2026, 7, 6, 6))


def test_daily_period_uses_the_local_day_across_the_date_line():
    tonga_7 = Schedule("daily", 0, 7, "Pacific/Tongatapu")  # UTC+13

    # 20:00 UTC on the 14th is 09:00 on the 15th in Tonga.
    assert tonga_7.current_period(utc(2026, 7, 14, 20)) == (
        date(2026, 7, 15),
        utc(2026, 7, 14, 18),
    )


def test_half_hour_zones_and_the_next_send_time():
    kolkata_9 = Schedule("daily", 0, 9, "Asia/Kolkata")  # UTC+5:30

    assert kolkata_9.current_period(utc(2026, 7, 14, 4))[1] == utc(2026, 7, 14, 3, 30)
    assert kolkata_9.next_send_time(utc(2026, 7, 14, 4)) == utc(2026, 7, 15, 3, 30)


def test_an_hour_skipped_by_daylight_saving_sends_an_hour_later():
    new_york_2am = Schedule("daily", 0, 2, "America/New_York")

    # 2026-03-08 02:00 does not exist in New York; it is 03:00 EDT = 07:00 UTC.
    assert new_york_2am.send_time(date(2026, 3, 8)) == utc(2026, 3, 8, 7)
    assert new_york_2am.send_time(date(2026, 3, 9)) == utc(2026, 3, 9, 6)


def test_defaults_are_weekly_monday_eight_utc():
    assert Schedule.of(DigestPreferences()) == Schedule("weekly", 0, 8, "UTC")
