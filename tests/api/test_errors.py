"""Bad requests of every kind get a 4xx (or a 5xx) in the one error shape."""

from __future__ import annotations

import json

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.throttling import SimpleRateThrottle

from papers.models import Rating
from tests.api.conftest import assert_error
from tests.topics.factories import make_topic
from topics.curation import merge_topics

pytestmark = pytest.mark.django_db


def test_malformed_json_is_a_parse_error(as_staff, corpus):
    response = as_staff.generic(
        "PATCH",
        "/api/v1/topics/robot-learning/",
        '{"rule": "ti:robot"',
        content_type="application/json",
    )
    assert_error(response, 400, "parse_error")


def test_a_body_key_given_twice_is_refused(as_alice, corpus):
    """JSON parsing keeps the last of a repeated key: {"rating": 1, "rating":
    -1} rated the paper down and the 1 was never checked, as the last of a
    query parameter given twice was read before repeated_parameter."""
    response = as_alice.generic(
        "POST",
        "/api/v1/me/ratings/",
        '{"paper": "2606.00001", "rating": 1, "rating": -1}',
        content_type="application/json",
    )

    error = assert_error(response, 400, "invalid")
    assert error["fields"] == {
        "rating": [{"code": "repeated_field", "message": "Given more than once."}]
    }
    assert not Rating.objects.exists()


@pytest.mark.parametrize("charset", ["rot13", "base64", "zlib"])
def test_a_charset_that_is_not_a_text_encoding_is_a_parse_error(
    as_staff, corpus, charset
):
    """Python knows these codecs, so the request takes them, but they turn
    bytes into bytes: decoding the body with one raised LookupError, a 500."""
    response = as_staff.generic(
        "PATCH",
        "/api/v1/topics/robot-learning/",
        '{"description": "x"}',
        content_type=f"application/json; charset={charset}",
    )

    assert_error(response, 400, "parse_error")
    assert f"{charset!r} is not a text encoding" in response.json()["error"]["message"]


@pytest.mark.parametrize("depth", [40, 20_000])
def test_deeply_nested_json_is_a_parse_error_not_a_crash(as_staff, corpus, depth):
    body = '{"rule": ' + "[" * depth + "]" * depth + "}"

    response = as_staff.generic(
        "PATCH", "/api/v1/topics/robot-learning/", body, content_type="application/json"
    )

    assert_error(response, 400, "parse_error")
    assert "nested deeper than 32" in response.json()["error"]["message"]


def test_a_body_over_the_limit_is_refused_unread(as_staff, corpus, settings):
    settings.MOMENTUM_API_MAX_BODY_BYTES = 1024
    body = '{"description": "' + "x" * 10 * 1024 * 1024 + '"}'

    response = as_staff.generic(
        "PATCH", "/api/v1/topics/robot-learning/", body, content_type="application/json"
    )

    assert_error(response, 400, "parse_error")
    assert "larger than 1,024 bytes" in response.json()["error"]["message"]


def test_form_bodies_are_unsupported(as_alice, corpus):
    response = as_alice.post("/api/v1/me/follows/", {"topic": "robot-learning"})
    assert_error(response, 415, "unsupported_media_type")


def test_asking_for_html_is_not_acceptable(anonymous, corpus):
    response = anonymous.get("/api/v1/papers/", HTTP_ACCEPT="text/html")
    assert_error(response, 406, "not_acceptable")


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/papers/",
        "/api/v1/papers/2606.00100/",
        "/api/v1/me/",
        "/api/v1/me/digest/",
        "/api/v1/me/follows/",
    ],
)
@pytest.mark.parametrize("value", ["json", "xml", "api", ""])
def test_format_is_refused_as_any_unknown_parameter_whatever_its_value(
    as_alice, corpus, path, value
):
    """The API answers in JSON alone, so it takes no format: ?format=xml was a
    bare 404 "Not found." where ?format=json was this 400."""
    error = assert_error(as_alice.get(path, {"format": value}), 400, "invalid")
    assert error["fields"] == {
        "format": [{"code": "unknown_parameter", "message": "Unknown query parameter."}]
    }


