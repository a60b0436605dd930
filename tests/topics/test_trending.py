"""Trending: the ranking, the page that lists every topic by it, the links to
it, and the slug no topic may take."""

from __future__ import annotations

from datetime import date

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import resolve
from django.urls import reverse

from papers.ingest.upsert import upsert_records
from tests.topics.factories import announced_papers
from tests.topics.factories import make_topic
from topics import views
from topics.following import set_following
from topics.models import Topic
from topics.momentum import refresh_momentum
from topics.query import trending_topics
from topics.tagging import retag_all

pytestmark = pytest.mark.django_db

AS_OF = date(2026, 7, 24)
# Papers per week over the two windows, oldest first. The oldest week is a
# harvest's first, a tenth of the others, and is left out.
# The last four weeks hold 3 fewer others a week for wobbly's 3 more: all new
# papers are the same in each week as without it.
CORPUS = [20, 200, 200, 200, 197, 197, 197, 197]
WEEKLY = {
    "growing": [1, 10, 10, 10, 20, 20, 20, 20],  # its share about doubles
    "shrinking": [2, 20, 20, 20, 12, 12, 12, 12],  # its share falls by 40%
    "steady": [2, 20, 20, 20, 20, 20, 20, 21],  # its share rises by 0.1%
    "wobbly": [2, 20, 20, 20, 23, 23, 23, 23],  # +14%: within chance at 152 papers
    "tiny": [0, 0, 1, 1, 1, 1, 2, 1],  # 2 -> 5 papers: +150%, but too few
}
PAGE_QUERIES = 4


@pytest.fixture
def topics():
    records = announced_papers(AS_OF, CORPUS, title="other", series=9)
    for series, (word, weekly) in enumerate(WEEKLY.items(), start=1):
        make_topic(f"{word.title()} field", rule=f"ti:{word}", slug=word)
        records += announced_papers(AS_OF, weekly, title=word, series=series)
    make_topic("Dormant field", rule="ti:dormant", slug="dormant")
    upsert_records(records)
    retag_all()
    refresh_momentum()
    return {t.slug: t for t in Topic.objects.all()}


def test_trending_lists_only_rising_topics_with_enough_papers(topics):
    steady = topics["steady"].momentum
    assert steady.trend_score > 0  # but its change rounds to 0%: not rising

    assert [t.slug for t in trending_topics()] == ["growing"]


def test_the_trending_page_lists_every_topic_rising_falling_then_unranked(
    client, topics, django_assert_max_num_queries
):
    with django_assert_max_num_queries(PAGE_QUERIES):
        response = client.get("/topics/trending/")

    assert response.status_code == 200
    page = response.text
    order = ["Rising", "growing", "Within chance", "wobbly", "steady"]
    order += ["Falling", "shrinking"]
    order += ["Too little to rank", "dormant", "tiny"]
    positions = [
        page.index(f'href="/topics/{x}/"' if x.islower() else x) for x in order
    ]
    assert positions == sorted(positions)
    assert ", up " in card(page, "growing")
    assert ", down " in card(page, "shrinking")
    assert "too few papers to say how fast" in card(page, "tiny")
    assert "too few papers to say how fast" in card(page, "dormant")
    assert ", the same as in the four weeks before." in card(page, "steady")
    # Its group says it is within chance: its card does not say it again.
    assert ", up 14% on the 7.39% of the four weeks before." in card(page, "wobbly")
    # Coverage is the corpus's: said once, not on every card.
    assert page.count("left out of both: the week of May 30.") == 1
    assert "so left out" not in page


def card(page: str, slug: str) -> str:
    """The list item of the topic with this slug."""
    start = page.index(f'href="/topics/{slug}/"')
    return page[start : page.index("</li>", start)]


def test_the_trending_page_shows_a_reader_what_they_follow(
    client, alice, topics, django_assert_max_num_queries
):
    set_following(alice, topics["shrinking"], True)
    client.force_login(alice)

    with django_assert_max_num_queries(PAGE_QUERIES + 2):  # session and user
        page = client.get("/topics/trending/").text

    assert 'aria-pressed="true">Following' in card(page, "shrinking")
    assert page.count('aria-pressed="true"') == 1


def test_the_trending_page_before_any_count(client, db):
    make_topic("Fresh", rule="ti:fresh", slug="fresh")

    page = client.get("/topics/trending/").text

    assert "Momentum not computed yet." in page
    assert "No topic is rising beyond chance." in page


def test_a_reader_who_follows_nothing_is_offered_the_rising_then_the_busiest(
    client, alice, topics
):
    client.force_login(alice)

    page = client.get("/").text

    offered = page[page.index("You don't follow any topic yet") :]
    offered = offered[: offered.index("Browse all topics")]
    # Rising beyond chance first, then by papers in the last four weeks.
    order = ["growing", "wobbly", "steady", "shrinking", "tiny"]
    positions = [offered.index(f'href="/topics/{slug}/"') for slug in order]
    assert positions == sorted(positions)
    # Each followed from where it is offered, in one click.
    for slug in order:
        assert f'action="/topics/{slug}/follow/"' in offered
    # No papers yet: no count of them, nor keys to move among them.
    assert '<h1 id="feed-heading">Your feed</h1>' in page
    assert "key-hint" not in page


def test_home_and_the_topic_list_link_to_the_trending_page(client, topics):
    home = client.get("/").text
    trending_block = home[home.index("Trending topics") :]

    assert 'href="/topics/growing/"' in trending_block
    assert 'href="/topics/shrinking/"' not in trending_block
    assert 'href="/topics/steady/"' not in trending_block
    assert 'href="/topics/trending/"' in trending_block
    assert 'href="/topics/trending/"' in client.get("/topics/").text


def test_trending_is_not_shadowed_by_a_topic_of_that_slug(client, topics):
    # Written around Topic.clean, as an old row or a raw insert could be.
    Topic.objects.create(name="Trending", slug="trending", rule="ti:trend")

    assert resolve("/topics/trending/").func is views.trending
    assert "Trending topics" in client.get("/topics/trending/").text


def test_topics_refuse_the_slug_trending():
    topic = Topic(name="Trending", slug="trending", rule="ti:trend")

    with pytest.raises(ValidationError) as refused:
        topic.full_clean()

    assert set(refused.value.message_dict) == {"slug"}


def test_admin_refuses_the_slug_trending(admin_client):
    response = admin_client.post(
        reverse("admin:topics_topic_add"),
        {
            "name": "Trending",
            "slug": "trending",
            "rule": "ti:trend",
            "is_active": "on",
            "membership": "rule",
            "precision_target": "0.95",
            "recall_target": "0.9",
            "paper_topics-TOTAL_FORMS": "0",
            "paper_topics-INITIAL_FORMS": "0",
            "exclusions-TOTAL_FORMS": "0",
            "exclusions-INITIAL_FORMS": "0",
        },
    )

    assert response.status_code == 200
    assert "is the address of a page of the site" in response.text
    assert not Topic.objects.filter(slug="trending").exists()


def test_visitors_get_the_trending_page_from_the_cache(
    topics, django_assert_num_queries
):
    visitor = Client()
    first = visitor.get("/topics/trending/").text
    with django_assert_num_queries(0):
        assert visitor.get("/topics/trending/").text == first
