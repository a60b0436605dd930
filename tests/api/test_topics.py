"""Topics: reading them, their papers, and staff writes validated as in admin."""

from __future__ import annotations

import time
from unittest import mock

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils.http import http_date

from accounts.models import User
from papers.models import Category
from tests.api.conftest import assert_error
from tests.clients import token_client
from tests.topics.factories import make_topic
from topics.curation import merge_topics
from topics.following import set_following
from topics.models import Topic
from topics.rules import RuleError
from topics.rules import compile_new_rule

pytestmark = pytest.mark.django_db

AGENTS = "/api/v1/topics/rl-for-llm-agents/"


def test_lists_active_topics_with_counts_and_momentum(anonymous, alice, bob, corpus):
    make_topic("Hidden", rule="ti:hidden", is_active=False)
    set_following(alice, corpus["agents"], True)
    set_following(bob, corpus["agents"], True)

    topics = anonymous.get("/api/v1/topics/").json()

    assert [t["slug"] for t in topics] == ["rl-for-llm-agents", "robot-learning"]
    agents = topics[0]
    assert agents["paper_count"] == 8
    assert agents["follower_count"] == 2
    assert topics[1]["follower_count"] == 0
    assert agents["momentum"]["recent"] == 8
    assert agents["links"]["papers"] == "http://testserver" + AGENTS + "papers/"


def test_topic_detail_has_glossary_series_and_related(anonymous, corpus):
    agents = Topic.objects.get(slug="rl-for-llm-agents")
    agents.definition = "Agents trained with reinforcement learning; not prompting."
    agents.save()

    topic = anonymous.get(AGENTS).json()

    assert topic["glossary"] == [{"term": "RL", "meaning": "Reinforcement Learning"}]
    # What belongs, as the topic page's "What belongs here" says it.
    assert topic["definition"] == agents.definition
    assert topic["related"] == [{"slug": "robot-learning", "name": "Robot Learning"}]
    weeks = topic["momentum"]["weeks"]
    assert len(weeks) == 16
    assert sum(week["papers"] for week in weeks) == 8
    assert topic["rule"] == "ti:agent"


def test_inactive_or_unknown_topics_are_404s(anonymous, corpus):
    make_topic("Hidden", rule="ti:hidden", is_active=False)
    for path in (
        "/api/v1/topics/hidden/",
        "/api/v1/topics/nope/",
        "/api/v1/topics/hidden/papers/",
    ):
        assert_error(anonymous.get(path), 404, "not_found")


def test_staff_read_an_inactive_topic_that_others_are_told_is_not_there(
    anonymous, as_alice, as_staff, corpus
):
    make_topic("Hidden", rule="ti:hidden", is_active=False)
    # Staff with no permission on topics, whom admin does not show them to.
    bare = token_client(
        User.objects.create_user("bare@example.com", "pw", is_staff=True)
    )

    # Read first by staff, whose body must not be served to the others.
    shown = as_staff.get("/api/v1/topics/hidden/")
    assert shown.status_code == 200, shown.content
    assert shown.json()["is_active"] is False
    assert shown["Cache-Control"] == "private, no-cache"

    for client in (anonymous, as_alice, bare):
        assert_error(client.get("/api/v1/topics/hidden/"), 404, "not_found")
        # Nor is the staff read's ETag current for them.
        answer = client.get("/api/v1/topics/hidden/", HTTP_IF_NONE_MATCH=shown["ETag"])
        assert_error(answer, 404, "not_found")
    # Its papers are a 404 for staff too: an inactive topic is not tagged.
    assert_error(as_staff.get("/api/v1/topics/hidden/papers/"), 404, "not_found")
    # An active topic reads the same to staff as to anyone.
    assert as_staff.get(AGENTS).json() == anonymous.get(AGENTS).json()


