"""Ask's API parameters: what the schema allows is asked, what it forbids is a
400 with the field (the answers themselves: tests/ask)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient
from rest_framework.throttling import SimpleRateThrottle

from tests.api.conftest import assert_error
from topics.models import Question

pytestmark = pytest.mark.django_db

TOPIC_ASK = "/api/v1/topics/rl-for-llm-agents/ask/"


@pytest.fixture(autouse=True)
def _no_limits(monkeypatch, settings):
    monkeypatch.setitem(SimpleRateThrottle.THROTTLE_RATES, "anon", None)
    settings.MOMENTUM_ASK_RATE = "1000/hour"


def test_weeks_up_to_the_calendars_first_day_are_asked_not_a_500(anonymous, corpus):
    response = anonymous.get(
        TOPIC_ASK, {"q": "agent", "weeks": "12", "until": "0001-01-01"}
    )

    assert response.status_code == 200, response.content


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"q": "agent", "since": "2026-06-03", "until": "2026-06-01"}, "until"),
        ({"q": "   "}, "q"),
        ({"q": "\u3000\u00a0"}, "q"),
        ({"q": "\t" + "a" * 500}, "q"),
        ({"q": "agent\x00"}, "q"),
        ({"q": "agent", "since": "20260601"}, "since"),
        ({"q": "agent", "weeks": "5"}, "weeks"),
        # Weeks count back from the latest harvest (or until): since was dropped.
        ({"q": "agent", "weeks": "52", "since": "2026-06-02"}, "since"),
    ],
)
def test_bad_topic_questions_are_refused_with_the_field(
    anonymous, corpus, params, field
):
    error = assert_error(anonymous.get(TOPIC_ASK, params), 400, "invalid")
    assert field in error["fields"], error


def test_a_one_day_window_is_a_question_like_any_other(anonymous, corpus):
    params = {"q": " agent ", "since": "2026-06-02", "until": "2026-06-02"}

    response = anonymous.get(TOPIC_ASK, params)

    assert response.status_code == 200, response.content
    assert response.json()["question"] == "agent"
    # Absolute, on the request's host, as the paper list's links are.
    urls = [source["url"] for source in response.json()["sources"]]
    assert urls
    assert all(url.startswith("http://testserver/papers/") for url in urls)


def test_asking_about_an_inactive_topic_is_a_404(anonymous, corpus):
    corpus["agents"].is_active = False
    corpus["agents"].save()

    assert_error(anonymous.get(TOPIC_ASK, {"q": "agent"}), 404, "not_found")


def test_a_paper_question_needs_some_text(anonymous, corpus):
    response = anonymous.get("/api/v1/papers/2606.00100/ask/", {"q": "\n"})
    assert "q" in assert_error(response, 400, "invalid")["fields"]


def test_a_question_with_no_english_word_says_to_ask_in_english(anonymous, corpus):
    """Chinese and Arabic questions got "no paper matches" and no word why."""
    for question in ("思维链的忠实性是什么", "ما هو التفكير؟"):
        answer = anonymous.get(TOPIC_ASK, {"q": question}).json()

        assert answer["notice"].startswith(
            "Questions are matched against the papers' English text"
        )
    english = anonymous.get(TOPIC_ASK, {"q": "agent"}).json()
    assert english["notice"] == ""


@pytest.mark.parametrize("sent_by", ["cross-site", "same-site"])
@pytest.mark.parametrize(
    "address", [TOPIC_ASK, "/api/v1/papers/2606.00100/ask/"], ids=["topic", "paper"]
)
def test_a_question_from_another_site_is_not_asked_for_the_signed_in_reader(
    corpus, alice, sent_by, address
):
    """The browser sends the reader's session cookie with a link from another
    site: as on the ask page, it must neither write their recent questions nor
    spend their hourly questions (nor the operator's model)."""
    reader = APIClient()
    reader.force_login(alice)

    response = reader.get(address, {"q": "agent"}, HTTP_SEC_FETCH_SITE=sent_by)

    assert_error(response, 403, "permission_denied")
    assert not Question.objects.exists()
    # From the site itself (its own script), or a client that is no browser.
    asked = reader.get(address, {"q": "agent"}, HTTP_SEC_FETCH_SITE="same-origin")
    assert asked.status_code == 200, asked.content
    assert reader.get(address, {"q": "agent"}).status_code == 200
