"""Readers' "Not relevant?" flags, and how a paper's page says why it is in a topic."""

from __future__ import annotations

import html
import re

import pytest

from accounts.deletion import delete_account
from papers.ingest.upsert import upsert_records
from papers.models import Paper
from tests.clients import signed_in
from tests.papers.factories import paper_record
from tests.test_pages import MAX_PAGE_QUERIES
from tests.topics.factories import make_topic
from topics.curation import pin_paper
from topics.flags import FlagResult
from topics.flags import flag_not_relevant
from topics.limits import parse_rate
from topics.limits import take
from topics.models import PaperTopic
from topics.models import RelevanceFlag
from topics.models import ReviewItem
from topics.models import TopicExclusion
from topics.tagging import tag_papers

pytestmark = pytest.mark.django_db

FLAGGED = "Thanks — a curator will review whether this paper belongs in Agents."


@pytest.fixture
def topic():
    """Agents: three rule-tagged papers, one the model added, one pinned, and
    a robot paper in no topic."""
    agents = make_topic("Agents", rule="ti:agent")
    records = [
        paper_record("2606.00001", title="An agent"),
        paper_record("2606.00002", title="Agent two"),
        paper_record("2606.00003", title="Agent three"),
        paper_record("2606.00004", title="Planning with language models"),
        paper_record("2606.00005", title="Curated classic"),
        paper_record("2606.00006", title="A robot"),
    ]
    tag_papers(upsert_records(records).changed_ids)
    PaperTopic.objects.filter(topic=agents, paper__arxiv_id="2606.00001").update(
        score=0.87
    )
    PaperTopic.objects.create(
        topic=agents,
        paper=paper("2606.00004"),
        source=PaperTopic.Source.MODEL,
        score=0.912,
    )
    pin_paper(agents, paper("2606.00005"))
    return agents


def paper(arxiv_id: str) -> Paper:
    return Paper.objects.get(arxiv_id=arxiv_id)


def flag_url(arxiv_id: str, slug: str = "agents") -> str:
    return f"/topics/{slug}/papers/{arxiv_id}/not-relevant/"


def membership(topic) -> set[tuple[str, str]]:
    return set(topic.paper_topics.values_list("paper__arxiv_id", "source"))


def review_item(topic, arxiv_id: str) -> ReviewItem:
    return ReviewItem.objects.get(topic=topic, paper__arxiv_id=arxiv_id)


def messages_of(response) -> list[str]:
    """The messages the page shows (in its slot: papers.slots)."""
    shown = re.search(r'<ul class="messages">(.*?)</ul>', response.text, re.S)
    found = re.findall(r"<li[^>]*>(.*?)</li>", shown.group(1)) if shown else []
    return [html.unescape(message) for message in found]


def last_message(response) -> str:
    # Earlier posts in a test leave their messages unread until this page.
    return messages_of(response)[-1]


# FLAGGING
# ------------------------------------------------------------------------------


def test_reader_flags_a_tag_for_review_without_changing_membership(topic, reader):
    before = membership(topic)

    response = reader.post(flag_url("2606.00001"), follow=True)

    assert response.redirect_chain == [("/papers/2606.00001/", 302)]
    assert messages_of(response) == [FLAGGED]
    assert RelevanceFlag.objects.filter(topic=topic).count() == 1
    item = review_item(topic, "2606.00001")
    assert item.flags == 1
    assert item.rule_matched is True
    assert item.rule_terms == ["ti:agent"]
    assert item.score == 0.87
    assert item.vetoed is False
    assert membership(topic) == before
    assert not TopicExclusion.objects.exists()