@pytest.mark.parametrize("value", ["json", "xml"])
def test_format_comes_after_signing_in_as_any_parameter(anonymous, value):
    """A format the API lacks was answered before the caller was known."""
    assert_error(anonymous.get("/api/v1/me/", {"format": value}), 401)


@pytest.mark.parametrize(
    "path",
    ["/api/v1/nothing/", "/api/v2/papers/", "/api/v1/nothing", "/api/v1/", "/api/"],
)
def test_unknown_api_addresses_are_json_404s(anonymous, path):
    error = assert_error(anonymous.get(path), 404, "not_found")
    # A client that guessed an address is told where the endpoints are.
    assert error["message"] == f"No API endpoint at {path}; the endpoints: /api/docs/."


@pytest.mark.parametrize(
    "path", ["/api/v1/nothing/", "/api/v1/topics/nope/", "/api/v1/papers/2699.99999/"]
)
def test_every_api_404_is_written_alike(anonymous, corpus, path):
    """The resolver's 404s were pretty-printed (`{"error": {"code": ...`), DRF's
    compact, non-ASCII as sent."""
    response = anonymous.get(path)

    assert_error(response, 404, "not_found")
    compact = json.dumps(response.json(), separators=(",", ":"), ensure_ascii=False)
    assert response.content == compact.encode()


def test_an_address_without_its_slash_is_a_json_redirect(anonymous, corpus):
    """It was a 301 with Content-Type text/html, under an API that answers in
    JSON alone (a client that checks the type before following was stuck)."""
    response = anonymous.get("/api/v1/topics", {"active": "true"})

    assert response.status_code == 301
    assert response["Content-Type"] == "application/json"
    assert response["Location"] == "/api/v1/topics/?active=true"
    assert response.json() == {"location": "/api/v1/topics/?active=true"}


def test_a_former_slug_is_a_json_redirect_too(anonymous, corpus):
    merge_topics(corpus["agents"], [corpus["robots"]])

    response = anonymous.get("/api/v1/topics/robot-learning/papers/")

    assert response.status_code == 301
    assert response["Content-Type"] == "application/json"
    location = "/api/v1/topics/rl-for-llm-agents/papers/"
    assert response["Location"] == location
    assert response.json() == {"location": location}


@pytest.mark.parametrize(
    "body",
    [[], "a string", 42, None, {"topic": ["robot-learning"]}, {"topic": {"x": 1}}],
)
def test_wrong_body_types_are_refused(as_alice, corpus, body):
    response = as_alice.post("/api/v1/me/follows/", body, format="json")
    assert_error(response, 400)


def test_wrong_field_types_name_the_nested_field(as_staff, corpus):
    response = as_staff.patch(
        "/api/v1/topics/robot-learning/",
        {"categories": ["cs.AI", 7], "is_active": "sometimes"},
        format="json",
    )
    fields = assert_error(response, 400, "invalid")["fields"]
    assert set(fields) == {"categories", "is_active"}
    assert all(entry["code"] and entry["message"] for entry in fields["categories"])


def test_bad_token_is_an_authentication_failure(anonymous):
    anonymous.credentials(HTTP_AUTHORIZATION="Token not-a-real-key")
    assert_error(anonymous.get("/api/v1/papers/"), 401, "authentication_failed")


@pytest.mark.parametrize("path", ["/api/v1/papers/", "/api/v1/me/"])
def test_a_key_sent_as_a_bearer_token_is_refused_saying_how_to_send_it(
    anonymous, alice, corpus, path
):
    """A key sent as `Authorization: Bearer <key>` (as many APIs take one) was
    not read: public reads answered as to a visitor, at the visitors' rate, and
    me/ said no credentials were provided."""
    key = Token.objects.create(user=alice).key
    anonymous.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")

    response = anonymous.get(path)

    error = assert_error(response, 401, "authentication_failed")
    assert "Authorization: Token <key>" in error["message"]
    assert response["WWW-Authenticate"] == "Token"