def test_staff_list_inactive_topics_when_they_ask(
    anonymous, as_alice, as_staff, corpus
):
    make_topic("Hidden", rule="ti:hidden", is_active=False)

    listed = as_staff.get("/api/v1/topics/", {"active": "false"})
    assert [t["slug"] for t in listed.json()] == ["hidden"]
    active = ["rl-for-llm-agents", "robot-learning"]
    for client in (anonymous, as_staff):
        for query in ({}, {"active": "true"}):
            answer = client.get("/api/v1/topics/", query)
            assert [t["slug"] for t in answer.json()] == active

    not_staff = {"active": "false"}
    assert_error(anonymous.get("/api/v1/topics/", not_staff), 401)
    assert_error(as_alice.get("/api/v1/topics/", not_staff), 403, "permission_denied")
    error = assert_error(as_staff.get("/api/v1/topics/", {"active": "no"}), 400)
    assert set(error["fields"]) == {"active"}


def test_a_merged_away_slug_leads_to_the_topic_it_went_into(
    anonymous, as_alice, corpus
):
    agents = Topic.objects.get(slug="rl-for-llm-agents")
    with mock.patch("topics.tasks.retag_topic.apply_async"):
        merge_topics(agents, [Topic.objects.get(slug="robot-learning")])
    old = "/api/v1/topics/robot-learning/"

    detail = anonymous.get(old)
    papers = anonymous.get(old + "papers/", {"page_size": 3})
    filtered = anonymous.get("/api/v1/papers/", {"topic": "robot-learning"})
    followed = as_alice.post(
        "/api/v1/me/follows/", {"topic": "robot-learning"}, format="json"
    )

    # As the topic's page and feed do: for good, the query string kept.
    assert detail.status_code == papers.status_code == 301
    assert detail["Location"] == AGENTS
    assert papers["Location"] == AGENTS + "papers/?page_size=3"
    assert filtered.status_code == 200
    everything = anonymous.get(AGENTS + "papers/", {"page_size": 100}).json()
    assert filtered.json()["results"] == everything["results"][:20]
    assert followed.status_code == 201
    assert followed.json()["topic"]["slug"] == "rl-for-llm-agents"
    # A poller's date or `*` is no 304 there: the address has moved.
    for validator in (
        {"HTTP_IF_MODIFIED_SINCE": http_date(time.time())},
        {"HTTP_IF_NONE_MATCH": "*"},
    ):
        assert anonymous.get(old, **validator).status_code == 301


def test_topic_papers_take_the_paper_filters(anonymous, corpus):
    url = AGENTS + "papers/"
    everything = anonymous.get(url, {"page_size": 100}).json()["results"]
    assert len(everything) == 8
    robots = anonymous.get(url, {"q": "robot"}).json()["results"]
    assert [p["arxiv_id"] for p in robots] == ["2606.00100"]
    first = anonymous.get(url, {"page_size": 5}).json()
    assert len(first["results"]) == 5
    assert len(anonymous.get(first["next"]).json()["results"]) == 3
    error = assert_error(anonymous.get(url, {"topic": "robot-learning"}), 400)
    assert error["fields"]["topic"][0]["code"] == "unknown_parameter"


@pytest.mark.parametrize(
    "url", [AGENTS + "papers/", "/api/v1/papers/?topic=rl-for-llm-agents"]
)
def test_topic_papers_are_read_by_the_topics_id(anonymous, corpus, url):
    """Joined to its slug, the planner could not know how many papers the
    topic holds, and read every paper of a large one to sort them (22,815 of
    100,000: 430 ms a page); by its id it reads the newest from their index."""
    cache.clear()
    with CaptureQueriesContext(connection) as captured:
        response = anonymous.get(url)

    assert len(response.json()["results"]) == 8
    topic_id = corpus["agents"].pk
    page = next(q["sql"] for q in captured if 'FROM "papers_paper"' in q["sql"])
    assert f'"topics_papertopic"."topic_id" = {topic_id}' in page
    assert '"topics_topic"' not in page


