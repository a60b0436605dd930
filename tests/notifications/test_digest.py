"""What goes in a digest: planning rules and the shaped content."""

from __future__ import annotations

import re
from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import User
from notifications.content import Content
from notifications.content import Section
from notifications.content import one_line
from notifications.content import shape_digests
from notifications.mailer import render_digest
from notifications.models import Digest
from notifications.models import DigestPaper
from notifications.plan import PlanRequest
from notifications.plan import plan_digests
from notifications.plan import share_slots
from papers.models import Affiliation
from papers.models import Author
from papers.models import Authorship
from papers.models import Paper
from tests.notifications.factories import add_papers
from tests.notifications.factories import sent_weekly_digest
from tests.topics.factories import make_topic
from topics.models import Follow
from topics.models import PaperTopic
from topics.models import SavedSearch
from topics.models import Topic

pytestmark = pytest.mark.django_db

MONDAY = date(2026, 7, 13)
WEEK = timedelta(days=7)


def weekly(user: User, max_papers: int = 30, **fields: object) -> PlanRequest:
    return PlanRequest(user.pk, MONDAY, WEEK, max_papers, MONDAY, **fields)


@pytest.fixture
def robots():
    return make_topic("Robots", rule="ti:robot", slug="robots")


def papers_in(plan) -> list[list[int]]:
    return [[paper_id for paper_id, _ in s["papers"]] for s in plan.sections]


def test_first_digest_holds_the_last_period_of_each_followed_topic(
    alice, agents, robots
):
    Follow.objects.create(user=alice, topic=agents)
    old = add_papers(agents, MONDAY - timedelta(days=8))
    new = add_papers(agents, MONDAY - timedelta(days=3), count=2)
    add_papers(robots, MONDAY)  # not followed

    plan = plan_digests([weekly(alice)])[alice.pk]

    assert plan.since == MONDAY - WEEK
    assert papers_in(plan) == [[new[1].pk, new[0].pk]]
    assert old[0].pk not in papers_in(plan)[0]


def test_later_digests_start_at_the_last_period_received_and_skip_sent_papers(
    alice, agents
):
    Follow.objects.create(user=alice, topic=agents)
    last = sent_weekly_digest(alice, MONDAY - WEEK, "2026-07-06T08:00Z")
    sent, unsent = add_papers(agents, MONDAY - WEEK, count=2)
    DigestPaper.objects.create(digest=last, user=alice, paper=sent, topic=agents)
    before = add_papers(agents, MONDAY - WEEK - timedelta(days=1))

    plan = plan_digests([weekly(alice)])[alice.pk]

    assert plan.since == MONDAY - WEEK
    assert papers_in(plan) == [[unsent.pk]]
    assert before[0].pk not in papers_in(plan)[0]


def test_a_paper_that_joined_a_topic_after_the_last_digest_is_in_the_next(
    alice, agents
):
    """Harvested late, or included by a curator from the review queue after
    the digest that covered its day: announced before this period, it is new
    to the reader all the same (four weeks back at most)."""
    Follow.objects.create(user=alice, topic=agents)
    last_due = datetime(2026, 7, 6, 8, tzinfo=UTC)
    this_due = last_due + WEEK
    sent_weekly_digest(alice, MONDAY - WEEK, last_due)
    late, early, sent, next_ones = add_papers(agents, MONDAY - 2 * WEEK, count=4)
    (too_old,) = add_papers(agents, MONDAY - 5 * WEEK)
    joined = {
        late: last_due + timedelta(days=2),
        early: last_due - timedelta(days=1),  # the last digest's to hold
        sent: last_due + timedelta(days=2),
        next_ones: this_due + timedelta(hours=1),  # the next digest's
        too_old: last_due + timedelta(days=2),
    }
    for paper, at in joined.items():
        PaperTopic.objects.filter(paper=paper).update(created_at=at)
    DigestPaper.objects.create(
        digest=Digest.objects.get(), user=alice, paper=sent, topic=agents
    )

    plan = plan_digests([weekly(alice, due=this_due)])[alice.pk]

    assert papers_in(plan) == [[late.pk]]


