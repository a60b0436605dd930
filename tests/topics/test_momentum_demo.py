"""Momentum on the demo corpus: 25,002 real papers whose harvest begins in
mid-June, so the weeks before are only the papers replaced later."""

from __future__ import annotations

from datetime import date

import pytest
from django.core.management import call_command
from django.db import connection

from papers.ingest.runs import ingest_path
from topics.management.commands.load_demo import DEMO_CORPUS
from topics.models import Topic
from topics.momentum import refresh_momentum
from topics.query import topics_by_trend
from topics.query import trending_topics
from topics.query import with_figures
from topics.seed import load_topics
from topics.tagging import retag_all

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

MAY_30 = date(2026, 5, 30)
JUN_6 = date(2026, 6, 6)
JUN_13 = date(2026, 6, 13)


@pytest.fixture(scope="module")
def demo(django_db_setup, django_db_blocker):
    """The demo corpus, ingested, seeded and tagged as load_demo does, once for
    the module; emptied afterwards so other modules start from nothing."""
    with django_db_blocker.unblock():
        ingest_path(DEMO_CORPUS)
        load_topics()
        retag_all()
        refresh_momentum()
        yield
        call_command("flush", interactive=False, verbosity=0)
        connection.close()


def figures(slug: str):
    return with_figures(Topic.objects.filter(slug=slug).select_related("momentum"))[
        0
    ].figures


def test_a_topic_whose_share_fell_reads_down_though_its_count_rose(demo, client):
    agents = figures("rl-for-llm-agents")

    assert agents.recent > agents.previous  # counted raw, it "grew"
    assert agents.share < agents.previous_share
    assert agents.direction == "down"
    page = client.get("/topics/rl-for-llm-agents/").text
    assert (
        f"{agents.share:.2f}% of new papers, down {agents.change_size:.0f}% "
        f"on the {agents.previous_share:.2f}% of the four weeks before"
    ) in page


def test_the_weeks_before_the_harvest_began_are_left_out_and_marked(demo, client):
    agents = figures("rl-for-llm-agents")
    weeks = {week.start: week for week in agents.weeks}

    assert weeks[MAY_30].total == 380
    assert not weeks[MAY_30].complete
    assert not weeks[JUN_6].complete
    assert all(w.complete for w in agents.weeks if w.start >= JUN_13)
    assert agents.left_out == [MAY_30, JUN_6]
    assert agents.previous_window.weeks == 2
    assert agents.recent_window.weeks == 4
    page = client.get("/topics/rl-for-llm-agents/").text
    assert "Week of May 30: " in page
    assert "of 380 new; not fully harvested, left out of the comparison" in page
    assert "left out: the weeks of May 30 and Jun 6." in page
    assert "a week not fully harvested, left out of the comparison" in page


def test_trending_does_not_read_up_for_every_topic(demo, client):
    topics = topics_by_trend()
    directions = {t.figures.direction for t in topics}

    assert {"up", "down"} <= directions
    rising = trending_topics(limit=100)
    assert 0 < len(rising) < len(topics)
    assert all(t.figures.change > 0 and t.figures.beyond_chance for t in rising)
    # Most of four weeks' moves are within chance: not every topic rises or falls.
    assert {"up", "steady", "down"} <= {t.figures.trend for t in topics}
    page = client.get("/topics/trending/").text
    assert "down " in page
    assert page.index("Rising") < page.index("Within chance") < page.index("Falling")
