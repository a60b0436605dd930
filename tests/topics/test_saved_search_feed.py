"""Saved searches in the reader's feeds: the home feed and the private Atom feed
hold their matches, each row saying which search brought it, and no reader
sees another's searches, even when they follow the same topics."""

from __future__ import annotations

import itertools
import re
from datetime import UTC
from datetime import datetime

import feedparser
import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from accounts import feed_tokens
from papers.authors import set_following_author
from papers.ingest.runs import ingest_entries
from papers.ingest.upsert import upsert_records
from papers.models import Author
from papers.models import IngestRun
from tests.clients import signed_in
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.following import set_following
from topics.models import SavedSearch
from topics.saved_searches import create_search
from topics.saved_searches import match_new_papers
from topics.saved_searches import update_search
from topics.tagging import IngestTagger
from topics.tagging import tag_papers

pytestmark = pytest.mark.django_db

# The home feed rendered anew: what the reader follows (topics, authors,
# searches, their model), the page's papers and each's rows, the
# searches' matches, the words of those in words (their links), the reader's
# saved papers and the last ingest (serving it writes nothing: papers.views.seen).
MAX_RENDER_QUERIES = 15


def listed(html: str) -> list[str]:
    return re.findall(r'data-paper="([^"]+)"', html)


def why(name: str) -> str:
    return f"Matches your search &ldquo;{name}&rdquo;"


def reasons(html: str) -> dict[str, list[str]]:
    """Each row's saved searches, from the lines just above it."""
    parts = html.split('data-paper="')
    return {
        part.split('"', 1)[0]: re.findall(
            r"Matches your search &ldquo;(.*?)&rdquo;",
            before.rsplit("</article>", 1)[-1],
        )
        for before, part in itertools.pairwise(parts)
    }


def test_matches_enter_the_feed_marked_and_no_other_reader_sees_them(
    alice, bob, corpus, django_assert_max_num_queries
):
    for reader in (alice, bob):
        set_following(reader, corpus["robots"], True)
    create_search(alice, name="Old ideas", query='"old style"', syntax="search")
    create_search(alice, name="Robots", query="ti:robot", syntax="rule")
    create_search(bob, name="Agent 3", query='"agent 3"', syntax="search")
    as_alice, as_bob = signed_in(alice), signed_in(bob)
    as_alice.get("/")  # rendered, and kept as her own

    # Served from the cache (its render's cost: the test below).
    with django_assert_max_num_queries(0):
        mine = as_alice.get("/").text
    theirs = as_bob.get("/").text

    # The robot paper is in the followed topic and matched too.
    assert reasons(mine) == {"math/0601001": ["Old ideas"], "2606.00100": ["Robots"]}
    assert "matching your 2 saved searches" in mine
    assert reasons(theirs) == {"2606.00100": [], "2606.00003": ["Agent 3"]}
    assert "Old ideas" not in theirs
    assert "Agent 3" not in mine


def test_the_feeds_searches_open_their_results(alice, corpus):
    create_search(alice, name="Old ideas", query='"old style" & co', syntax="search")
    create_search(alice, name="Robots", query="ti:robot", syntax="rule")

    page = signed_in(alice).get("/").text
    aside = page.split("<h2>Your searches</h2>")[1].split("</ul>")[0]

    # A search in words goes back further on the search page; a rule's papers
    # are only in the feed.
    assert '<a href="/search/?q=%22old+style%22+%26+co">Old ideas</a>' in aside, aside
    assert "<li>Robots</li>" in aside


@pytest.mark.parametrize("more", [0, 30])
def test_the_feeds_render_costs_as_many_queries_for_25_rows_as_for_2(
    alice, corpus, more
):
    """Rendered anew (nothing cached, its session and user read too), with
    two rows or a full page of them, followed and matched alike: measured on
    a page served from the cache, a query per row went unnoticed."""
    newer = datetime(2026, 6, 3, 15, 0, tzinfo=UTC)
    records = [
        paper_record(f"2606.{n:05d}", title=f"Robot old style {n}", published=newer)
        for n in range(200, 200 + more)
    ]
    tag_papers(upsert_records(records).changed_ids)
    set_following(alice, corpus["robots"], True)
    create_search(alice, name="Old ideas", query='"old style"', syntax="search")
    create_search(alice, name="Robots", query="ti:robot", syntax="rule")
    reader = signed_in(alice)
    cache.clear()

    with CaptureQueriesContext(connection) as queries:
        rows = listed(reader.get("/").text)

    assert len(rows) == (25 if more else 2)
    assert len(queries) == 2 + MAX_RENDER_QUERIES, "\n".join(
        query["sql"][:120] for query in queries
    )