def test_flagging_leaves_cached_pages_alone(
    topic, alice, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        result = flag_not_relevant(alice, topic, paper("2606.00001"))

    assert result == FlagResult.FLAGGED
    # Only the reader's own state moves: no content_changed(), no retagging.
    assert [callback.__qualname__ for callback in callbacks] == [
        "reader_changed.<locals>.<lambda>"
    ]


def test_a_curators_decision_clears_the_readers_flag_on_their_page(topic, reader):
    reader.post(flag_url("2606.00001"))
    assert "You flagged this" in reader.get("/papers/2606.00001/").text

    pin_paper(topic, paper("2606.00001"))  # decided: the flag is resolved

    assert "You flagged this" not in reader.get("/papers/2606.00001/").text


def test_flagging_twice_is_already_flagged_and_counts_once(topic, reader):
    reader.post(flag_url("2606.00001"))

    response = reader.post(flag_url("2606.00001"), follow=True)

    assert last_message(response) == "You already flagged this."
    assert RelevanceFlag.objects.count() == 1
    assert review_item(topic, "2606.00001").flags == 1


def test_flags_from_two_readers_count_two(topic, reader, bob):
    other = signed_in(bob)

    reader.post(flag_url("2606.00001"))
    other.post(flag_url("2606.00001"))

    assert review_item(topic, "2606.00001").flags == 2


def test_a_deleted_readers_flags_leave_the_queue_with_them(
    topic, alice, bob, django_capture_on_commit_callbacks
):
    flag_not_relevant(alice, topic, paper("2606.00001"))
    flag_not_relevant(bob, topic, paper("2606.00001"))
    flag_not_relevant(alice, topic, paper("2606.00002"))

    with django_capture_on_commit_callbacks(execute=True):
        delete_account(user=alice)

    # Bob's flag still counts; the item queued only for Alice's is gone.
    assert review_item(topic, "2606.00001").flags == 1
    assert not ReviewItem.objects.filter(topic=topic, paper__arxiv_id="2606.00002")


def test_a_flag_keeps_an_existing_review_items_fields(topic, reader):
    ReviewItem.objects.create(
        topic=topic,
        paper=paper("2606.00001"),
        score=0.12,
        rule_terms=["ti:agent"],
        rule_matched=True,
        vetoed=False,
    )

    reader.post(flag_url("2606.00001"))

    item = review_item(topic, "2606.00001")
    assert (item.flags, item.score, item.rule_matched) == (1, 0.12, True)


def test_a_flagged_model_tag_is_queued_with_its_score_and_no_rule(topic, reader):
    reader.post(flag_url("2606.00004"))

    item = review_item(topic, "2606.00004")
    assert (item.flags, item.score, item.rule_matched, item.rule_terms) == (
        1,
        0.912,
        False,
        [],
    )
    assert ("2606.00004", "model") in membership(topic)


def test_a_paper_not_in_the_topic_cannot_be_flagged(topic, reader):
    response = reader.post(flag_url("2606.00006"), follow=True)

    assert messages_of(response) == ["Only papers in the topic can be flagged."]
    assert not RelevanceFlag.objects.exists()
    assert not ReviewItem.objects.exists()


def test_a_versioned_id_flags_the_paper(topic, reader):
    response = reader.post(flag_url("2606.00001v1"))

    assert response.status_code == 302
    assert review_item(topic, "2606.00001").flags == 1


# THE ENDPOINT
# ------------------------------------------------------------------------------


def test_get_is_not_allowed(topic, reader):
    assert reader.get(flag_url("2606.00001")).status_code == 405
    assert not RelevanceFlag.objects.exists()


def test_visitor_is_sent_to_log_in_and_back_to_the_paper(topic, client):
    response = client.post(flag_url("2606.00001"))

    assert response.status_code == 302
    assert response.url == "/accounts/login/?next=/papers/2606.00001/"
    assert not RelevanceFlag.objects.exists()


@pytest.mark.parametrize(
    "url",
    [
        flag_url("2606.00001", slug="nothing-here"),
        flag_url("2699.99999"),
        flag_url("not-an-id"),
    ],
)
def test_unknown_topic_or_paper_is_404(topic, reader, url):
    assert reader.post(url).status_code == 404


def test_a_former_slug_flags_the_topic_it_leads_to(topic, reader):
    """A paper's page open from before the topic's new slug (or a merge)."""
    topic.slug = "llm-agents"
    topic.save()

    response = reader.post(flag_url("2606.00001", slug="agents"))

    assert response.url == "/papers/2606.00001/"
    assert review_item(topic, "2606.00001").flags == 1


def test_inactive_topic_is_404(topic, reader):
    topic.is_active = False
    topic.save()

    assert reader.post(flag_url("2606.00001")).status_code == 404


@pytest.mark.parametrize(
    "next_url", ["https://evil.example/", "//evil.example/x", "javascript:alert(1)"]
)
def test_hostile_next_is_ignored(topic, reader, next_url):
    response = reader.post(flag_url("2606.00001"), {"next": next_url})

    assert response.url == "/papers/2606.00001/"


def test_safe_next_is_followed(topic, reader):
    response = reader.post(flag_url("2606.00001"), {"next": "/papers/2606.00001v1/"})

    assert response.url == "/papers/2606.00001v1/"


def test_csrf_is_required(topic, alice):
    strict = signed_in(alice, enforce_csrf_checks=True)

    assert strict.post(flag_url("2606.00001")).status_code == 403
    assert not RelevanceFlag.objects.exists()


# RATE LIMIT
# ------------------------------------------------------------------------------


def test_rate_limit_refuses_the_next_new_flag_and_creates_nothing(
    topic, reader, settings
):
    settings.MOMENTUM_FLAG_RATE = "2/hour"
    reader.post(flag_url("2606.00001"))
    reader.post(flag_url("2606.00002"))

    response = reader.post(flag_url("2606.00003"), follow=True)

    assert response.redirect_chain == [("/papers/2606.00003/", 302)]
    message = last_message(response)
    assert message.startswith("Too many flags; try again in ")
    assert message.endswith((" minute.", " minutes."))
    assert RelevanceFlag.objects.count() == 2
    assert not ReviewItem.objects.filter(paper__arxiv_id="2606.00003").exists()


def test_repeated_flags_cost_no_budget(topic, reader, settings):
    settings.MOMENTUM_FLAG_RATE = "2/hour"
    reader.post(flag_url("2606.00001"))
    reader.post(flag_url("2606.00001"))
    reader.post(flag_url("2606.00006"))  # not in the topic: no budget either

    reader.post(flag_url("2606.00002"))

    assert review_item(topic, "2606.00002").flags == 1


def test_rate_limit_is_per_reader(topic, reader, bob, settings):
    settings.MOMENTUM_FLAG_RATE = "1/hour"
    other = signed_in(bob)
    reader.post(flag_url("2606.00001"))

    other.post(flag_url("2606.00001"))

    assert review_item(topic, "2606.00001").flags == 2


def test_flag_and_question_budgets_are_separate():
    rate = parse_rate("1/hour")
    assert take("user:1", rate, prefix="flag") == 0
    assert take("user:1", rate, prefix="flag") > 0

    assert take("user:1", rate) == 0  # questions: the "ask" prefix


# THE PAPER PAGE
# ------------------------------------------------------------------------------


def test_paper_page_says_why_each_tag_is_there(topic, client):
    rule = client.get("/papers/2606.00002/").text
    model = client.get("/papers/2606.00004/").text
    pinned = client.get("/papers/2606.00005/").text

    assert "matched <q>agent</q> in the title" in rule
    assert "(model" not in rule
    assert "suggested by the topic's model (score 0.91)" in model
    assert "pinned by a curator" in pinned


def test_paper_page_shows_the_models_score_beside_a_rule_match(topic, client):
    page = client.get("/papers/2606.00001/").text

    assert "matched <q>agent</q> in the title (model 0.87)" in page


# The flag, saying what it does and for which topic.
FLAG_BUTTON = re.compile(
    r"<button[^>]*>Not relevant to [^<?]+\? Tell the curators</button>"
)


def test_reader_sees_the_flag_button_then_that_they_flagged(topic, reader):
    page = reader.get("/papers/2606.00001/").text
    assert 'action="/topics/agents/papers/2606.00001/not-relevant/"' in page
    # What it does is on the button, not in a tooltip a phone never shows.
    assert FLAG_BUTTON.findall(page) == [
        '<button type="submit" class="secondary small">'
        "Not relevant to Agents? Tell the curators</button>"
    ]

    page = reader.post(flag_url("2606.00001"), follow=True).text

    assert "You flagged this" in page
    assert not FLAG_BUTTON.search(page)
    assert FLAGGED in page


def test_another_readers_flag_leaves_the_button(topic, reader, bob):
    flag_not_relevant(bob, topic, paper("2606.00001"))

    page = reader.get("/papers/2606.00001/").text

    assert FLAG_BUTTON.search(page)
    assert "You flagged this" not in page


def test_visitor_sees_no_flag_button(topic, client):
    page = client.get("/papers/2606.00001/").text

    assert "Not relevant" not in page
    assert "not-relevant/" not in page


def test_paper_page_queries_stay_within_the_guard(
    topic, alice, reader, django_assert_max_num_queries
):
    make_topic("More agents", rule="ti:agent", slug="more-agents")
    tag_papers([paper("2606.00001").pk])
    flag_not_relevant(alice, topic, paper("2606.00001"))

    with django_assert_max_num_queries(MAX_PAGE_QUERIES):
        response = reader.get("/papers/2606.00001/")

    assert response.text.count("You flagged this") == 1
    assert len(FLAG_BUTTON.findall(response.text)) == 1


# TOPIC PAGE AND API
# ------------------------------------------------------------------------------


def test_a_reader_flags_a_paper_from_the_topic_page_and_comes_back_to_it(
    topic, reader, client
):
    """The reader reading a topic is the one who notices a paper that does not
    belong: each row's drawer, beside why the paper is in the topic, offers
    the flag, and says what it does."""
    page = reader.get("/topics/agents/").text

    assert len(FLAG_BUTTON.findall(page)) == 5
    assert 'action="/topics/agents/papers/2606.00002/not-relevant/"' in page
    assert "Not relevant" not in client.get("/topics/agents/").text

    response = reader.post(
        flag_url("2606.00002"), {"next": "/topics/agents/"}, follow=True
    )

    assert response.redirect_chain == [("/topics/agents/", 302)]
    assert FLAGGED in messages_of(response)
    page = reader.get("/topics/agents/").text
    assert page.count("You flagged this") == 1
    assert len(FLAG_BUTTON.findall(page)) == 4


def test_a_flag_from_a_row_comes_back_to_that_row(topic, reader):
    """A paper flagged far down a topic's list came back to the top of the
    list, its first row selected: the reader had lost their place, and from
    the keyboard pressed J back down to it. It comes back to its row, as the
    row's Save and thumbs do; a paper's own page comes back to the page."""
    action = re.escape(flag_url("2606.00002"))
    back_to = re.compile(
        rf'action="{action}" class="flag">.*?name="next" value="([^"]*)"', re.S
    )

    assert back_to.findall(reader.get("/topics/agents/").text) == [
        "/topics/agents/#paper-2606.00002"
    ]
    assert back_to.findall(reader.get("/papers/2606.00002/").text) == [
        "/papers/2606.00002/"
    ]
    response = reader.post(
        flag_url("2606.00002"), {"next": "/topics/agents/#paper-2606.00002"}
    )
    assert response.url == "/topics/agents/#paper-2606.00002"


def test_topic_page_with_flags_stays_within_the_guard(
    topic, alice, reader, client, django_assert_max_num_queries
):
    flag_not_relevant(alice, topic, paper("2606.00001"))
    client.get("/topics/agents/")  # rendered for everyone, and cached

    with django_assert_max_num_queries(MAX_PAGE_QUERIES):
        page = reader.get("/topics/agents/").text

    assert page.count("You flagged this") == 1
    assert len(FLAG_BUTTON.findall(page)) == 4


def test_topic_page_marks_papers_the_model_added(topic, client):
    page = client.get("/topics/agents/").text

    # A rule match has none, whatever its score (2606.00001's 0.87).
    scores = re.findall(r'<span class="model-score">([^<]*)</span>', page)
    assert scores == ["· suggested by the topic's model (score 0.91)"]


def test_api_gives_each_tags_source_and_score(topic, client):
    rule = client.get("/api/v1/papers/2606.00001/").json()["topics"]
    model = client.get("/api/v1/papers/2606.00004/").json()["topics"]
    pinned = client.get("/api/v1/papers/2606.00005/").json()["topics"]

    assert rule == [
        {
            "slug": "agents",
            "name": "Agents",
            "source": "rule",
            "matched_terms": ["ti:agent"],
            "score": 0.87,
        }
    ]
    assert (model[0]["source"], model[0]["score"]) == ("model", 0.912)
    assert (pinned[0]["source"], pinned[0]["score"]) == ("pin", None)


# Where curators find the flags


def test_staff_see_how_many_papers_readers_flagged_on_the_topic_page(
    topic, alice, staff, django_assert_max_num_queries
):
    """A rule-only topic's queue holds only flags: its page said nothing to
    staff of a flagged paper ("N awaiting review" counts the band alone)."""
    flag_not_relevant(alice, topic, paper("2606.00001"))
    url = topic.get_absolute_url()
    reader = signed_in(alice).get(url).text  # rendered, and cached for everyone
    client = signed_in(staff)

    with django_assert_max_num_queries(MAX_PAGE_QUERIES):
        page = client.get(url).text

    assert "awaiting review" not in page
    assert (
        f'href="/admin/topics/reviewitem/?topic__id__exact={topic.pk}'
        '&amp;kind=flagged">1 flagged by readers</a>'
    ) in page
    assert "flagged by readers" not in reader


def test_each_flag_in_admin_leads_to_its_paper_in_the_review_queue(
    topic, alice, admin_client
):
    """Where Include and Exclude are: the flags list was a dead end."""
    flag_not_relevant(alice, topic, paper("2606.00002"))
    flag = RelevanceFlag.objects.get()
    queue = f"/admin/topics/reviewitem/?topic__id__exact={topic.pk}&amp;q=2606.00002"

    listing = admin_client.get("/admin/topics/relevanceflag/").text
    record = admin_client.get(f"/admin/topics/relevanceflag/{flag.pk}/change/").text
    found = admin_client.get(html.unescape(queue))

    assert f'<a href="{queue}">Include or exclude in the review queue</a>' in listing
    assert f'<a href="{queue}">Include or exclude in the review queue</a>' in record
    assert [item.paper.arxiv_id for item in found.context["cl"].result_list] == [
        "2606.00002"
    ]
    assert "formaction=" in found.text
