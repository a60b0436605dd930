"""Rows written before a release that refuses or cleans what they hold: after
the upgrade, what readers see of them still works."""

from __future__ import annotations

import feedparser
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client

from accounts import feed_tokens
from papers.models import Paper
from tests.clients import signed_in
from topics.following import set_following
from topics.models import SavedSearch
from topics.models import Topic
from topics.saved_searches import create_search

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("old", ["A page\x0cbreak", "An \x1b escape", "Non\ufffe"])
def test_topic_feed_of_a_description_saved_before_the_refusal(client, corpus, old):
    Topic.objects.filter(pk=corpus["agents"].pk).update(description=old)

    response = client.get("/topics/rl-for-llm-agents/feed/")

    assert response.status_code == 200
    assert not feedparser.parse(response.content).bozo


def test_topic_feed_of_an_author_stored_before_names_were_cleaned(client, corpus):
    Paper.objects.filter(arxiv_id="2606.00001").update(
        author_names="Ada \x1bLovelace, Alan Turing"
    )

    response = client.get("/topics/rl-for-llm-agents/feed/")

    assert response.status_code == 200
    assert not feedparser.parse(response.content).bozo


def test_private_feed_of_a_search_named_before_the_refusal(alice, corpus):
    search = create_search(alice, name="Old ideas", query="old", syntax="search")
    SavedSearch.objects.filter(pk=search.pk).update(name="Old\ufffe ideas")
    set_following(alice, corpus["agents"], True)

    response = Client().get(f"/feed/{feed_tokens.create_feed(alice)}.atom")

    assert response.status_code == 200
    assert not feedparser.parse(response.content).bozo


@pytest.mark.django_db(transaction=True)
def test_a_search_saved_with_spaces_around_before_they_were_stripped(alice, corpus):
    """Migration topics/0022: its 'Run it' says it is saved, as a new one's does."""
    executor = MigrationExecutor(connection)
    before = [("topics", "0021_topic_text_without_page_breaks")]
    executor.migrate(before)
    old = executor.loader.project_state(before).apps.get_model("topics", "SavedSearch")
    old.objects.create(
        user_id=alice.pk, name="Robots", query=" robot ", syntax="search"
    )

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    reader = signed_in(alice)
    page = reader.get("/settings/").text
    run = page.split('<a href="/search/?q=')[1].split('"')[0]
    results = reader.get(f"/search/?q={run}").text.split('class="save-search"')[1]
    assert "Saved as “Robots”" in results
