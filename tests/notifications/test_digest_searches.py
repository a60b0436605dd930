"""Saved searches in the digest: a section per search after the topics and
authors, each paper once, a paper in an earlier section naming the searches
that match it."""

from __future__ import annotations

from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from accounts.models import User
from notifications.content import shape_digests
from notifications.delivery import hand_out
from notifications.delivery import open_due_digests
from notifications.delivery import send_digests
from notifications.mailer import Mailer
from notifications.models import DigestPaper
from notifications.plan import PlanRequest
from notifications.plan import plan_digests
from papers.models import Paper
from tests.accounts.factories import verified
from tests.notifications.factories import add_papers
from tests.notifications.factories import sent_weekly_digest
from topics.models import Follow
from topics.models import SavedSearchMatch
from topics.saved_searches import create_search
from topics.saved_searches import match_new_papers

pytestmark = pytest.mark.django_db

MONDAY = date(2026, 7, 13)
MONDAY_9 = datetime(2026, 7, 13, 9, tzinfo=UTC)
WEEK = timedelta(days=7)


def days_ago(n: int) -> date:
    return MONDAY - timedelta(days=n)


def plan_of(user: User, max_papers: int = 30):
    return plan_digests([PlanRequest(user.pk, MONDAY, WEEK, max_papers, MONDAY)])[
        user.pk
    ]


def test_a_section_per_search_after_the_topics_each_paper_once(
    alice, bob, agents, django_assert_max_num_queries
):
    Follow.objects.create(user=alice, topic=agents)
    [in_topic] = add_papers(agents, days_ago(1), title="Agents on an engine")
    [engine] = add_papers([], days_ago(3), title="An engine alone")
    [both] = add_papers([], days_ago(2), title="Engine notes")
    [notes] = add_papers([], days_ago(4), title="Notes alone")
    add_papers([], days_ago(9), title="An engine too old")
    engines = create_search(alice, name="Engines", query="engine", syntax="search")
    jottings = create_search(alice, name="Notes", query="notes", syntax="search")
    create_search(bob, name="Bob's", query="alone", syntax="search")

    requests = [PlanRequest(u.pk, MONDAY, WEEK, 30, MONDAY) for u in (alice, bob)]
    # Follows of topics and authors, last periods, tags, authorships, saved
    # searches' matches, papers sent, saved and rated, and the readers' models:
    # the same for any number of readers.
    with django_assert_max_num_queries(9):
        plans = plan_digests(requests)

    assert plans[alice.pk].sections == [
        {
            "topic": agents.pk,
            "papers": [[in_topic.pk, [], [], [engines.pk]]],
            "more": 0,
        },
        {
            "topic": None,
            "search": engines.pk,
            "papers": [[both.pk, [], [], [jottings.pk]], [engine.pk, []]],
            "more": 0,
        },
        {"topic": None, "search": jottings.pk, "papers": [[notes.pk, []]], "more": 0},
    ]
    [bobs] = plans[bob.pk].sections
    assert {entry[0] for entry in bobs["papers"]} == {engine.pk, notes.pk}

    [content] = shape_digests([plans[alice.pk]], "https://m.example")
    titles = [section.title for section in content.sections]
    assert titles == [
        "Agents",
        "Matching your search \u201cEngines\u201d",
        "Matching your search \u201cNotes\u201d",
    ]
    assert [s.name for s in content.sections[0].entries[0].matches] == ["Engines"]
    # The subject's count holds the searches' papers: it says they are there.
    assert content.about == "in Agents and matching 2 of your saved searches"


