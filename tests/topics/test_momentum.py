from __future__ import annotations

from datetime import date
from datetime import timedelta

import pytest

from papers.ingest.upsert import upsert_records
from papers.models import Paper
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.models import TopicMomentum
from topics.momentum import FLOOR
from topics.momentum import Momentum
from topics.momentum import bucket
from topics.momentum import compute_all
from topics.momentum import refresh_momentum
from topics.tagging import tag_papers

AS_OF = date(2026, 7, 24)  # a Friday


def momentum(*weekly: int, all_recent: int = 1000) -> Momentum:
    return Momentum(AS_OF, tuple(weekly), all_recent)


def test_recent_previous_change_and_share_from_a_weekly_series():
    m = momentum(*[0] * 8, 5, 5, 5, 5, 10, 20, 20, 20, all_recent=7000)

    assert (m.recent, m.previous) == (70, 20)
    assert m.change == pytest.approx(250.0)
    assert m.share == pytest.approx(1.0)
    assert m.enough


def test_a_shrinking_topic_has_a_negative_change():
    m = momentum(*[0] * 8, 30, 30, 30, 30, 15, 15, 15, 15)
    assert m.change == pytest.approx(-50.0)


def test_an_empty_previous_window_has_no_percentage():
    m = momentum(*[0] * 12, 3, 4, 5, 6)

    assert m.previous == 0
    assert m.change is None
    assert m.enough


def test_below_the_floor_there_is_too_little_to_say():
    m = momentum(*[0] * 12, 1, 2, 1, FLOOR - 5)
    assert not m.enough


def test_no_papers_anywhere_has_zero_share():
    m = momentum(*[0] * 16, all_recent=0)
    assert (m.share, m.change, m.enough) == (0.0, None, False)


def test_trending_score_damps_tiny_topics():
    tiny = momentum(*[0] * 12, 1, 1, 1, 1, all_recent=1)  # 0 -> 4
    big = momentum(*[0] * 8, 15, 15, 15, 15, 30, 30, 30, 30)  # 60 -> 120
    assert big.trend_score > tiny.trend_score


def test_weeks_end_on_the_as_of_day():
    days = {
        AS_OF: 1,
        AS_OF - timedelta(days=6): 2,  # same week
        AS_OF - timedelta(days=7): 4,  # the week before
        AS_OF - timedelta(days=7 * 16): 100,  # outside the chart
    }

    weekly = bucket(days, AS_OF)

    assert weekly[-1] == 3
    assert weekly[-2] == 4
    assert sum(weekly) == 7
    weeks = momentum(*weekly).weeks
    assert weeks[-1] == (AS_OF - timedelta(days=6), 3)
    assert len(weeks) == 16


@pytest.mark.django_db
def test_windows_end_at_the_latest_harvested_day_not_today():
    topic = make_topic(rule="ti:agent")
    records = []
    # Announced days are computed from submission times; 5 papers a week for 8 weeks.
    for week in range(8):
        for n in range(5):
            day = AS_OF - timedelta(days=7 * week + n)
            records.append(
                paper_record(
                    f"2607.{week:02d}{n:03d}",
                    title="agent",
                    announced=day,
                    announce_type="new",
                )
            )
    records.append(
        paper_record("2607.99999", title="other", announced=AS_OF, announce_type="new")
    )
    tag_papers(upsert_records(records).changed_ids)

    figures = compute_all()[topic.pk]

    assert Paper.objects.latest("first_announced").first_announced == AS_OF
    assert figures.as_of == AS_OF
    assert (figures.recent, figures.previous) == (20, 20)
    assert figures.change == 0.0
    assert figures.all_recent == 21


@pytest.mark.django_db
def test_refresh_stores_every_topics_figures_and_is_idempotent():
    busy = make_topic(rule="ti:agent")
    quiet = make_topic("Quiet", rule="ti:nothing", slug="quiet")
    tag_papers(
        upsert_records(
            [
                paper_record(
                    f"2607.{n:05d}", title="agent", announced=AS_OF, announce_type="new"
                )
                for n in range(12)
            ]
        ).changed_ids
    )

    assert refresh_momentum() == 2
    assert refresh_momentum() == 2

    stored = TopicMomentum.objects.get(topic=busy)
    assert (stored.as_of, stored.recent, stored.previous) == (AS_OF, 12, 0)
    assert stored.trend_score > 0
    assert TopicMomentum.objects.get(topic=quiet).trend_score == 0.0
    assert TopicMomentum.objects.count() == 2
