"""The caller's thumbs up and down through the API: rate, change, clear, the
cursor-paged list with saved papers counted as up, and every refusal in the
API's one error shape."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient
from rest_framework.throttling import SimpleRateThrottle

from papers.library import set_rating
from papers.library import set_saved
from papers.models import Paper
from papers.models import Rating
from tests.api.conftest import assert_error

pytestmark = pytest.mark.django_db

RATINGS = "/api/v1/me/ratings/"


def rate(client: APIClient, paper: object, rating: object):
    return client.post(RATINGS, {"paper": paper, "rating": rating}, format="json")


def listed(client: APIClient, query: str = "") -> dict:
    response = client.get(f"{RATINGS}{query}")
    assert response.status_code == 200, response.content
    return response.json()


def test_rate_change_and_clear(as_alice, alice, corpus):
    created = rate(as_alice, "2606.00001v1", 1)
    assert created.status_code == 201
    body = created.json()
    assert body["paper"] == "2606.00001"
    assert (body["rating"], body["rated"], body["saved"]) == (1, True, False)
    assert body["created_at"]

    again = rate(as_alice, "2606.00001", 1)
    assert again.status_code == 200
    assert again.json()["created_at"] == body["created_at"]  # nothing changed
    changed = rate(as_alice, "2606.00001", -1)
    assert changed.status_code == 200
    assert changed.json()["rating"] == -1
    assert Rating.objects.get(user=alice).value == -1

    assert as_alice.delete(f"{RATINGS}2606.00001v1/").status_code == 204
    assert as_alice.delete(f"{RATINGS}2606.00001/").status_code == 204  # idempotent
    assert not Rating.objects.exists()
    assert rate(as_alice, "2606.00001", 1).status_code == 201


def test_old_style_ids_are_rated_too(as_alice, corpus):
    assert rate(as_alice, "math/0601001v2", -1).status_code == 201
    assert listed(as_alice)["results"][0]["paper"] == "math/0601001"
    assert as_alice.delete(f"{RATINGS}math/0601001/").status_code == 204


def test_the_list_counts_saved_papers_as_up_newest_first(
    as_alice, as_bob, alice, bob, corpus
):
    papers = {p.arxiv_id: p for p in Paper.objects.all()}
    set_saved(alice, papers["2606.00001"], True)
    set_rating(alice, papers["2606.00002"], Rating.DOWN)
    set_saved(alice, papers["2606.00003"], True)
    set_rating(alice, papers["2606.00003"], Rating.DOWN)  # a 👎 over a save
    set_rating(bob, papers["2606.00004"], Rating.UP)

    results = listed(as_alice)["results"]

    assert [(r["paper"], r["rating"], r["rated"], r["saved"]) for r in results] == [
        ("2606.00003", -1, True, True),
        ("2606.00002", -1, True, False),
        ("2606.00001", 1, False, True),
    ]
    # Clearing the rating of a saved paper leaves the save's +1.
    as_alice.delete(f"{RATINGS}2606.00003/")
    entry = next(r for r in listed(as_alice)["results"] if r["paper"] == "2606.00003")
    assert (entry["rating"], entry["rated"], entry["saved"]) == (1, False, True)
    assert [r["paper"] for r in listed(as_bob)["results"]] == ["2606.00004"]


def test_the_list_is_cursor_paged_through_ties(as_alice, alice, corpus):
    papers = list(Paper.objects.order_by("arxiv_id"))
    for paper in papers:
        set_rating(alice, paper, Rating.UP)
    # Several at the same instant: the paper id breaks the tie.
    same = timezone.now() - timedelta(days=1)
    Rating.objects.filter(paper__in=papers[:5]).update(created_at=same)

    seen, query, pages = [], "?page_size=2", 0
    while True:
        page = listed(as_alice, query)
        pages += 1
        seen += [r["paper"] for r in page["results"]]
        if page["next"] is None:
            break
        assert len(page["results"]) == 2
        query = "?" + page["next"].split("?", 1)[1]

    assert pages == 5
    assert sorted(seen) == sorted(p.arxiv_id for p in papers)
    assert len(seen) == len(set(seen))


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("?cursor=abc", "cursor"),
        ("?cursor=1.2.3", "cursor"),
        ("?page_size=0", "page_size"),
        ("?page_size=101", "page_size"),
        ("?page=2", "page"),
    ],
)
def test_bad_list_parameters_are_refused(as_alice, corpus, query, field):
    error = assert_error(as_alice.get(f"{RATINGS}{query}"), 400, "invalid")
    assert field in error["fields"]


def test_any_cursor_of_the_form_is_a_position(as_alice, alice, corpus):
    set_rating(alice, Paper.objects.get(arxiv_id="2606.00001"), Rating.UP)

    assert listed(as_alice, "?cursor=0.0")["results"] == []
    far = listed(as_alice, "?cursor=9999999999999999.1")["results"]
    assert [r["paper"] for r in far] == ["2606.00001"]


@pytest.mark.parametrize("rating", [0, 2, -2, "x", "1", 1.0, True, None, [1]])
def test_a_rating_is_1_or_minus_1(as_alice, corpus, rating):
    error = assert_error(rate(as_alice, "2606.00001", rating), 400, "invalid")

    assert list(error["fields"]) == ["rating"]
    assert not Rating.objects.exists()


def test_the_refusal_says_what_a_rating_is(as_alice, corpus):
    error = assert_error(rate(as_alice, "2606.00001", 0), 400, "invalid")

    assert error["fields"]["rating"][0]["message"] == (
        "A rating is 1 (thumbs up) or -1 (thumbs down)."
    )


def test_both_fields_are_needed(as_alice, corpus):
    error = assert_error(as_alice.post(RATINGS, {}, format="json"), 400, "invalid")

    assert set(error["fields"]) == {"paper", "rating"}


@pytest.mark.parametrize("paper", ["garbage", "", None, 12, "arXiv:2606.00001"])
def test_rating_needs_an_arxiv_id(as_alice, corpus, paper):
    error = assert_error(rate(as_alice, paper, 1), 400, "invalid")
    assert "paper" in error["fields"]


@pytest.mark.parametrize("paper", ["2606.99999", "math/0601999v2"])
def test_rating_a_paper_that_does_not_exist_is_a_404(as_alice, corpus, paper):
    error = assert_error(rate(as_alice, paper, 1), 404, "not_found")
    assert error["fields"]["paper"][0]["code"] == "does_not_exist"


def test_clearing_a_paper_that_does_not_exist_is_a_404(as_alice, corpus):
    assert_error(as_alice.delete(f"{RATINGS}2606.99999/"), 404, "not_found")


@pytest.mark.parametrize(
    ("method", "address"),
    [("get", RATINGS), ("post", RATINGS), ("delete", f"{RATINGS}2606.00001/")],
)
def test_ratings_need_authentication(anonymous, corpus, method, address):
    response = getattr(anonymous, method)(address, {}, format="json")
    assert_error(response, 401, "not_authenticated")


def test_a_session_rates_with_its_csrf_token(alice, corpus):
    client = APIClient(enforce_csrf_checks=True)
    client.login(email="alice@example.com", password="correct horse battery")
    assert client.get(RATINGS).status_code == 200
    refused = client.post(RATINGS, {"paper": "2606.00001", "rating": 1}, format="json")
    assert_error(refused, 403, "csrf_failed")

    Client.get(client, "/topics/")  # any page sets the CSRF cookie
    token = client.cookies["csrftoken"].value
    accepted = client.post(
        RATINGS,
        {"paper": "2606.00001", "rating": 1},
        format="json",
        HTTP_X_CSRFTOKEN=token,
    )
    assert accepted.status_code == 201


def test_ratings_are_throttled_as_the_callers_other_calls(
    as_alice, monkeypatch, corpus
):
    monkeypatch.setitem(SimpleRateThrottle.THROTTLE_RATES, "user", "1/minute")
    assert rate(as_alice, "2606.00001", 1).status_code == 201
    assert_error(rate(as_alice, "2606.00002", 1), 429, "throttled")


def test_reading_ratings_costs_fixed_queries(
    as_alice, alice, corpus, django_assert_max_num_queries
):
    for paper in Paper.objects.all():
        set_rating(alice, paper, Rating.DOWN)
        set_saved(alice, paper, True)
    # The caller (token, user) and the page.
    with django_assert_max_num_queries(3):
        assert len(listed(as_alice)["results"]) == 9


def test_the_schema_describes_ratings(client):
    schema = client.get(
        "/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json"
    ).json()
    paths = schema["paths"]
    listing = paths["/api/v1/me/ratings/"]["get"]
    creating = paths["/api/v1/me/ratings/"]["post"]
    clearing = paths["/api/v1/me/ratings/{arxiv_id}/"]["delete"]

    assert {"cursor", "page_size"} == {p["name"] for p in listing["parameters"]}
    assert {"200", "201", "400", "401", "404", "429"} <= set(creating["responses"])
    assert "204" in clearing["responses"]
    body = schema["components"]["schemas"]["RatingInputRequest"]
    assert body["required"] == ["paper", "rating"]
    (ref,) = body["properties"]["rating"]["allOf"]
    enum = schema["components"]["schemas"][ref["$ref"].rsplit("/", 1)[1]]
    assert (enum["type"], enum["enum"]) == ("integer", [1, -1])