def test_another_scheme_is_left_to_what_sent_it(anonymous, corpus):
    """A proxy's password (Basic) in front of a staging site is not the API's
    to refuse: the request is read as a visitor's, as before."""
    anonymous.credentials(HTTP_AUTHORIZATION="Basic c3RhZ2luZzpzZWNyZXQ=")
    assert anonymous.get("/api/v1/papers/").status_code == 200


def test_throttled_callers_get_429_with_retry_after(anonymous, monkeypatch, corpus):
    monkeypatch.setitem(SimpleRateThrottle.THROTTLE_RATES, "anon", "2/minute")
    for _ in range(2):
        assert anonymous.get("/api/v1/topics/").status_code == 200
    response = anonymous.get("/api/v1/topics/")
    assert_error(response, 429, "throttled")
    assert int(response["Retry-After"]) > 0


def test_a_rate_lowered_under_a_callers_recent_calls_still_says_when_to_retry(
    anonymous, monkeypatch, corpus
):
    """DRF's throttle said nothing (no Retry-After) while a caller had more
    calls in the window than the rate now allows, as after an operator lowers
    MOMENTUM_API_ANON_RATE against a busy client: the 429s came with no wait
    until enough of those calls had aged out."""
    monkeypatch.setitem(SimpleRateThrottle.THROTTLE_RATES, "anon", "5/minute")
    for _ in range(5):
        assert anonymous.get("/api/v1/topics/").status_code == 200
    monkeypatch.setitem(SimpleRateThrottle.THROTTLE_RATES, "anon", "2/minute")

    response = anonymous.get("/api/v1/topics/")

    assert_error(response, 429, "throttled")
    # Allowed again once the third newest call leaves the minute: at most 60 s.
    assert 0 < int(response["Retry-After"]) <= 60
    assert "Expected available in" in response.json()["error"]["message"]


def test_signed_in_callers_have_their_own_rate(as_alice, monkeypatch, corpus):
    monkeypatch.setitem(SimpleRateThrottle.THROTTLE_RATES, "user", "1/minute")
    assert as_alice.get("/api/v1/me/").status_code == 200
    assert_error(as_alice.get("/api/v1/me/"), 429, "throttled")


def test_an_unexpected_failure_is_a_500_in_the_same_shape(
    anonymous, monkeypatch, corpus
):
    def broken(*args, **kwargs):
        raise RuntimeError("database on fire")

    monkeypatch.setattr("papers.api.papers.get_paper", broken)
    response = anonymous.get("/api/v1/papers/2606.00100/")
    error = assert_error(response, 500, "server_error")
    assert "fire" not in error["message"]
    # The request's id, which its log lines carry, for the client to quote.
    assert error["reference"] == response["X-Request-ID"]


PAPER = "/api/v1/papers/2606.00001/"
NO_TOPIC = "No topic has the slug “nope”."
NO_PAPER = "No paper has the arXiv id “2699.99999”."
NO_PAPER_PATH = "/api/v1/papers/2699.99999/"


