"""Momentum: which weeks were fully harvested, the two windows over those weeks,
the change of the topic's share, the floor and the trending score."""

from __future__ import annotations

from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import timedelta

import pytest

from papers.ingest.schedule import listing_day
from papers.ingest.upsert import upsert_records
from papers.models import FeedSource
from papers.models import IngestRun
from papers.models import Paper
from tests.papers.factories import paper_record
from tests.topics.factories import announced_papers
from tests.topics.factories import make_topic
from topics.coverage import CHART_WEEKS
from topics.coverage import bucket
from topics.coverage import judge_weeks
from topics.coverage import live_harvest_start
from topics.curation import pin_paper
from topics.models import Topic
from topics.models import TopicMomentum
from topics.models import TopicRelation
from topics.momentum import FLOOR
from topics.momentum import TRENDING_MIN_PAPERS
from topics.momentum import Momentum
from topics.momentum import compute_all
from topics.momentum import refresh_momentum
from topics.tagging import tag_papers
from topics.tasks import train_topic_model

AS_OF = date(2026, 7, 24)  # a Friday: the chart's weeks run Saturday to Friday
FIRST = AS_OF - timedelta(days=7 * CHART_WEEKS - 1)
# A normal announcement week: Monday quiet, Tuesday (the weekend's papers) busy.
NORMAL_WEEK = [80, 200, 100, 100, 100]


def week_days(index: int) -> list[date]:
    """The announcement days (Monday to Friday) of chart week `index`, 0 the oldest."""
    days = (FIRST + timedelta(days=7 * index + n) for n in range(7))
    return [day for day in days if day.weekday() < 5]


def day_counts(*weeks: list[int]) -> dict[date, int]:
    """Papers per announcement day for the last len(weeks) chart weeks."""
    counts = {}
    for index, week in enumerate(weeks, start=CHART_WEEKS - len(weeks)):
        counts.update(zip(week_days(index), week, strict=True))
    return counts


def momentum(
    weekly: list[int],
    corpus: list[int] | None = None,
    partial: tuple[int, ...] = (),
) -> Momentum:
    """The last len(weekly) chart weeks as given (earlier ones empty and not
    complete), 1,000 new papers a week unless said; `partial` counts back from
    the latest week (1 is the last)."""
    pad = CHART_WEEKS - len(weekly)
    corpus = corpus or [1000] * len(weekly)
    complete = [False] * pad + [True] * len(weekly)
    for back in partial:
        complete[-back] = False
    return Momentum(
        AS_OF, (0,) * pad + tuple(weekly), (0,) * pad + tuple(corpus), tuple(complete)
    )


# COVERAGE


def test_weeks_reaching_the_norm_are_complete_however_many_empty_weeks_precede():
    complete = judge_weeks(day_counts(*[NORMAL_WEEK] * 4), AS_OF)

    assert complete == (False,) * 12 + (True,) * 4


def test_the_week_the_harvest_begins_in_is_not_complete():
    start = [0, 0, 0, 100, 100]  # the corpus begins on Thursday
    before = [3, 5, 2, 4, 3]  # papers replaced later, nothing else
    counts = day_counts(*[before] * 6, start, *[NORMAL_WEEK] * 4)

    complete = judge_weeks(counts, AS_OF)

    assert complete[-5:] == (False, True, True, True, True)
    assert not any(complete[:-5])


def test_one_holiday_does_not_mark_a_week_partial():
    holiday = [80, 200, 0, 180, 100]  # no announcement Wednesday; Thursday catches up

    complete = judge_weeks(day_counts(*[NORMAL_WEEK] * 3, holiday), AS_OF)

    assert complete[-4:] == (True,) * 4


def test_two_days_missing_mark_a_week_partial_though_its_total_is_above_half():
    gap = [80, 200, 100, 0, 0]  # 380 papers: 65% of a normal week

    complete = judge_weeks(day_counts(*[NORMAL_WEEK] * 3, gap), AS_OF)

    assert complete[-4:] == (True, True, True, False)