def test_a_paper_in_two_followed_topics_appears_once_under_the_first(
    alice, agents, robots
):
    Follow.objects.create(user=alice, topic=robots)
    Follow.objects.create(user=alice, topic=agents)
    [both] = add_papers([agents, robots], MONDAY)

    plan = plan_digests([weekly(alice)])[alice.pk]

    assert plan.sections == [
        {"topic": robots.pk, "papers": [[both.pk, [agents.pk]]], "more": 0}
    ]


def test_muted_and_inactive_topics_are_left_out(alice, agents, robots):
    Follow.objects.create(user=alice, topic=agents, muted=True)
    Follow.objects.create(user=alice, topic=robots)
    robots.is_active = False
    robots.save()
    add_papers([agents], MONDAY)
    add_papers([robots], MONDAY)

    assert plan_digests([weekly(alice)])[alice.pk].sections == []


def test_past_the_cap_topics_share_the_slots_and_count_the_rest(alice, agents, robots):
    Follow.objects.create(user=alice, topic=agents)
    Follow.objects.create(user=alice, topic=robots)
    add_papers(agents, MONDAY, count=10)
    add_papers(robots, MONDAY, count=2)

    plan = plan_digests([weekly(alice, max_papers=5)])[alice.pk]

    assert [len(s["papers"]) for s in plan.sections] == [3, 2]
    assert [s["more"] for s in plan.sections] == [7, 0]
    [content] = shape_digests([plan], "https://m.example")
    # Every paper since the digest's first day, which a week's page would not
    # hold all of (a digest may span up to four weeks).
    assert content.sections[0].more_url == (
        f"https://m.example/search/?topic=agents&from={MONDAY - WEEK}"
    )
    # The subject counts them all, not the five shown.
    rendered = render_digest(user=alice, content=content, digest_id=None)
    assert rendered.subject == "12 new papers in Agents and 1 more topic"


def test_sections_the_cap_left_no_room_for_say_what_they_hold(alice, agents, robots):
    """More sections with new papers than the cap allows papers: each of the
    first gets one, and the rest are listed with their counts and links."""
    speech = make_topic("Speech", rule="ti:speech", slug="speech")
    for topic in (agents, robots, speech):
        Follow.objects.create(user=alice, topic=topic)
        add_papers(topic, MONDAY, count=3)

    [content] = shape_digests(
        [plan_digests([weekly(alice, max_papers=2)])[alice.pk]], "https://m.example"
    )
    rendered = render_digest(user=alice, content=content, digest_id=None)

    assert [s.title for s in content.shown] == ["Agents", "Robots"]
    assert [(s.title, s.more) for s in content.unshown] == [("Speech", 3)]
    assert rendered.subject == "9 new papers in Agents and 2 more topics"
    assert (
        "== More new papers ==\n"
        "These had no room in this email "
        "(the papers it may hold are set in settings):\n"
        "* 3 new papers in Speech: "
        f"https://m.example/search/?topic=speech&from={MONDAY - WEEK}"
    ) in rendered.text
    assert (
        f'<a href="https://m.example/search/?topic=speech&amp;from={MONDAY - WEEK}"'
        ' style="color:#1a5fb4;">3 new papers in Speech</a>'
    ) in rendered.html