def test_follower_count_changes_move_the_etag(anonymous, alice, corpus):
    first = anonymous.get("/api/v1/topics/")
    set_following(alice, corpus["agents"], True)
    again = anonymous.get("/api/v1/topics/", HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 200
    assert again.json()[0]["follower_count"] == 1
    alice.delete()  # follows cascade, no follow function called
    last = anonymous.get("/api/v1/topics/", HTTP_IF_NONE_MATCH=again["ETag"])
    assert last.status_code == 200
    assert last.json()[0]["follower_count"] == 0


def test_staff_creates_a_topic_and_its_papers_are_tagged_after_commit(
    as_staff, corpus, django_capture_on_commit_callbacks
):
    Category.objects.get_or_create(code="cs.AI")
    body = {
        "name": "Robots again",
        "slug": "robots-again",
        "rule": 'ti:robot OR abs:"robot arm"',
        "categories": ["cs.AI"],
        "related": ["rl-for-llm-agents"],
        "glossary": "RA: Robots Again",
        "definition": "Robots that learn; not robots programmed by hand.",
    }
    with django_capture_on_commit_callbacks() as callbacks:
        response = as_staff.post("/api/v1/topics/", body, format="json")

    assert response.status_code == 201, response.content
    topic = Topic.objects.get(slug="robots-again")
    assert topic.definition == "Robots that learn; not robots programmed by hand."
    assert response.json()["definition"] == topic.definition
    assert topic.retag_requested_at is not None
    assert list(topic.categories.values_list("code", flat=True)) == ["cs.AI"]
    assert response.json()["related"] == [
        {"slug": "rl-for-llm-agents", "name": "RL for LLM Agents"}
    ]
    assert len(callbacks) >= 1  # the re-tag, sent once the transaction commits


@pytest.mark.parametrize(
    "rule",
    [
        'abs:"unclosed',
        "ti:agent AND",
        "(ti:agent",
        "nope:agent",
        "agent and robot",
        "ti:agent OR cat:cs.Al",  # a typo of cs.AI: matched nothing, silently
    ],
)
def test_an_invalid_rule_is_refused_with_admins_message_and_its_position(
    as_staff, corpus, rule
):
    with pytest.raises(RuleError) as admin_error:
        compile_new_rule(rule)

    response = as_staff.patch(AGENTS, {"rule": rule}, format="json")

    error = assert_error(response, 400, "invalid")
    assert error["fields"]["rule"] == [
        {
            "code": "invalid_rule",
            "message": f"Invalid rule: {admin_error.value}",
            "position": admin_error.value.position,
        }
    ]
    assert Topic.objects.get(slug="rl-for-llm-agents").rule == "ti:agent"


def test_changing_the_rule_retags_and_moves_the_etag(
    as_staff, anonymous, corpus, django_capture_on_commit_callbacks
):
    before = anonymous.get(AGENTS)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = as_staff.patch(AGENTS, {"rule": "ti:robot"}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["rule"] == "ti:robot"
    assert Topic.objects.get(slug="rl-for-llm-agents").retag_requested_at
    # Commit-time work: the content version moves on (papers.versions); the
    # re-tag task is not sent to the broker from a test.
    for callback in callbacks:
        if callback.__code__.co_filename.endswith("versions.py"):
            callback()
    after = anonymous.get(AGENTS, HTTP_IF_NONE_MATCH=before["ETag"])
    assert after.status_code == 200
    assert after.json()["rule"] == "ti:robot"


def test_changing_only_the_description_does_not_retag(as_staff, corpus):
    response = as_staff.patch(AGENTS, {"description": "Agents."}, format="json")
    assert response.status_code == 200
    assert Topic.objects.get(slug="rl-for-llm-agents").retag_requested_at is None


def test_staff_can_reactivate_an_inactive_topic(as_staff, corpus):
    make_topic("Hidden", rule="ti:hidden", is_active=False)
    response = as_staff.patch(
        "/api/v1/topics/hidden/", {"is_active": True}, format="json"
    )
    assert response.status_code == 200
    assert Topic.objects.get(slug="hidden").retag_requested_at is not None


def test_put_replaces_the_topic_and_patch_changes_what_it_sends(as_staff, corpus):
    """A PUT that leaves out the description and categories clears them, as
    for a new topic; it used to keep them, as PATCH does."""
    with mock.patch("topics.tasks.retag_topic.apply_async"):
        as_staff.patch(
            AGENTS, {"description": "Agents.", "categories": ["cs.LG"]}, format="json"
        )
        kept = as_staff.patch(AGENTS, {"definition": "What belongs."}, format="json")
        replaced = as_staff.put(
            AGENTS,
            {
                "name": "RL for LLM Agents",
                "slug": "rl-for-llm-agents",
                "rule": "ti:agent",
            },
            format="json",
        )

    assert (kept.json()["description"], kept.json()["categories"]) == (
        "Agents.",
        ["cs.LG"],
    )
    body = replaced.json()
    assert (body["description"], body["definition"], body["categories"]) == ("", "", [])
    assert body["is_active"] is True


def test_a_write_with_a_stale_if_match_is_a_412_and_writes_nothing(
    anonymous, as_staff, corpus
):
    """Two curators read the topic; the second's edit, made on what the first
    has since changed, is refused rather than overwriting it (RFC 9110 13.1.1)."""
    read = anonymous.get(AGENTS)["ETag"]
    with mock.patch("topics.tasks.retag_topic.apply_async"):
        first = as_staff.patch(
            AGENTS, {"description": "First."}, format="json", HTTP_IF_MATCH=read
        )
        stale_patch = as_staff.patch(
            AGENTS, {"description": "Second."}, format="json", HTTP_IF_MATCH=read
        )
        stale_put = as_staff.put(
            AGENTS,
            {"name": "Put", "slug": "rl-for-llm-agents", "rule": "ti:put"},
            format="json",
            HTTP_IF_MATCH=f'"other", {read}',
        )
        weak = as_staff.patch(
            AGENTS, {"description": "Weak."}, format="json", HTTP_IF_MATCH="W/" + read
        )

    assert first.status_code == 200, first.content
    for refused in (stale_patch, stale_put, weak):
        assert_error(refused, 412, "precondition_failed")
    topic = Topic.objects.get(pk=corpus["agents"].pk)
    assert (topic.description, topic.name, topic.rule) == (
        "First.",
        "RL for LLM Agents",
        "ti:agent",
    )


def test_if_match_compares_the_topics_own_fields_not_its_followers(
    anonymous, as_staff, alice, corpus
):
    """A topic's ETag moves with its follower count (and any follow anywhere):
    a reader's follow changes none of what a curator writes, so it does not
    refuse the curator's edit."""
    read = as_staff.get(AGENTS)["ETag"]
    set_following(alice, corpus["robots"], True)
    set_following(alice, corpus["agents"], True)
    assert as_staff.get(AGENTS)["ETag"] != read

    with mock.patch("topics.tasks.retag_topic.apply_async"):
        edited = as_staff.patch(
            AGENTS, {"definition": "Edited."}, format="json", HTTP_IF_MATCH=read
        )
        anyone = as_staff.patch(
            AGENTS, {"glossary": ""}, format="json", HTTP_IF_MATCH="*"
        )
        unconditional = as_staff.patch(AGENTS, {"description": "x"}, format="json")

    assert edited.status_code == 200, edited.content
    assert anyone.status_code == 200, anyone.content
    assert unconditional.status_code == 200, unconditional.content


def test_a_write_with_an_if_unmodified_since_before_the_last_change_is_a_412(
    anonymous, as_staff, corpus
):
    last_modified = anonymous.get(AGENTS)["Last-Modified"]
    before = http_date(time.time() - 3600)
    with mock.patch("topics.tasks.retag_topic.apply_async"):
        stale = as_staff.patch(
            AGENTS,
            {"description": "Stale."},
            format="json",
            HTTP_IF_UNMODIFIED_SINCE=before,
        )
        current = as_staff.patch(
            AGENTS,
            {"description": "Current."},
            format="json",
            HTTP_IF_UNMODIFIED_SINCE=last_modified,
        )

    assert_error(stale, 412, "precondition_failed")
    assert current.status_code == 200, current.content
    assert Topic.objects.get(pk=corpus["agents"].pk).description == "Current."


def test_if_match_holds_when_the_cache_lost_the_read(anonymous, as_staff, corpus):
    """The ETag itself says what the read showed of the topic's fields: a
    cache that evicted its entries since (or is down, tests/integration/
    test_outages.py) neither refuses an edit made on a current read nor lets
    one made on a stale read through. It used to refuse both."""
    read = anonymous.get(AGENTS)["ETag"]
    cache.clear()
    with mock.patch("topics.tasks.retag_topic.apply_async"):
        current = as_staff.patch(
            AGENTS, {"description": "Current."}, format="json", HTTP_IF_MATCH=read
        )
        cache.clear()
        stale = as_staff.patch(
            AGENTS, {"description": "Stale."}, format="json", HTTP_IF_MATCH=read
        )

    assert current.status_code == 200, current.content
    assert_error(stale, 412, "precondition_failed")
    assert Topic.objects.get(pk=corpus["agents"].pk).description == "Current."


def test_a_write_answers_with_the_validators_of_its_body(anonymous, as_staff, corpus):
    """A curator edits again on what a write answered, without reading the
    topic back first: its ETag and Last-Modified are the next write's
    If-Match and If-Unmodified-Since, and an answer since overtaken is a 412."""
    read = anonymous.get(AGENTS)["ETag"]
    with mock.patch("topics.tasks.retag_topic.apply_async"):
        first = as_staff.patch(
            AGENTS, {"description": "First."}, format="json", HTTP_IF_MATCH=read
        )
        second = as_staff.patch(
            AGENTS,
            {"description": "Second."},
            format="json",
            HTTP_IF_MATCH=first["ETag"],
        )
        overtaken = as_staff.put(
            AGENTS,
            {"name": "Put", "slug": "rl-for-llm-agents", "rule": "ti:put"},
            format="json",
            HTTP_IF_MATCH=first["ETag"],
        )
        dated = as_staff.patch(
            AGENTS,
            {"definition": "Dated."},
            format="json",
            HTTP_IF_UNMODIFIED_SINCE=second["Last-Modified"],
        )

    assert second.status_code == 200, second.content
    assert_error(overtaken, 412, "precondition_failed")
    assert dated.status_code == 200, dated.content
    assert len({read, first["ETag"], second["ETag"], dated["ETag"]}) == 4
    # The body answered is the topic's at its address (RFC 9110 8.7).
    assert second["Content-Location"] == "http://testserver" + AGENTS
    topic = Topic.objects.get(pk=corpus["agents"].pk)
    assert (topic.description, topic.definition, topic.rule) == (
        "Second.",
        "Dated.",
        "ti:agent",
    )


def test_a_write_that_moves_the_topic_answers_for_its_new_address(as_staff, corpus):
    with mock.patch("topics.tasks.retag_topic.apply_async"):
        created = as_staff.post(
            "/api/v1/topics/",
            {"name": "New", "slug": "new", "rule": "ti:x"},
            format="json",
        )
        moved = as_staff.patch(
            "/api/v1/topics/new/",
            {"slug": "newer"},
            format="json",
            HTTP_IF_MATCH=created["ETag"],
        )
        edited = as_staff.patch(
            moved["Content-Location"],
            {"description": "Moved."},
            format="json",
            HTTP_IF_MATCH=moved["ETag"],
        )

    assert created.status_code == 201, created.content
    assert created["Content-Location"] == "http://testserver/api/v1/topics/new/"
    assert created["Location"] == created["Content-Location"]  # RFC 9110 15.3.2
    assert not moved.has_header("Location")
    assert moved["Content-Location"] == "http://testserver/api/v1/topics/newer/"
    assert edited.status_code == 200, edited.content
    assert Topic.objects.get(slug="newer").description == "Moved."


NEW = {"name": "New", "slug": "new", "rule": "ti:x"}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({**NEW, "slug": "not a slug"}, "slug"),
        ({**NEW, "slug": "new\n"}, "slug"),
        ({"name": "New", "slug": "new"}, "rule"),
        ({**NEW, "rule": "   "}, "rule"),
        ({**NEW, "categories": "cs.AI"}, "categories"),
        ({**NEW, "categories": {"cs.AI": 1}}, "categories"),
        ({**NEW, "categories": [7]}, "categories"),
        ({**NEW, "is_active": "perhaps"}, "is_active"),
        ({**NEW, "is_active": 1}, "is_active"),
        ({**NEW, "name": 7}, "name"),
        ({**NEW, "name": " \t"}, "name"),
        ({**NEW, "name": "x" * 121}, "name"),
        ({**NEW, "name": "x" * 120 + " "}, "name"),
        # Control characters no feed or page can show, as admin refuses them.
        ({**NEW, "name": "Agents\x1b[0m"}, "name"),
        ({**NEW, "description": "Tools\x07 and plans"}, "description"),
    ],
)
def test_bad_topic_input_names_the_field(as_staff, corpus, body, field):
    error = assert_error(as_staff.post("/api/v1/topics/", body, format="json"), 400)
    assert field in error["fields"], error