def test_a_week_under_half_the_norm_is_partial():
    thin = [30, 60, 40, 40, 40]  # every day a little, 210 papers in all

    complete = judge_weeks(day_counts(NORMAL_WEEK, thin, *[NORMAL_WEEK] * 2), AS_OF)

    assert complete[-4:] == (True, False, True, True)


def test_no_week_with_a_day_before_the_first_live_harvest_is_complete():
    counts = day_counts(*[NORMAL_WEEK] * 4)
    started = week_days(CHART_WEEKS - 3)[2]  # the Wednesday of the third-last week

    complete = judge_weeks(counts, AS_OF, harvested_from=started)

    assert complete[-4:] == (False, False, True, True)


@pytest.mark.django_db
def test_a_latest_day_read_only_by_an_api_query_leaves_its_week_out():
    """An hourly API query reads the agent papers announced at 20:00 hours
    before the next morning's listing: the latest day holds only them. It is
    no holiday (whose papers come the day after), but a harvest under way."""
    make_topic("Agents", rule="ti:agent", slug="agents")
    monday = AS_OF + timedelta(days=3)
    records = announced_papers(AS_OF, [950] * 8, title="other", series=2)
    records += announced_papers(AS_OF, [50] * 8, title="agent", series=3)
    records += [
        paper_record(
            f"2700.{n:05d}", title="agent", announced=monday, announce_type="new"
        )
        for n in range(10)
    ]
    upsert_records(records)
    tag_papers(list(Paper.objects.values_list("pk", flat=True)))

    m = compute_all()[Topic.objects.get().pk]

    assert m.as_of == monday
    # Four full days and one of 10 papers: hatched, not a fall or a rise.
    assert (m.weekly[-1], m.corpus_weekly[-1]) == (50, 810)
    assert not m.complete[-1]
    assert m.recent_window.weeks == 3
    assert m.change == pytest.approx(0.0)


def test_an_empty_corpus_has_no_complete_week():
    assert judge_weeks({}, AS_OF) == (False,) * CHART_WEEKS


def finished_run(kind: str | None, started: datetime, status: str = "succeeded"):
    feed = None
    if kind is not None:
        feed = FeedSource.objects.create(
            name=f"{kind} {started}", kind=kind, category="cs.AI", query="ti:agent"
        )
    run = IngestRun.objects.create(source="test", feed=feed, status=status)
    IngestRun.objects.filter(pk=run.pk).update(started_at=started)


@pytest.mark.django_db
def test_live_harvests_alone_bound_coverage_from_their_first_run():
    first = datetime(2026, 7, 1, 4, 30, tzinfo=UTC)  # 00:30 in New York
    finished_run(FeedSource.Kind.LISTING, first - timedelta(days=20), status="failed")
    finished_run(FeedSource.Kind.LISTING, first)
    finished_run(FeedSource.Kind.API_QUERY, first + timedelta(days=1))

    assert live_harvest_start() == listing_day(first) == date(2026, 7, 2)


@pytest.mark.django_db
@pytest.mark.parametrize("backfill", [None, FeedSource.Kind.OAI])
def test_a_backfill_lifts_the_live_harvests_bound(backfill):
    first = datetime(2026, 7, 1, 4, 30, tzinfo=UTC)
    finished_run(FeedSource.Kind.LISTING, first)
    finished_run(backfill, first + timedelta(days=3))  # None: a file

    assert live_harvest_start() is None


@pytest.mark.django_db
def test_papers_stored_outside_any_run_are_judged_by_their_counts():
    assert live_harvest_start() is None


# WINDOWS AND THE SHARE


def test_the_change_is_that_of_the_share_not_of_the_count():
    # 80 -> 100 papers a week, but all new papers 8,000 -> 12,500 a week.
    m = momentum([80] * 4 + [100] * 4, corpus=[8000] * 4 + [12500] * 4)

    assert m.recent > m.previous
    assert m.previous_share == pytest.approx(1.0)
    assert m.share == pytest.approx(0.8)
    assert m.change == pytest.approx(-20.0)
    assert m.direction == "down"


