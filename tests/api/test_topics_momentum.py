"""Topics' momentum in the API: the figures the pages state, and the slug the
trending page keeps for itself."""

from __future__ import annotations

from datetime import date

import pytest

from papers.ingest.upsert import upsert_records
from tests.api.conftest import assert_error
from tests.topics.factories import announced_papers
from tests.topics.factories import make_topic
from topics.models import Topic
from topics.momentum import refresh_momentum
from topics.tagging import retag_all

pytestmark = pytest.mark.django_db

AS_OF = date(2026, 7, 24)


@pytest.fixture
def agents():
    """The harvest's first week (May 30) a tenth of the rest; the topic's share
    falls from 9.09% to 7.69%."""
    topic = make_topic("Agents", rule="ti:agent", slug="agents")
    records = announced_papers(AS_OF, [20, *[200] * 3, *[300] * 4], title="x", series=2)
    records += announced_papers(AS_OF, [1, 20, 20, 20, 25, 25, 25, 25], title="agent")
    upsert_records(records)
    retag_all()
    refresh_momentum()
    return topic


def test_topics_carry_the_share_change_over_fully_harvested_weeks(anonymous, agents):
    momentum = anonymous.get("/api/v1/topics/").json()[0]["momentum"]

    assert (momentum["recent"], momentum["previous"]) == (100, 61)
    assert momentum["share"] == pytest.approx(100 / 1300 * 100)
    assert momentum["previous_share"] == pytest.approx(60 / 660 * 100)
    assert momentum["change"] == pytest.approx(-15.38, abs=0.01)
    assert momentum["comparable"] is True
    assert momentum["enough"] is True
    assert momentum["left_out"] == ["2026-05-30"]
    assert momentum["trend_score"] < 0
    # 100 of 160 papers where keeping its share gives 106, give or take 6.
    assert momentum["beyond_chance"] is False
    assert momentum["trend"] == "steady"


def test_a_topics_weeks_say_which_were_fully_harvested(anonymous, agents):
    weeks = anonymous.get("/api/v1/topics/agents/").json()["momentum"]["weeks"]

    assert len(weeks) == 16
    assert weeks[8] == {
        "start": "2026-05-30",
        "papers": 1,
        "all_papers": 21,
        "complete": False,
    }
    assert weeks[-1] == {
        "start": "2026-07-18",
        "papers": 25,
        "all_papers": 325,
        "complete": True,
    }


def test_staff_cannot_create_a_topic_the_trending_page_would_hide(as_staff):
    response = as_staff.post(
        "/api/v1/topics/",
        {"name": "Trending", "slug": "trending", "rule": "ti:trend"},
        format="json",
    )

    error = assert_error(response, 400, "invalid")
    assert set(error["fields"]) == {"slug"}
    assert not Topic.objects.filter(slug="trending").exists()


def test_staff_cannot_rename_a_topic_to_trending(as_staff, agents):
    response = as_staff.patch(
        "/api/v1/topics/agents/", {"slug": "trending"}, format="json"
    )

    assert_error(response, 400, "invalid")
    assert Topic.objects.filter(slug="agents").exists()
