"""arXiv's announcement schedule: on which listing day a submission first appears."""

from __future__ import annotations

from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import time
from datetime import timedelta
from zoneinfo import ZoneInfo

ARXIV_TZ = ZoneInfo("America/New_York")
SUBMISSION_DEADLINE = time(14, 0)
_FRIDAY = 4


def listing_day(submitted: datetime) -> date:
    """Return the date of the first listing that announces a version submitted then.

    arXiv (America/New_York) closes submissions at 14:00 Monday to Friday. What
    arrives between one deadline and the next is announced at 20:00 on the day
    of that next deadline (on Sunday evening for Friday's deadline), in the
    listing dated the following weekday. So Mon 10:00 -> Tue, Mon 15:00 -> Wed,
    Thu 15:00 -> Mon, Fri 10:00 -> Mon, Fri 15:00 or the weekend -> Tue.

    This is the earliest possible listing: holidays, when arXiv skips or shifts
    announcements, are ignored, and so are moderation holds (2508.13213v1,
    submitted Sat 16 Aug 2025, was "new" in the listing of Wed 20 Aug, not Tue
    19). A naive datetime is taken as UTC, and so are date-only sources (as
    00:00 UTC).
    """
    if submitted.tzinfo is None:
        submitted = submitted.replace(tzinfo=UTC)
    local = submitted.astimezone(ARXIV_TZ)
    deadline_day = local.date()
    if local.weekday() > _FRIDAY or local.time() >= SUBMISSION_DEADLINE:
        deadline_day = _next_weekday(deadline_day)
    return _next_weekday(deadline_day)


def _next_weekday(day: date) -> date:
    day += timedelta(days=1)
    while day.weekday() > _FRIDAY:
        day += timedelta(days=1)
    return day


# The listing feeds are rebuilt at midnight in New York after each announcement
# (Sunday to Thursday, 20:00), so they are fetched on weekday mornings.
LISTING_FETCH_TIME = time(0, 30)
API_QUERY_PERIOD = timedelta(hours=1)
OAI_FETCH_TIME = time(2, 0)


def next_run_after(kind: str, moment: datetime) -> datetime:
    """The next scheduled run of a source of this kind after `moment` (aware)."""
    if kind == "api_query":
        return moment + API_QUERY_PERIOD
    local = moment.astimezone(ARXIV_TZ)
    at = LISTING_FETCH_TIME if kind == "listing" else OAI_FETCH_TIME
    day = local.date()
    while True:
        candidate = datetime.combine(day, at, tzinfo=ARXIV_TZ)
        weekday_ok = kind != "listing" or candidate.weekday() <= _FRIDAY
        if candidate > local and weekday_ok:
            return candidate.astimezone(UTC)
        day += timedelta(days=1)


# A failed run is retried this long after, doubling with each failure in a row:
# a listing holds only the latest announcement, so the next slot is too late.
RETRY_FIRST_DELAY = timedelta(minutes=10)
_RETRY_MAX_DOUBLINGS = 10  # a week; the next regular run comes sooner anyway


def next_retry_after(kind: str, moment: datetime, *, failures: int) -> datetime:
    """When to run a source again after its `failures`-th failure in a row at
    `moment`: after a backoff, but never later than its next regular run."""
    doublings = min(max(failures - 1, 0), _RETRY_MAX_DOUBLINGS)
    factor: int = 2**doublings
    retry = moment + RETRY_FIRST_DELAY * factor
    return min(retry, next_run_after(kind, moment))