def test_weeks_not_fully_harvested_are_left_out_of_both_windows():
    weekly = [10, 40, 40, 40, 40, 40, 40, 5]
    corpus = [300, 1000, 1000, 1000, 1000, 1000, 1000, 200]
    m = momentum(weekly, corpus, partial=(8, 1))

    before, now = m.previous_window, m.recent_window
    assert (before.weeks, before.papers, before.total) == (3, 120, 3000)
    assert (now.weeks, now.papers, now.total) == (3, 120, 3000)
    assert m.recent == 125  # the sentence still counts every recent paper
    assert m.change == pytest.approx(0.0)
    assert m.direction == "flat"
    assert m.left_out == [FIRST + timedelta(days=7 * 8), AS_OF - timedelta(days=6)]


def test_fewer_than_two_complete_weeks_in_a_window_is_not_enough_history():
    m = momentum([0, 0, 0, 30, 40, 40, 40, 40], partial=(8, 7, 6))

    assert m.previous_window.weeks == 1
    assert not m.comparable
    assert not m.enough
    assert m.change is None
    assert m.direction is None
    assert m.recent == 160


def test_below_the_floor_there_is_too_little_to_say():
    m = momentum([1, 1, 1, 1, 1, 1, 1, FLOOR - 8])

    assert m.comparable
    assert not m.enough
    assert m.direction is None


def test_a_topic_with_no_papers_before_is_new():
    m = momentum([0] * 4 + [3, 4, 5, 6])

    assert m.enough
    assert (m.previous_share, m.change, m.direction) == (0.0, None, "new")


def test_a_change_is_beyond_chance_only_where_chance_seldom_makes_it():
    """+20% on 100 papers a week is beyond chance; +20% on 10 a week is what
    a share wobbles by: 88 papers split 44/44 give or take 4.7, and 48 is
    0.85 standard deviations off."""
    corpus = [10000] * 8
    large = momentum([100] * 4 + [120] * 4, corpus)
    small = momentum([10] * 4 + [12] * 4, corpus)

    assert large.change == pytest.approx(20.0)
    assert small.change == pytest.approx(20.0)
    assert large.beyond_chance
    assert small.chance_split == pytest.approx((44.0, 88**0.5 / 2))
    assert small.deviations == pytest.approx(4 / (88**0.5 / 2))
    assert not small.beyond_chance
    assert (large.trend, small.trend) == ("up", "steady")
    assert momentum([120] * 4 + [100] * 4, corpus).trend == "down"
    # No change given, nothing to weigh: too few papers, none before.
    assert momentum([1] * 8).beyond_chance is None
    assert momentum([0] * 4 + [3, 4, 5, 6]).beyond_chance is None


def test_a_change_that_rounds_to_zero_is_flat():
    corpus = [10000] * 8
    assert momentum([1000] * 4 + [1003] * 4, corpus).direction == "flat"
    assert momentum([1000] * 4 + [1005] * 4, corpus).direction == "up"
    assert momentum([1000] * 4 + [995] * 4, corpus).direction == "down"


def test_weeks_end_on_the_as_of_day():
    days = {
        AS_OF: 1,
        AS_OF - timedelta(days=6): 2,  # same week
        AS_OF - timedelta(days=7): 4,  # the week before
        AS_OF - timedelta(days=7 * 16): 100,  # outside the chart
    }

    weekly = bucket(days, AS_OF)

    assert weekly[-2:] == (4, 3)
    assert sum(weekly) == 7
    weeks = momentum(list(weekly)).weeks
    assert weeks[-1].start == AS_OF - timedelta(days=6)
    assert (weeks[-1].papers, weeks[-1].total) == (3, 1000)
    assert len(weeks) == CHART_WEEKS


# TRENDING


def test_trending_needs_papers_in_each_window():
    tiny = momentum([0, 1, 0, 1, 1, 1, 2, 1])  # 2 -> 5 papers: +150%

    assert tiny.change == pytest.approx(150.0)
    assert tiny.trend_score is None
    few_before = momentum([2, 2, 2, TRENDING_MIN_PAPERS - 7, 50, 50, 50, 50])
    assert few_before.trend_score is None