def test_topic_names_are_stored_without_surrounding_whitespace(as_staff, corpus):
    response = as_staff.post(
        "/api/v1/topics/", {**NEW, "name": "  New topic "}, format="json"
    )

    assert response.status_code == 201, response.content
    assert Topic.objects.get(slug="new").name == "New topic"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({**NEW, "name": "RL for LLM Agents"}, "name"),
        ({**NEW, "slug": "robot-learning"}, "slug"),
    ],
)
def test_a_name_or_slug_another_topic_has_is_a_conflict(as_staff, corpus, body, field):
    error = assert_error(as_staff.post("/api/v1/topics/", body, format="json"), 409)
    assert error["code"] == "conflict"
    assert error["fields"][field][0]["code"] == "unique"
    assert not Topic.objects.filter(name="New").exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({**NEW, "categories": ["zz.ZZ"]}, "categories"),
        ({**NEW, "related": ["no-such-topic"]}, "related"),
    ],
)
def test_naming_a_category_or_topic_that_does_not_exist_is_a_404(
    as_staff, corpus, body, field
):
    error = assert_error(as_staff.post("/api/v1/topics/", body, format="json"), 404)
    assert error["code"] == "not_found"
    assert error["fields"][field][0]["code"] == "does_not_exist"


def test_a_malformed_field_beside_a_missing_row_is_a_400(as_staff, corpus):
    body = {**NEW, "categories": ["zz.ZZ"], "is_active": "perhaps"}
    error = assert_error(as_staff.post("/api/v1/topics/", body, format="json"), 400)
    assert set(error["fields"]) == {"categories", "is_active"}


def test_retag_is_queued_for_staff(
    as_staff, corpus, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        response = as_staff.post(AGENTS + "retag/")
    assert response.status_code == 202
    assert response.json()["slug"] == "rl-for-llm-agents"
    assert response.json()["retag_requested_at"]
    assert len(callbacks) == 1


def test_a_topic_cannot_be_made_related_to_itself(as_staff, corpus):
    response = as_staff.patch(AGENTS, {"related": ["rl-for-llm-agents"]}, format="json")

    error = assert_error(response, 400, "invalid")
    assert error["fields"]["related"][0]["message"] == (
        "A topic cannot be related to itself."
    )
    agents = Topic.objects.get(slug="rl-for-llm-agents")
    assert agents not in agents.related.all()


def test_a_stored_rule_naming_no_arxiv_category_keeps_its_topic_editable(
    as_staff, corpus
):
    Topic.objects.filter(slug="rl-for-llm-agents").update(rule="ti:agent OR cat:cs.Al")

    response = as_staff.patch(
        AGENTS,
        {"description": "Agents.", "rule": "ti:agent OR cat:cs.Al", "is_active": True},
        format="json",
    )

    assert response.status_code == 200, response.content
