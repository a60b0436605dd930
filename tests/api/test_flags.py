"""POST /api/v1/topics/<slug>/papers/<arxiv_id>/not-relevant/: a reader's flag on
a paper's tag, as the paper page's "Not relevant?" button (topics.flags)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.api.conftest import assert_error
from topics.models import PaperTopic
from topics.models import RelevanceFlag
from topics.models import ReviewItem

pytestmark = pytest.mark.django_db

AGENTS = "rl-for-llm-agents"


def flag_url(arxiv_id: str, slug: str = AGENTS) -> str:
    return f"/api/v1/topics/{slug}/papers/{arxiv_id}/not-relevant/"


def membership() -> set[tuple[str, str, str]]:
    return set(
        PaperTopic.objects.values_list("topic__slug", "paper__arxiv_id", "source")
    )


def flags_on(arxiv_id: str, slug: str = AGENTS) -> int:
    return ReviewItem.objects.get(topic__slug=slug, paper__arxiv_id=arxiv_id).flags


# FLAGGING
# ------------------------------------------------------------------------------


@pytest.mark.parametrize("caller", ["as_alice", "as_staff"])
def test_flag_queues_the_tag_for_review_without_changing_membership(
    corpus, caller, request
):
    before = membership()

    response = request.getfixturevalue(caller).post(flag_url("2606.00001"))

    assert response.status_code == 201, response.content
    assert response.json() == {
        "topic": AGENTS,
        "paper": "2606.00001",
        "flagged": True,
        "flags": 1,
    }
    assert flags_on("2606.00001") == 1
    assert membership() == before


def test_flagging_again_is_200_and_counts_once(corpus, as_alice):
    first = as_alice.post(flag_url("2606.00001"))

    again = as_alice.post(flag_url("2606.00001"))

    assert again.status_code == 200, again.content
    assert again.json() == first.json()
    assert RelevanceFlag.objects.count() == 1
    assert flags_on("2606.00001") == 1


def test_flags_from_two_readers_count_two(corpus, as_alice, as_bob):
    as_alice.post(flag_url("2606.00001"))

    response = as_bob.post(flag_url("2606.00001"))

    assert response.status_code == 201
    assert response.json()["flags"] == 2
    assert flags_on("2606.00001") == 2


def test_a_versioned_id_flags_the_paper(corpus, as_alice):
    response = as_alice.post(flag_url("2606.00001v1"))

    assert response.status_code == 201
    assert response.json()["paper"] == "2606.00001"


def test_a_former_slug_flags_the_topic_it_leads_to(corpus, as_alice):
    corpus["agents"].slug = "llm-agents"
    corpus["agents"].save()

    response = as_alice.post(flag_url("2606.00001"))

    assert response.status_code == 201, response.content
    assert response.json()["topic"] == "llm-agents"
    assert flags_on("2606.00001", slug="llm-agents") == 1


def test_a_session_reader_may_flag(corpus, alice):
    client = APIClient()
    client.force_login(alice)

    assert client.post(flag_url("2606.00001")).status_code == 201


def test_a_paper_not_in_the_topic_is_a_conflict_and_creates_nothing(corpus, as_alice):
    # An old-style id, so the route's slash-containing ids are covered too.
    response = as_alice.post(flag_url("math/0601001"))

    error = assert_error(response, 409, "not_tagged")
    assert error["message"] == "This paper is not in this topic."
    assert not RelevanceFlag.objects.exists()
    assert not ReviewItem.objects.exists()


def test_a_paper_of_another_topic_is_a_conflict(corpus, as_alice):
    response = as_alice.post(flag_url("2606.00001", slug="robot-learning"))

    assert_error(response, 409, "not_tagged")


# REFUSALS
# ------------------------------------------------------------------------------


def test_anonymous_callers_are_refused(corpus, anonymous):
    response = anonymous.post(flag_url("2606.00001"))

    assert_error(response, 401, "not_authenticated")
    assert not RelevanceFlag.objects.exists()


def test_session_writes_need_the_csrf_token(corpus, alice):
    strict = APIClient(enforce_csrf_checks=True)
    strict.force_login(alice)

    assert_error(strict.post(flag_url("2606.00001")), 403, "csrf_failed")
    assert not RelevanceFlag.objects.exists()


@pytest.mark.parametrize(
    "url",
    [
        flag_url("2606.00001", slug="nothing-here"),
        flag_url("2699.99999"),
        flag_url("not-an-id"),
    ],
)
def test_unknown_topic_or_paper_is_404(corpus, as_alice, url):
    assert_error(as_alice.post(url), 404, "not_found")
    assert not RelevanceFlag.objects.exists()


def test_inactive_topic_is_404(corpus, as_alice):
    corpus["agents"].is_active = False
    corpus["agents"].save()

    assert_error(as_alice.post(flag_url("2606.00001")), 404, "not_found")


def test_unknown_query_parameter_is_refused(corpus, as_alice):
    response = as_alice.post(flag_url("2606.00001") + "?force=1")

    error = assert_error(response, 400, "invalid")
    assert error["fields"]["force"][0]["code"] == "unknown_parameter"
    assert not RelevanceFlag.objects.exists()


def test_get_is_not_allowed(corpus, as_alice):
    assert_error(as_alice.get(flag_url("2606.00001")), 405, "method_not_allowed")


# RATE LIMIT
# ------------------------------------------------------------------------------


def test_rate_limit_refuses_the_next_new_flag_with_retry_after(
    corpus, as_alice, settings
):
    settings.MOMENTUM_FLAG_RATE = "2/hour"
    as_alice.post(flag_url("2606.00001"))
    as_alice.post(flag_url("2606.00002"))

    response = as_alice.post(flag_url("2606.00003"))

    assert_error(response, 429, "throttled")
    assert 0 < int(response["Retry-After"]) <= 3600
    assert RelevanceFlag.objects.count() == 2
    assert not ReviewItem.objects.filter(paper__arxiv_id="2606.00003").exists()


def test_a_repeated_flag_is_answered_when_limited(corpus, as_alice, settings):
    settings.MOMENTUM_FLAG_RATE = "1/hour"
    as_alice.post(flag_url("2606.00001"))

    assert as_alice.post(flag_url("2606.00001")).status_code == 200
    assert_error(as_alice.post(flag_url("2606.00002")), 429, "throttled")


# SCHEMA
# ------------------------------------------------------------------------------


def test_schema_documents_the_endpoint(client):
    served = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")

    operation = served.json()["paths"][
        "/api/v1/topics/{slug}/papers/{arxiv_id}/not-relevant/"
    ]["post"]
    assert {"200", "201", "401", "404", "409", "429"} <= set(operation["responses"])
    assert "requestBody" not in operation
