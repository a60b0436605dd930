from __future__ import annotations

from datetime import UTC
from datetime import date
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from papers.ingest.schedule import listing_day
from papers.ingest.schedule import next_retry_after
from papers.ingest.schedule import next_run_after

NEW_YORK = ZoneInfo("America/New_York")


def new_york(day: int, hour: int, minute: int = 0) -> datetime:
    # August 2025: Mon 18, Tue 19, Wed 20, Thu 21, Fri 22, Sat 23, Sun 24, Mon 25.
    return datetime(2025, 8, day, hour, minute, tzinfo=NEW_YORK)


@pytest.mark.parametrize(
    ("submitted", "listed"),
    [
        (new_york(18, 10), date(2025, 8, 19)),  # Mon before the deadline -> Tue
        (new_york(18, 13, 59), date(2025, 8, 19)),
        (new_york(18, 14), date(2025, 8, 20)),  # the deadline itself is too late
        (new_york(18, 15), date(2025, 8, 20)),  # Mon after the deadline -> Wed
        (new_york(21, 15), date(2025, 8, 25)),  # Thu after -> announced Sun, Mon
        (new_york(22, 10), date(2025, 8, 25)),  # Fri before -> Mon
        (new_york(22, 15), date(2025, 8, 26)),  # Fri after -> Tue
        (new_york(23, 12), date(2025, 8, 26)),  # Sat -> Tue
        (new_york(24, 23), date(2025, 8, 26)),  # Sun -> Tue
    ],
)
def test_follows_the_new_york_submission_deadline(submitted, listed):
    assert listing_day(submitted) == listed


def test_converts_utc_to_new_york_time():
    # 17:59 UTC is 13:59 EDT (before the deadline); 18:00 UTC is 14:00 EDT.
    assert listing_day(datetime(2025, 8, 18, 17, 59, tzinfo=UTC)) == date(2025, 8, 19)
    assert listing_day(datetime(2025, 8, 18, 18, 0, tzinfo=UTC)) == date(2025, 8, 20)


def test_follows_daylight_saving_time():
    # In January New York is UTC-5: 18:30 UTC is 13:30 EST, before the deadline.
    assert listing_day(datetime(2025, 1, 13, 18, 30, tzinfo=UTC)) == date(2025, 1, 14)


def test_naive_datetimes_count_as_utc():
    # 00:00 UTC on Tue 2025-08-19 is 20:00 EDT on Monday, after Monday's deadline.
    naive = datetime(2025, 8, 19)  # noqa: DTZ001 - the case under test
    assert listing_day(naive) == date(2025, 8, 20)
    assert listing_day(datetime(2025, 8, 19, tzinfo=UTC)) == date(2025, 8, 20)


@pytest.mark.parametrize(
    ("kind", "after", "expected"),
    [
        # Listings: weekday mornings 00:30 New York, after the feeds rebuild.
        (
            "listing",
            "2026-06-08T12:00:00+00:00",
            "2026-06-09T04:30:00+00:00",
        ),  # Mon -> Tue
        (
            "listing",
            "2026-06-12T12:00:00+00:00",
            "2026-06-15T04:30:00+00:00",
        ),  # Fri -> Mon
        (
            "listing",
            "2026-06-13T12:00:00+00:00",
            "2026-06-15T04:30:00+00:00",
        ),  # Sat -> Mon
        ("listing", "2026-12-07T12:00:00+00:00", "2026-12-08T05:30:00+00:00"),  # EST
        ("api_query", "2026-06-08T12:00:00+00:00", "2026-06-08T13:00:00+00:00"),
        ("oai", "2026-06-13T12:00:00+00:00", "2026-06-14T06:00:00+00:00"),  # daily
    ],
)
def test_next_run_follows_arxivs_schedule(kind, after, expected):
    assert next_run_after(
        kind, datetime.fromisoformat(after)
    ) == datetime.fromisoformat(expected)


@pytest.mark.parametrize(
    ("kind", "failed_at", "failures", "expected"),
    [
        # Tue 12:00 UTC: the next listing slot is Wed 04:30 UTC; retry long before.
        ("listing", "2026-06-09T12:00:00+00:00", 1, "2026-06-09T12:10:00+00:00"),
        ("listing", "2026-06-09T12:00:00+00:00", 2, "2026-06-09T12:20:00+00:00"),
        ("listing", "2026-06-09T12:00:00+00:00", 4, "2026-06-09T13:20:00+00:00"),
        # Never later than the next regular run.
        ("listing", "2026-06-09T04:25:00+00:00", 1, "2026-06-09T04:30:00+00:00"),
        ("api_query", "2026-06-08T12:00:00+00:00", 3, "2026-06-08T12:40:00+00:00"),
        ("api_query", "2026-06-08T12:00:00+00:00", 4, "2026-06-08T13:00:00+00:00"),
        ("oai", "2026-06-13T12:00:00+00:00", 1000, "2026-06-14T06:00:00+00:00"),
    ],
)
def test_a_failed_run_is_retried_sooner_than_the_next_slot(
    kind, failed_at, failures, expected
):
    retry = next_retry_after(kind, datetime.fromisoformat(failed_at), failures=failures)
    assert retry == datetime.fromisoformat(expected)