@pytest.mark.parametrize(
    ("topics", "authors", "searches", "about"),
    [
        (["Agents"], False, [], "in Agents"),
        (["Agents", "Robots", "Speech"], False, [], "in Agents and 2 more topics"),
        ([], True, [], "by authors you follow"),
        ([], False, ["Engines"], 'matching your search "Engines"'),
        (
            ["Agents", "Robots"],
            True,
            ["Engines"],
            "in Agents and 1 more topic, by authors you follow and matching your "
            'search "Engines"',
        ),
        (
            ["Agents"],
            False,
            ["Engines", "Notes"],
            "in Agents and matching 2 of your saved searches",
        ),
    ],
)
def test_the_subject_names_every_kind_of_section_its_count_holds(
    topics, authors, searches, about
):
    """A saved search's papers counted as the first topic's read as if that
    topic had them all."""
    sections = [Section(Topic(name=name), None, [], 0, "") for name in topics]
    if authors:
        sections.append(Section(None, None, [], 0, ""))
    sections += [
        Section(None, None, [], 0, "", search=SavedSearch(name=name))
        for name in searches
    ]

    assert Content(since=MONDAY, sections=sections).about == about


@pytest.mark.parametrize(
    ("kinds", "sources", "reasons"),
    [
        ({"topic"}, "in the topics you follow", "follow these topics"),
        (
            {"topic", "authors", "search"},
            "in the topics and by the authors you follow and matching your saved "
            "searches",
            "follow these topics and authors and saved these searches",
        ),
        ({"search"}, "matching your saved searches", "saved these searches"),
        (
            {"authors", "search"},
            "by the authors you follow and matching your saved searches",
            "follow these authors and saved these searches",
        ),
    ],
)
def test_the_first_line_and_the_foot_say_only_what_it_holds(kinds, sources, reasons):
    """A reader with only a saved search was told of "the topics you follow"."""
    sections = [
        *([Section(Topic(name="Agents"), None, [], 0, "")] if "topic" in kinds else []),
        *([Section(None, None, [], 0, "")] if "authors" in kinds else []),
        *(
            [Section(None, None, [], 0, "", search=SavedSearch(name="Engines"))]
            if "search" in kinds
            else []
        ),
    ]
    content = Content(since=MONDAY, sections=sections)

    assert (content.sources, content.reasons) == (sources, reasons)


def test_share_slots_is_even_and_never_exceeds_counts():
    assert share_slots([10, 2, 10], 9) == [4, 2, 3]
    assert share_slots([1, 1], 30) == [1, 1]
    assert share_slots([], 5) == []


def test_shaped_entries_carry_first_authors_affiliations_and_a_one_line_summary(
    alice, agents
):
    Follow.objects.create(user=alice, topic=agents)
    [paper] = add_papers(
        agents,
        MONDAY,
        authors="A One, B Two, C Three, D Four, E Five",
        abstract="First  sentence\nhere. Second sentence.",
    )
    mit = Affiliation.objects.create(name="MIT")
    for position, name in enumerate(["A One", "B Two"]):
        authorship = Authorship.objects.create(
            paper=paper,
            author=Author.objects.create(name=name),
            position=position,
        )
        authorship.affiliations.add(mit)

    [content] = shape_digests(
        [plan_digests([weekly(alice)])[alice.pk]], "https://m.example"
    )

    [entry] = content.sections[0].entries
    assert entry.authors == ["A One", "B Two", "C Three"]
    assert entry.more_authors == 2
    assert entry.affiliations == ["MIT"]
    assert entry.summary == "First sentence here."


def test_one_line_cuts_long_sentences_at_a_word():
    summary = one_line("word " * 100, limit=22)
    assert summary == "word word word word…"


def test_planning_and_shaping_a_batch_takes_the_same_queries_for_3_or_30_users(
    agents, robots
):
    def batch(size: int, offset: int) -> int:
        users = [
            User.objects.create_user(f"u{offset + n}@example.com") for n in range(size)
        ]
        for user in users:
            Follow.objects.create(user=user, topic=agents)
            Follow.objects.create(user=user, topic=robots)
        with CaptureQueriesContext(connection) as queries:
            plans = plan_digests([weekly(user) for user in users])
            shape_digests(plans.values(), "https://m.example")
        return len(queries)

    add_papers([agents], MONDAY, count=5)
    add_papers([agents, robots], MONDAY, count=5)

    assert batch(3, 0) == batch(30, 100)