def test_trending_damps_small_topics_more_than_big_ones():
    small = momentum([3, 2, 3, 2, 5, 5, 5, 5])  # 10 -> 20 papers
    big = momentum([25] * 4 + [50] * 4)  # 100 -> 200 papers

    assert small.change == big.change == pytest.approx(100.0)
    assert 0 < small.trend_score < big.trend_score < 100.0
    falling = momentum([50] * 4 + [40] * 4)
    assert falling.trend_score < 0


def test_no_trend_without_enough_history():
    m = momentum([40] * 8, partial=(8, 7, 6))
    assert m.trend_score is None


# STORED


@pytest.mark.django_db
def test_windows_end_at_the_latest_harvested_day_not_today():
    topic = make_topic(rule="ti:agent")
    records = announced_papers(AS_OF, [5] * 8, title="agent")
    records += announced_papers(AS_OF, [100] * 8, title="other", series=2)
    tag_papers(upsert_records(records).changed_ids)

    figures = compute_all()[topic.pk]

    assert figures.as_of == AS_OF
    assert figures.complete == (False,) * 8 + (True,) * 8
    assert (figures.recent, figures.previous) == (20, 20)
    assert figures.corpus_weekly[-8:] == (105,) * 8
    assert figures.change == 0.0
    assert figures.all_recent == 420


@pytest.mark.django_db
def test_refresh_stores_every_topics_figures_and_is_idempotent():
    busy = make_topic(rule="ti:agent")
    quiet = make_topic("Quiet", rule="ti:nothing", slug="quiet")
    records = announced_papers(AS_OF, [10] * 4 + [20] * 4, title="agent")
    records += announced_papers(AS_OF, [100] * 8, title="other", series=2)
    tag_papers(upsert_records(records).changed_ids)

    assert refresh_momentum() == 2
    assert refresh_momentum() == 2

    stored = TopicMomentum.objects.get(topic=busy)
    assert stored.as_of == AS_OF
    assert stored.weekly[-8:] == [10] * 4 + [20] * 4
    assert stored.corpus_weekly[-8:] == [110] * 4 + [120] * 4
    assert stored.complete == [False] * 8 + [True] * 8
    assert stored.trend_score == pytest.approx(Momentum.stored(stored).trend_score)
    assert stored.trend_score > 0
    assert TopicMomentum.objects.get(topic=quiet).trend_score is None
    assert TopicMomentum.objects.count() == 2


@pytest.mark.django_db
def test_a_curators_decisions_reach_the_figures_with_the_training_they_ask_for():
    """A pin changed the topic's papers but its chart kept the old count until
    the next ingest; the training after a burst of decisions refreshes it."""
    busy = make_topic(rule="ti:agent")
    quiet = make_topic("Quiet", rule="ti:nothing", slug="quiet")
    others = make_topic("Others", rule="ti:other", slug="others")
    records = announced_papers(AS_OF, [10] * 4 + [20] * 4, title="agent")
    records += announced_papers(AS_OF, [100] * 8, title="other", series=2)
    tag_papers(upsert_records(records).changed_ids)
    refresh_momentum()
    assert not TopicRelation.objects.exists()
    untouched = TopicMomentum.objects.get(topic=quiet).computed_at
    other = Paper.objects.filter(title="other", first_announced=AS_OF).first()

    pin_paper(busy, other)
    train_topic_model(busy.pk)

    assert TopicMomentum.objects.get(topic=busy).weekly[-8:] == [10] * 4 + [20] * 3 + [
        21
    ]
    # Related topics count the paper they now share, both ways.
    assert set(TopicRelation.objects.values_list("topic", "other", "shared")) == {
        (busy.pk, others.pk, 1),
        (others.pk, busy.pk, 1),
    }
    # Only the decided topic's figures are computed again.
    assert TopicMomentum.objects.get(topic=quiet).computed_at == untouched


def test_a_row_stored_before_coverage_reads_as_not_comparable():
    row = TopicMomentum(as_of=AS_OF, weekly=[5] * CHART_WEEKS)

    m = Momentum.stored(row)

    assert m.complete == (False,) * CHART_WEEKS
    assert not m.comparable
    assert m.recent == 20
