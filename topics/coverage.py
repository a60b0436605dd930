"""Which of the corpus's chart weeks were fully harvested: a property of the
corpus, judged once per refresh for every topic (`corpus_coverage`), over
which topics.momentum compares a topic's share.

- The norm comes from the chart's busy weeks, those with at least
  REFERENCE_FRACTION of the busiest week's papers, so the near-empty weeks
  before a harvest began, however many, do not pull it down. The norm week is
  the median of their totals, the norm day the median of their announcement
  days (arXiv announces Monday to Friday).
- A week is complete when its papers reach WEEK_FRACTION of the norm week and
  at most MAX_SHORT_DAYS of its five announcement days fall below DAY_FRACTION
  of the norm day: one arXiv holiday is one short day, whose papers come the
  day after, not a gap in the harvest. The latest day has no day after: short,
  it is being harvested, and the last week is not complete.
- Ingest runs bound it: a listing feed or an API query sees only what arXiv
  announces from then on, so while no backfill (a file, an OAI-PMH harvest)
  has run, no week with a day announced before the first live run began is
  complete, whatever its counts. Papers stored outside any run (fixtures, a
  shell) are judged by their counts alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from datetime import timedelta
from statistics import median

from django.db.models import Count
from django.db.models import Min
from django.db.models import Q

from papers.ingest.schedule import listing_day
from papers.models import FeedSource
from papers.models import IngestRun
from papers.models import Paper

CHART_WEEKS = 16
# A week counts towards the norm if it has at least half the busiest week's
# papers: weekly totals on arXiv vary by well under a half, while the weeks
# before a harvest began hold a sixth or less (only papers replaced later).
REFERENCE_FRACTION = 0.5
# Complete weeks reach half the norm week: a week that lost three days of
# listings, or that the corpus begins in late, falls short of it; a holiday
# week (arXiv moves the day's papers to the next announcement) does not.
WEEK_FRACTION = 0.5
# A short announcement day has under a quarter of the norm day. Mondays, the
# quietest, carry about three quarters; a day whose listing was never harvested
# carries almost nothing.
DAY_FRACTION = 0.25
# One short day a week is an arXiv holiday; two are a gap in the harvest.
MAX_SHORT_DAYS = 1
LIVE_KINDS = (FeedSource.Kind.LISTING, FeedSource.Kind.API_QUERY)


def week_index(day: date, as_of: date) -> int:
    """0 for the seven days ending as_of, 1 for the seven before, and so on."""
    return (as_of - day).days // 7


def chart_start(as_of: date) -> date:
    return as_of - timedelta(days=7 * CHART_WEEKS - 1)


def bucket(
    day_counts: dict[date, int], as_of: date, weeks: int = CHART_WEEKS
) -> tuple[int, ...]:
    """Daily counts summed into `weeks` seven-day spans ending as_of, oldest first."""
    totals = [0] * weeks
    for day, count in day_counts.items():
        index = week_index(day, as_of)
        if 0 <= index < weeks:
            totals[weeks - 1 - index] += count
    return tuple(totals)


def judge_weeks(
    day_counts: dict[date, int],
    as_of: date,
    *,
    harvested_from: date | None = None,
    weeks: int = CHART_WEEKS,
) -> tuple[bool, ...]:
    """Whether each of the `weeks` weeks ending as_of (oldest first) was fully
    harvested, from all papers per announcement day (see the module's doc)."""
    totals = bucket(day_counts, as_of, weeks)
    first = as_of - timedelta(days=7 * weeks - 1)
    announcement_days = [
        [
            day
            for day in (first + timedelta(days=7 * i + n) for n in range(7))
            if day.weekday() < 5
        ]
        for i in range(weeks)
    ]
    busiest = max(totals, default=0)
    if not busiest:
        return (False,) * weeks
    reference = [i for i in range(weeks) if totals[i] >= REFERENCE_FRACTION * busiest]
    norm_week = median(totals[i] for i in reference)
    norm_day = median(
        day_counts.get(day, 0) for i in reference for day in announcement_days[i]
    )
    # A holiday's papers come the next announcement day; the latest day has no
    # next one yet, so short it is a harvest under way (an hourly API query
    # read before the listing), not a holiday.
    latest_short = day_counts.get(as_of, 0) < DAY_FRACTION * norm_day
    complete = []
    for i, days in enumerate(announcement_days):
        short = sum(day_counts.get(day, 0) < DAY_FRACTION * norm_day for day in days)
        before_harvest = harvested_from is not None and days[0] < harvested_from
        complete.append(
            totals[i] >= WEEK_FRACTION * norm_week
            and short <= MAX_SHORT_DAYS
            and not before_harvest
            and not (i == weeks - 1 and latest_short)
        )
    return tuple(complete)


def live_harvest_start() -> date | None:
    """The first announcement day after the first live run (listing, API query)
    began, while no backfill (a file or OAI-PMH run) has finished; else None."""
    finished = IngestRun.objects.filter(
        status__in=[IngestRun.Status.SUCCEEDED, IngestRun.Status.PARTIAL]
    )
    runs = finished.aggregate(
        first_live=Min("started_at", filter=Q(feed__kind__in=LIVE_KINDS)),
        backfills=Count(
            "pk", filter=Q(feed__isnull=True) | Q(feed__kind=FeedSource.Kind.OAI)
        ),
    )
    if runs["backfills"] or runs["first_live"] is None:
        return None
    return listing_day(runs["first_live"])


@dataclass(frozen=True)
class Coverage:
    """All new papers per chart week and whether each was fully harvested."""

    weekly: tuple[int, ...]
    complete: tuple[bool, ...]


def corpus_coverage(as_of: date) -> Coverage:
    """The corpus's chart weeks ending as_of, judged once for every topic."""
    days = (
        Paper.objects.filter(first_announced__range=(chart_start(as_of), as_of))
        .order_by()
        .values_list("first_announced")
        .annotate(n=Count("id"))
    )
    day_counts = dict(days)
    return Coverage(
        weekly=bucket(day_counts, as_of),
        complete=judge_weeks(day_counts, as_of, harvested_from=live_harvest_start()),
    )