def test_a_match_an_ingest_found_after_the_last_digest_is_in_the_next(alice):
    """Harvested late, or a new version that now matches: announced before
    this period, it is new to the reader all the same (four weeks back at
    most). What the search matched when it was saved the reader has seen."""
    last_due = datetime(2026, 7, 6, 8, tzinfo=UTC)
    this_due = last_due + WEEK
    sent_weekly_digest(alice, MONDAY - WEEK, last_due)
    [seen] = add_papers([], days_ago(14), title="Engine seen")
    search = create_search(alice, name="Engines", query="engine", syntax="search")
    [late, next_ones] = add_papers([], days_ago(14), count=2, title="Engine late")
    [too_old] = add_papers([], days_ago(35), title="Engine of old")

    match_new_papers()

    assert SavedSearchMatch.objects.get(paper=seen).found_at is None
    assert SavedSearchMatch.objects.get(paper=late).found_at is not None
    found = {
        late: last_due + timedelta(days=2),
        next_ones: this_due + timedelta(hours=1),  # the next digest's
        too_old: last_due + timedelta(days=2),
    }
    for paper, at in found.items():
        SavedSearchMatch.objects.filter(paper=paper).update(found_at=at)
    request = PlanRequest(alice.pk, MONDAY, WEEK, 30, MONDAY, due=this_due)
    assert plan_digests([request])[alice.pk].sections == [
        {
            "topic": None,
            "search": search.pk,
            "papers": [[late.pk, []]],
            "more": 0,
            # Announced before the period: its "and N more" link starts there.
            "since": late.first_announced.isoformat(),
        }
    ]


def test_a_match_kept_out_when_the_search_was_saved_is_not_found_later(
    alice, monkeypatch
):
    """Only the newest matches are kept when a search is saved: an older one
    that arXiv rewrites later (a cross-list, a journal reference) matched all
    along, and is not new; one with a new version since is, and so is one
    whose version was submitted just before the search was saved, as arXiv
    announces it days later."""
    monkeypatch.setattr("topics.saved_searches.MATCHES_KEPT", 1)
    older, newest = add_papers([], days_ago(14), count=2, title="Engine notes")
    revised, lagging, long_ago = add_papers([], days_ago(20), count=3, title="Engine")
    search = create_search(alice, name="Engines", query="engine", syntax="search")
    now = timezone.now()
    for paper, updated in (
        (older, None),  # a journal reference added
        (revised, now),
        (lagging, search.created_at - timedelta(days=2)),
        (long_ago, search.created_at - timedelta(days=30)),  # then cross-listed
    ):
        Paper.objects.filter(pk=paper.pk).update(
            updated=updated, journal_ref="J. 1", modified_at=now
        )

    match_new_papers()

    found = dict(SavedSearchMatch.objects.values_list("paper_id", "found_at"))
    assert found[newest.pk] is None  # kept when saved
    assert (found[older.pk], found[long_ago.pk]) == (None, None)
    assert found[revised.pk] is not None
    assert found[lagging.pk] is not None


def test_a_reader_with_only_a_search_gets_it_by_mail_once(alice, settings):
    reader = verified(alice)
    User.objects.filter(pk=reader.pk).update(
        date_joined=datetime(2026, 7, 1, tzinfo=UTC)
    )
    [paper] = add_papers([], date(2026, 7, 10), title="Notes on the engine")
    create_search(reader, name="Engines", query="engine", syntax="search")

    open_due_digests(at=MONDAY_9)
    [outcome] = send_digests(hand_out(), mailer=Mailer())

    assert outcome.status == "sent"
    [message] = mail.outbox
    assert message.subject == '1 new paper matching your search "Engines"'
    assert "== Matching your search \u201cEngines\u201d ==" in message.body
    # It says what it holds: no topic, no author.
    assert "New papers matching your saved searches, first announced" in message.body
    assert "because you saved these searches on Momentum." in message.body
    assert "topic" not in message.body  # not even "mute a topic"
    assert "Matching your search \u201cEngines\u201d</h2>" in message.alternatives[0][0]
    assert list(DigestPaper.objects.values_list("paper_id", "topic_id")) == [
        (paper.pk, None)
    ]
    assert plan_of(reader).sections == []


def test_a_search_sections_more_link_is_the_search_of_the_days_it_covers(alice):
    """Not the home page, where the papers past the cap are not to be found."""
    add_papers([], days_ago(2), title="Engine notes", count=3)
    add_papers([], days_ago(2), title="Motor studies", count=3)
    create_search(alice, name="Engines", query="engine notes", syntax="search")
    create_search(alice, name="Rule", query="ti:motor", syntax="rule")

    [content] = shape_digests([plan_of(alice, max_papers=2)], "https://m.example")

    words, rule = content.sections
    assert (words.more, rule.more) == (2, 2)
    assert words.more_url == (
        f"https://m.example/search/?q=engine+notes&from={days_ago(7)}"
    )
    # A rule is no search of the search page: the reader's feed holds its matches.
    assert rule.more_url == "https://m.example/"