def test_a_changed_search_and_a_new_match_show_in_the_cached_feed(
    alice, corpus, django_capture_on_commit_callbacks
):
    search = create_search(alice, name="Old", query='"old style"', syntax="search")
    reader = signed_in(alice)
    assert listed(reader.get("/").text) == ["math/0601001"]

    with django_capture_on_commit_callbacks(execute=True):
        update_search(search, query="robot", name="Robot")
    feed = reader.get("/").text
    assert listed(feed) == ["2606.00100"]
    assert why("Robot") in feed

    with django_capture_on_commit_callbacks(execute=True):
        changed = upsert_records(
            [paper_record("2606.00500", title="A robot hand")]
        ).changed_ids
        tag_papers(changed)
        match_new_papers()
    assert listed(reader.get("/").text)[0] == "2606.00500"


def test_a_matched_papers_new_version_shows_in_the_cached_feeds(
    alice, corpus, django_capture_on_commit_callbacks
):
    """A version that still matches changes no match: the feeds of a reader
    with searches only kept the paper as it was, the private feed for an hour."""
    create_search(alice, name="Old", query='"old style"', syntax="search")
    reader = signed_in(alice)
    atom = f"/feed/{feed_tokens.create_feed(alice)}.atom"
    assert "Old style id" in reader.get("/").text
    assert "Old style id" in Client().get(atom).text

    with django_capture_on_commit_callbacks(execute=True):
        run = IngestRun.objects.create(source="test")
        revised = paper_record("math/0601001", version=3, title="Old style id, revised")
        ingest_entries(run, [revised], tagger=IngestTagger())
        match_new_papers()

    assert "Old style id, revised" in reader.get("/").text
    assert "Old style id, revised" in Client().get(atom).text


def test_a_reader_with_only_searches_gets_a_feed(alice, corpus):
    create_search(alice, name="Robots", query="robot", syntax="search")

    feed = signed_in(alice).get("/").text

    assert listed(feed) == ["2606.00100"]
    assert "You don't follow any topic yet" not in feed
    assert "Your searches" in feed


@pytest.mark.parametrize(
    ("follows", "said"),
    [
        ("t", "No papers in your topics yet."),
        ("a", "No papers by your authors yet."),
        ("s", "No papers match your searches yet."),
        ("ta", "No papers in your topics or by your authors yet."),
        ("ts", "No papers in your topics or matching your searches yet."),
        ("as", "No papers by your authors or matching your searches yet."),
        (
            "tas",
            "No papers in your topics, by your authors or matching your searches yet.",
        ),
    ],
)
def test_an_empty_feed_names_what_the_reader_follows(follows, said, alice, corpus):
    """A reader whose topics and searches had no papers read "No papers in
    your topics yet", their searches unsaid."""
    if "t" in follows:
        set_following(alice, make_topic("Quantum", rule="ti:qubit"), True)
    if "a" in follows:  # whose papers were all deleted, say
        set_following_author(alice, Author.objects.create(name="Emmy Noether"), True)
    if "s" in follows:
        create_search(alice, name="Qubits", query="qubit", syntax="search")

    feed = signed_in(alice).get("/").text

    assert listed(feed) == []
    assert f'<p class="empty">{said}</p>' in feed


def test_the_private_feed_holds_the_matches_with_their_search(alice, bob, corpus):
    create_search(alice, name="Old ideas", query='"old style"', syntax="search")
    set_following(bob, corpus["robots"], True)
    path = f"/feed/{feed_tokens.create_feed(alice)}.atom"

    feed = feedparser.parse(Client().get(path).content)

    (entry,) = feed.entries
    assert entry.link.endswith("/papers/math/0601001/")
    assert [tag.term for tag in entry.tags] == ['Matches your search "Old ideas"']
    # Each kind of source once, each with its own words: not "in by Ada".
    assert feed.feed.subtitle == 'New papers matching your search "Old ideas"'
    bobs = f"/feed/{feed_tokens.create_feed(bob)}.atom"
    assert "Old ideas" not in Client().get(bobs).text


def test_the_feeds_search_of_common_words_only_leads_to_its_settings(alice, corpus):
    """Saved before such a search was refused: it matches nothing, and says so."""
    search = SavedSearch.objects.create(
        user=alice, name="Common", query="of the", syntax="search"
    )

    page = signed_in(alice).get("/").text
    aside = page.split("<h2>Your searches</h2>")[1].split("</ul>")[0]

    assert "Common <span" in aside
    assert "nothing to search for" in aside
    assert f'href="/settings/#saved-search-{search.pk}"' in aside
    assert "/search/?q=" not in aside