@pytest.mark.parametrize(
    ("caller", "method", "path", "message"),
    [
        ("anonymous", "get", "/api/v1/topics/nope/", NO_TOPIC),
        (
            "anonymous",
            "get",
            "/api/v1/topics/hidden/",
            "No topic has the slug “hidden”.",
        ),
        ("anonymous", "get", "/api/v1/topics/nope/papers/", NO_TOPIC),
        ("anonymous", "get", "/api/v1/topics/nope/ask/?q=agents", NO_TOPIC),
        ("as_staff", "patch", "/api/v1/topics/nope/", NO_TOPIC),
        ("as_staff", "put", "/api/v1/topics/nope/", NO_TOPIC),
        ("as_staff", "post", "/api/v1/topics/nope/retag/", NO_TOPIC),
        ("anonymous", "get", NO_PAPER_PATH, NO_PAPER),
        ("anonymous", "get", NO_PAPER_PATH + "similar/", NO_PAPER),
        ("anonymous", "get", NO_PAPER_PATH + "ask/?q=agents", NO_PAPER),
        ("as_alice", "delete", "/api/v1/me/saved/2699.99999/", NO_PAPER),
        ("as_alice", "delete", "/api/v1/me/ratings/2699.99999/", NO_PAPER),
        (
            "as_alice",
            "post",
            "/api/v1/topics/nope/papers/2606.00001/not-relevant/",
            NO_TOPIC,
        ),
        (
            "as_alice",
            "post",
            "/api/v1/topics/rl-for-llm-agents/papers/2699.99999/not-relevant/",
            NO_PAPER,
        ),
        ("as_alice", "patch", "/api/v1/me/follows/nope/", NO_TOPIC),
        ("as_alice", "delete", "/api/v1/me/follows/nope/", NO_TOPIC),
        (
            "as_alice",
            "patch",
            "/api/v1/me/follows/robot-learning/",
            "No followed topic has the slug “robot-learning”.",
        ),
        (
            "as_alice",
            "get",
            "/api/v1/me/searches/999/",
            "No saved search has the id “999”.",
        ),
        (
            "as_alice",
            "delete",
            "/api/v1/me/searches/999/",
            "No saved search has the id “999”.",
        ),
        (
            "as_alice",
            "delete",
            "/api/v1/me/followed-authors/999999/",
            "No author has the id “999999”.",
        ),
        ("as_alice", "get", "/api/v1/me/saved/?page=9", "No page has the number “9”."),
    ],
)
def test_a_missing_row_is_named_in_the_clients_words(
    caller, method, path, message, request, corpus
):
    """One wording for every 404 that names something: not Django's "No
    SavedSearch matches the given query.", nor "No such topic.", "No topic
    nope." and "No paper 2699.99999" from three endpoints."""
    make_topic("Hidden", rule="ti:hidden", is_active=False)
    client = request.getfixturevalue(caller)
    body = {"muted": True} if "follows" in path else {"description": "x"}
    if method not in ("patch", "put"):
        body = None

    response = getattr(client, method)(path, body, format="json")

    assert assert_error(response, 404, "not_found")["message"] == message


@pytest.mark.parametrize(
    ("caller", "method", "path", "body", "field", "message"),
    [
        (
            "as_alice",
            "post",
            "/api/v1/me/follows/",
            {"topic": "nope"},
            "topic",
            NO_TOPIC,
        ),
        ("anonymous", "get", "/api/v1/papers/?topic=nope", None, "topic", NO_TOPIC),
        (
            "anonymous",
            "get",
            "/api/v1/papers/?category=cs.XX",
            None,
            "category",
            "No paper held has the category “cs.XX” (arXiv writes them like cs.LG).",
        ),
        (
            "as_alice",
            "post",
            "/api/v1/me/saved/",
            {"paper": "2699.99999"},
            "paper",
            NO_PAPER,
        ),
        (
            "as_alice",
            "post",
            "/api/v1/me/ratings/",
            {"paper": "2699.99999", "rating": 1},
            "paper",
            NO_PAPER,
        ),
        (
            "as_alice",
            "post",
            "/api/v1/me/followed-authors/",
            {"author": 999999},
            "author",
            "No author has the id “999999”.",
        ),
        (
            "as_staff",
            "patch",
            "/api/v1/topics/robot-learning/",
            {"related": ["nope"]},
            "related",
            NO_TOPIC,
        ),
        (
            "as_staff",
            "patch",
            "/api/v1/topics/robot-learning/",
            {"categories": ["cs.XX"]},
            "categories",
            "No category has the code “cs.XX”.",
        ),
    ],
)
def test_a_missing_row_in_a_field_is_named_in_the_same_words(
    caller, method, path, body, field, message, request, corpus
):
    client = request.getfixturevalue(caller)

    response = getattr(client, method)(path, body, format="json")

    error = assert_error(response, 404, "not_found")
    assert error["fields"][field][0]["message"] == message
