"""me/searches/: the caller's saved searches."""

from __future__ import annotations

import pytest

from tests.api.conftest import assert_error
from topics.models import SavedSearch

pytestmark = pytest.mark.django_db

URL = "/api/v1/me/searches/"


def test_save_list_edit_and_delete_a_search(as_alice, as_bob, corpus):
    response = as_alice.post(URL, {"name": "Robots", "query": "robot"}, format="json")

    assert response.status_code == 201, response.content
    created = response.json()
    assert created["syntax"] == "search"
    assert (created["name"], created["matches"]) == ("Robots", 1)
    item = f"{URL}{created['id']}/"
    assert [s["id"] for s in as_alice.get(URL).json()] == [created["id"]]
    assert as_bob.get(URL).json() == []
    assert_error(as_bob.get(item), 404, "not_found")
    assert_error(as_bob.delete(item), 404, "not_found")

    edited = as_alice.patch(
        item, {"query": "ti:agent", "syntax": "rule", "name": "Agents"}, format="json"
    )
    assert edited.status_code == 200, edited.content
    assert edited.json()["matches"] == 8
    assert as_alice.get(item).json()["name"] == "Agents"

    assert as_alice.delete(item).status_code == 204
    assert_error(as_alice.get(item), 404, "not_found")


def test_an_invalid_query_is_refused_with_its_position(as_alice, corpus):
    words = as_alice.post(
        URL, {"name": "Quotes", "query": 'agents "tool use'}, format="json"
    )
    rule = as_alice.post(
        URL, {"name": "Rule", "query": "ti:agent AND", "syntax": "rule"}, format="json"
    )

    (error,) = assert_error(words, 400, "invalid")["fields"]["query"]
    assert error == {
        "code": "invalid_query",
        "message": "Unbalanced quote at position 7",
        "position": 7,
    }
    (error,) = assert_error(rule, 400, "invalid")["fields"]["query"]
    assert (error["code"], error["position"]) == ("invalid_rule", 9)
    assert not SavedSearch.objects.exists()


def test_a_query_only_search_reads_as_stop_words_is_a_400(as_alice, corpus):
    # A dotless i (U+0131) is an i to search: its "if" is a stop word.
    response = as_alice.post(URL, {"name": "If", "query": "\u0131f"}, format="json")

    (error,) = assert_error(response, 400, "invalid")["fields"]["query"]
    assert (error["code"], error["position"]) == ("invalid_query", 0)
    assert not SavedSearch.objects.exists()


def test_the_limit_and_a_taken_name_are_refused(as_alice, corpus, settings):
    settings.MOMENTUM_SAVED_SEARCHES_MAX = 2
    first = as_alice.post(URL, {"name": "A", "query": "agent"}, format="json")
    assert first.status_code == 201

    taken = as_alice.post(URL, {"name": "A", "query": "robot"}, format="json")
    second = as_alice.post(URL, {"name": "B", "query": "robot"}, format="json")
    full = as_alice.post(URL, {"name": "C", "query": "robot"}, format="json")
    missing = as_alice.post(URL, {"query": "robot"}, format="json")

    assert assert_error(taken, 409, "conflict")["fields"]["name"][0]["code"] == "unique"
    assert second.status_code == 201
    (error,) = assert_error(full, 400, "invalid")["fields"]["non_field_errors"]
    assert error["code"] == "limit"
    assert "2 saved searches, the most a reader may keep" in error["message"]
    assert "name" in assert_error(missing, 400, "invalid")["fields"]
    # An operator lowered the limit below what the reader keeps.
    settings.MOMENTUM_SAVED_SEARCHES_MAX = 1
    lowered = as_alice.post(URL, {"name": "D", "query": "robot"}, format="json")
    (error,) = assert_error(lowered, 400, "invalid")["fields"]["non_field_errors"]
    assert error["message"] == (
        "You have 2 saved searches, more than the 1 a reader may keep: "
        "delete 2 to save another"
    )


def test_saved_searches_need_signing_in(anonymous):
    assert anonymous.get(URL).status_code == 401
    response = anonymous.post(URL, {"name": "A", "query": "a"}, format="json")
    assert response.status_code == 401


def test_an_id_that_is_no_number_is_a_404(as_alice, corpus):
    for method in (as_alice.get, as_alice.patch, as_alice.delete):
        assert_error(method(f"{URL}null,/"), 404, "not_found")


def test_either_syntax_is_at_most_200_characters(as_alice, corpus):
    rule = "ti:agent AND " + " OR ".join(["abs:robot"] * 20)
    response = as_alice.post(
        URL, {"name": "Long", "query": rule, "syntax": "rule"}, format="json"
    )
    assert response.status_code == 400
    assert "query" in response.json()["error"]["fields"]


@pytest.mark.parametrize(
    "fields",
    [
        {"name": "esc\u001bname"},
        {"name": "\u202eunclosed override"},
        {"query": "learn\u0000ing"},
        {"name": "\u0085"},
        # A separator str.isspace() takes for a space, which XML 1.0 forbids.
        {"query": "learn\u001fing"},
    ],
)
def test_a_control_character_is_refused_as_the_schema_says(as_alice, corpus, fields):
    body = {"name": "Mine", "query": "agent", **fields}

    error = assert_error(as_alice.post(URL, body, format="json"), 400, "invalid")

    [field] = fields
    assert error["fields"][field][0]["code"] == "invalid"
    schema = as_alice.get("/api/schema/", {"format": "json"}).json()
    request = schema["components"]["schemas"]["SavedSearchCreateRequest"]
    assert "\\u000e-\\u001f" in request["properties"][field]["pattern"]
    assert not SavedSearch.objects.exists()


@pytest.mark.parametrize("query", ["the", "of the", "the or +"])
def test_a_search_of_common_words_saved_before_they_were_refused_says_so(
    alice, as_alice, corpus, query
):
    """Saving refuses it now; one saved before matches nothing, and says so, as
    the settings page does (topics.saved_searches.searches_for_nothing)."""
    common = SavedSearch.objects.create(
        user=alice, name="Common", query=query, syntax="search"
    )
    robots = as_alice.post(URL, {"name": "Robots", "query": "robot"}, format="json")
    rule = as_alice.post(
        URL, {"name": "Rule", "query": "ti:agent", "syntax": "rule"}, format="json"
    )

    listed = {s["name"]: s for s in as_alice.get(URL).json()}

    assert listed["Common"]["searches_for_nothing"] is True
    assert as_alice.get(f"{URL}{common.pk}/").json()["searches_for_nothing"] is True
    assert robots.json()["searches_for_nothing"] is False
    assert rule.json()["searches_for_nothing"] is False
    assert listed["Robots"]["searches_for_nothing"] is False
    assert listed["Rule"]["searches_for_nothing"] is False


def test_the_schema_describes_searches_for_nothing_as_read_only(client):
    served = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    search = served.json()["components"]["schemas"]["SavedSearch"]

    field = search["properties"]["searches_for_nothing"]
    assert (field["type"], field["readOnly"]) == ("boolean", True)
    assert "finds no papers" in field["description"]
    assert "searches_for_nothing" in search["required"]