@pytest.mark.parametrize(
    ("abstract", "summary"),
    [
        ("Background. Large models fail. More.", "Large models fail."),
        ("Context: Agents plan badly. More.", "Agents plan badly."),
        ("The U.S. Census grows. More.", "The U.S. Census grows."),
        ("Some, e.g. NeRF, are slow. More.", "Some, e.g. NeRF, are slow."),
        ("As in (J. Smith, 2020), we go. More.", "As in (J. Smith, 2020), we go."),
        ("We study agents. They act.", "We study agents."),
    ],
)
def test_the_summary_is_the_first_sentence_of_real_abstracts(abstract, summary):
    """Structured abstracts gave "Background.", abbreviations "The U.S."."""
    assert one_line(abstract) == summary


def test_a_late_papers_day_is_the_digests_first_and_its_sections(alice, agents, robots):
    """The first line says "first announced since" that day, and the "and N
    more" link of the late paper's section lists papers from it: from the
    period's day, the link left out the late papers it counted, and the line
    was untrue. Another section's link keeps the period's day."""
    Follow.objects.create(user=alice, topic=agents)
    Follow.objects.create(user=alice, topic=robots)
    last_due = datetime(2026, 7, 6, 8, tzinfo=UTC)
    sent_weekly_digest(alice, MONDAY - WEEK, last_due)
    (late,) = add_papers(agents, MONDAY - 2 * WEEK)
    PaperTopic.objects.filter(paper=late).update(created_at=last_due + WEEK / 2)
    add_papers(agents, MONDAY, count=2)
    add_papers(robots, MONDAY, count=3)

    plan = plan_digests([weekly(alice, max_papers=2, due=last_due + WEEK)])[alice.pk]

    assert [s["more"] for s in plan.sections] == [2, 2]
    [content] = shape_digests([plan], "https://m.example")
    assert content.since == MONDAY - 2 * WEEK
    agents_more, robots_more = (s.more_url for s in content.sections)
    assert agents_more.endswith(f"from={MONDAY - 2 * WEEK}")
    assert robots_more.endswith(f"from={MONDAY - WEEK}")


def test_a_withdrawn_paper_says_so_in_both_bodies(alice, agents):
    """A paper withdrawn before its digest went out is mailed as its row on the
    site shows it: marked withdrawn, not as new work to read."""
    Follow.objects.create(user=alice, topic=agents)
    add_papers(agents, MONDAY, title="Kept agents")
    [gone] = add_papers(agents, MONDAY, title="Withdrawn agents")
    Paper.objects.filter(pk=gone.pk).update(withdrawn=True)

    [content] = shape_digests(
        [plan_digests([weekly(alice)])[alice.pk]], "https://m.example"
    )
    rendered = render_digest(user=alice, content=content, digest_id=None)

    assert "* Withdrawn agents (withdrawn)\n" in rendered.text
    assert "* Kept agents\n" in rendered.text
    assert rendered.html.count("Withdrawn</span>") == 1


def test_each_paper_in_the_html_mail_is_a_heading_under_its_section(alice, agents):
    """A screen reader moves through a mail by its headings: the sections were
    headings, but their papers were paragraphs, so a reader went from one
    topic to the next and read every line between to find the next paper."""
    Follow.objects.create(user=alice, topic=agents)
    add_papers(agents, MONDAY, title="First agents")
    add_papers(agents, MONDAY, title="Second agents")

    [content] = shape_digests(
        [plan_digests([weekly(alice)])[alice.pk]], "https://m.example"
    )
    html = render_digest(user=alice, content=content, digest_id=None).html

    headings = re.findall(r"<(h[1-6])\b[^>]*>(?:<a [^>]*>)?([^<]*)", html)
    assert headings[0] == ("h2", "Agents")
    assert sorted(headings[1:]) == [("h3", "First agents"), ("h3", "Second agents")]
