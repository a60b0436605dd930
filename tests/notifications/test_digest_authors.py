"""Followed authors in the digest: their new papers, each paper once, with
every reason it is there, in text and HTML."""

from __future__ import annotations

from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import timedelta

import pytest
from django.core import mail

from accounts.models import User
from notifications.content import shape_digests
from notifications.delivery import hand_out
from notifications.delivery import open_due_digests
from notifications.delivery import send_digests
from notifications.mailer import Mailer
from notifications.models import DigestPaper
from notifications.plan import PlanRequest
from notifications.plan import plan_digests
from papers.models import Author
from papers.models import AuthorFollow
from papers.models import Authorship
from papers.models import Paper
from tests.accounts.factories import verified
from tests.notifications.factories import add_papers
from tests.topics.factories import make_topic
from topics.models import Follow

pytestmark = pytest.mark.django_db

MONDAY = date(2026, 7, 13)
MONDAY_9 = datetime(2026, 7, 13, 9, tzinfo=UTC)
WEEK = timedelta(days=7)


@pytest.fixture
def robots(db):
    return make_topic("Robots", rule="ti:robot", slug="robots")


@pytest.fixture
def ada(db) -> Author:
    return Author.objects.create(name="Ada Lovelace")


def written_by(paper: Paper, *authors: Author) -> Paper:
    for position, author in enumerate(authors):
        Authorship.objects.create(paper=paper, author=author, position=position)
    return paper


def plan_of(user: User, max_papers: int = 30):
    return plan_digests([PlanRequest(user.pk, MONDAY, WEEK, max_papers, MONDAY)])[
        user.pk
    ]


def test_new_papers_by_followed_authors_come_after_the_topics_each_once(
    alice, agents, robots, ada
):
    Follow.objects.create(user=alice, topic=agents)
    AuthorFollow.objects.create(user=alice, author=ada)
    grace = Author.objects.create(name="Grace Hopper")
    AuthorFollow.objects.create(user=alice, author=grace)
    [in_both] = add_papers(agents, MONDAY - timedelta(days=2))
    written_by(in_both, ada)
    [topic_only] = add_papers(agents, MONDAY - timedelta(days=1))
    [by_both] = add_papers(robots, MONDAY - timedelta(days=3))  # robots: not followed
    written_by(by_both, grace, ada)
    [older] = add_papers([], MONDAY - timedelta(days=5))
    written_by(older, ada)
    [too_old] = add_papers([], MONDAY - timedelta(days=9))
    written_by(too_old, ada)

    plan = plan_of(alice)

    assert plan.sections == [
        {
            "topic": agents.pk,
            "papers": [[topic_only.pk, []], [in_both.pk, [], [ada.pk]]],
            "more": 0,
        },
        {
            "topic": None,
            # In the order followed: Ada, then Grace.
            "papers": [[by_both.pk, [], [ada.pk, grace.pk]], [older.pk, [], [ada.pk]]],
            "more": 0,
        },
    ]


def test_the_authors_section_shares_the_cap_and_says_how_many_more(alice, agents, ada):
    Follow.objects.create(user=alice, topic=agents)
    AuthorFollow.objects.create(user=alice, author=ada)
    add_papers(agents, MONDAY - timedelta(days=1), count=3)
    for paper in add_papers([], MONDAY - timedelta(days=2), count=3):
        written_by(paper, ada)

    plan = plan_of(alice, max_papers=4)

    assert [(len(s["papers"]), s["more"]) for s in plan.sections] == [(2, 1), (2, 1)]


def test_a_reader_who_follows_only_authors_gets_a_digest_in_text_and_html(
    alice, ada, settings
):
    reader = verified(alice)
    User.objects.filter(pk=reader.pk).update(
        date_joined=datetime(2026, 7, 1, tzinfo=UTC)
    )
    AuthorFollow.objects.create(user=reader, author=ada)
    [paper] = add_papers([], date(2026, 7, 10), title="Notes on the engine")
    written_by(paper, ada)

    open_due_digests(at=MONDAY_9)
    [outcome] = send_digests(hand_out(), mailer=Mailer())

    assert outcome.status == "sent"
    [message] = mail.outbox
    assert message.subject == "1 new paper by authors you follow"
    assert "== By authors you follow ==" in message.body
    assert "By Ada Lovelace, whom you follow" in message.body
    html = message.alternatives[0][0]
    author_url = f"https://momentum.example/authors/{ada.pk}/"
    assert f'<a href="{author_url}" style="color:#1a5fb4;">Ada Lovelace</a>' in html
    assert "By authors you follow</h2>" in html
    # Sent once: recorded without a topic, and never sent again.
    assert list(DigestPaper.objects.values_list("paper_id", "topic_id")) == [
        (paper.pk, None)
    ]
    assert plan_of(reader).sections == []


def test_a_paper_in_a_topic_and_by_an_author_names_both_reasons(
    subscriber, agents, ada
):
    User.objects.filter(pk=subscriber.pk).update(
        date_joined=datetime(2026, 7, 1, tzinfo=UTC)
    )
    AuthorFollow.objects.create(user=subscriber, author=ada)
    [paper] = add_papers(agents, date(2026, 7, 10), title="Agents by Ada")
    written_by(paper, ada)

    open_due_digests(at=MONDAY_9)
    send_digests(hand_out(), mailer=Mailer())

    [message] = mail.outbox
    assert message.subject == "1 new paper in Agents"
    assert message.body.count("Agents by Ada") == 1
    assert "== Agents ==" in message.body
    assert "By Ada Lovelace, whom you follow" in message.body
    assert "By authors you follow" not in message.body
    # Listed once (the inbox's preview line names it besides).
    assert message.alternatives[0][0].count(f'/papers/{paper.arxiv_id}/"') == 1


def test_digests_planned_before_author_follows_still_shape(alice, agents):
    [paper] = add_papers(agents, MONDAY)
    plan = plan_of(alice)
    plan.sections = [{"topic": agents.pk, "papers": [[paper.pk, []]], "more": 0}]

    [content] = shape_digests([plan], "https://m.example")

    [entry] = content.sections[0].entries
    assert entry.by_followed == []


def test_a_followed_authors_paper_harvested_after_a_digest_comes_in_the_next(
    alice, ada
):
    """Announced before the last digest's send time but ingested after it (an
    ingest outage, a backfill): new to the reader, as a topic's late paper is."""
    reader = verified(alice)
    User.objects.filter(pk=reader.pk).update(
        date_joined=datetime(2026, 7, 1, tzinfo=UTC)
    )
    AuthorFollow.objects.create(user=reader, author=ada)
    written_by(add_papers([], date(2026, 7, 10), title="Early notes")[0], ada)
    open_due_digests(at=MONDAY_9)
    send_digests(hand_out(), mailer=Mailer())
    [late] = add_papers([], date(2026, 7, 10), title="Late notes")
    written_by(late, ada)
    Paper.objects.filter(pk=late.pk).update(
        created_at=datetime(2026, 7, 14, 3, tzinfo=UTC)
    )
    written_by(add_papers([], date(2026, 7, 15), title="Fresh notes")[0], ada)

    open_due_digests(at=MONDAY_9 + WEEK)
    send_digests(hand_out(), mailer=Mailer())

    first, second = (message.body for message in mail.outbox)
    assert "Early notes" in first
    assert "Late notes" in second
    assert "Fresh notes" in second
    assert "Early notes" not in second
    # Its section's first line says the late paper's day.
    assert "first announced since Jul 10, 2026" in second
