"""The caller's own data: profile, digest, follows, saved papers, API token."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.models import DIGEST_MAX_PAPERS
from accounts.models import DigestPreferences
from papers.models import Paper
from papers.models import SavedPaper
from tests.api.conftest import assert_error
from tests.clients import token_client
from topics.models import Follow

pytestmark = pytest.mark.django_db


def test_profile_reads_and_updates_names_only(as_alice, alice):
    assert as_alice.get("/api/v1/me/").json()["email"] == "alice@example.com"
    refused = as_alice.patch(
        "/api/v1/me/",
        {"first_name": "Alice", "email": "evil@example.com", "is_staff": True},
        format="json",
    )
    named = as_alice.patch("/api/v1/me/", {"first_name": "Alice"}, format="json")

    # Said, not dropped: a client would think the address had changed.
    error = assert_error(refused, 400, "invalid")
    assert error["fields"] == {
        "email": [{"code": "read_only", "message": "Read-only: it cannot be changed."}],
        "is_staff": [
            {"code": "read_only", "message": "Read-only: it cannot be changed."}
        ],
    }
    assert named.status_code == 200
    alice.refresh_from_db()
    assert (alice.first_name, alice.email, alice.is_staff) == (
        "Alice",
        "alice@example.com",
        False,
    )


@pytest.mark.parametrize(
    ("address", "body"),
    [
        ("/api/v1/me/digest/", {"frequncy": "daily"}),
        ("/api/v1/me/searches/", {"name": "x", "query": "ti:x", "sintax": "rule"}),
        ("/api/v1/me/follows/", {"topic": "robot-learning", "mute": True}),
    ],
)
def test_a_misspelt_body_field_is_refused_not_dropped(as_alice, corpus, address, body):
    send = as_alice.patch if address.endswith("digest/") else as_alice.post

    error = assert_error(send(address, body, format="json"), 400, "invalid")

    (typo,) = set(body) - {"name", "query", "topic"}
    assert error["fields"] == {
        typo: [{"code": "unknown_field", "message": "Unknown field."}]
    }


@pytest.mark.parametrize(
    ("caller", "address"),
    [
        ("as_alice", "/api/v1/me/token/"),
        ("as_alice", "/api/v1/me/token/rotate/"),
        (
            "as_alice",
            "/api/v1/topics/rl-for-llm-agents/papers/2606.00100/not-relevant/",
        ),
        ("as_staff", "/api/v1/topics/robot-learning/retag/"),
    ],
)
def test_an_operation_that_takes_no_body_refuses_one(caller, address, corpus, request):
    """A parameter put in the body by mistake was dropped and the call went
    on (a rotated key); a body that is not JSON went unread."""
    client = request.getfixturevalue(caller)

    keyed = client.post(address, {"keep_old": True}, format="json")
    broken = client.generic("POST", address, "{not json", "application/json")

    error = assert_error(keyed, 400, "invalid")
    assert error["fields"] == {
        "keep_old": [{"code": "unknown_field", "message": "Unknown field."}]
    }
    assert_error(broken, 400, "parse_error")
    # {} or nothing: the operation's own answer (me/token/: 409, a token exists).
    for empty in (client.post(address, {}, format="json"), client.post(address)):
        assert empty.status_code != 400, empty.content


def test_a_delete_refuses_a_body(as_alice, corpus):
    """{"muted": true} on an unfollow was dropped, and the follow went."""
    as_alice.post("/api/v1/me/follows/", {"topic": "robot-learning"}, format="json")
    address = "/api/v1/me/follows/robot-learning/"

    keyed = as_alice.delete(address, {"muted": True}, format="json")
    broken = as_alice.generic("DELETE", address, "{not json", "application/json")

    assert assert_error(keyed, 400, "invalid")["fields"] == {
        "muted": [{"code": "unknown_field", "message": "Unknown field."}]
    }
    assert_error(broken, 400, "parse_error")
    assert as_alice.delete(address).status_code == 204


def test_digest_preferences_default_then_update(as_alice, alice):
    assert as_alice.get("/api/v1/me/digest/").json() == {
        "frequency": "weekly",
        "weekday": 0,
        "hour": 8,
        "time_zone": "UTC",
        "max_papers": 30,
    }
    response = as_alice.patch(
        "/api/v1/me/digest/",
        {"frequency": "daily", "hour": 23, "time_zone": "Europe/Paris"},
        format="json",
    )
    assert response.status_code == 200
    preferences = DigestPreferences.objects.get(user=alice)
    assert (preferences.frequency, preferences.hour) == ("daily", 23)


def test_digest_preferences_read_then_written_back_unchanged_are_taken(as_alice, alice):
    """A stored zone this server no longer knows (a tzdata upgrade) is sent back
    as read: taken, not refused, as it was, while the zone stays as it is."""
    DigestPreferences.objects.create(user=alice, time_zone="US/Pacific-New")
    read = as_alice.get("/api/v1/me/digest/").json()

    written = as_alice.put("/api/v1/me/digest/", {**read, "hour": 9}, format="json")
    moved = as_alice.patch(
        "/api/v1/me/digest/", {"time_zone": "Asia/Calcutta"}, format="json"
    )
    back = as_alice.patch(
        "/api/v1/me/digest/", {"time_zone": "US/Pacific-New"}, format="json"
    )

    assert read["time_zone"] == "US/Pacific-New"
    assert written.status_code == 200
    assert moved.status_code == 200
    # Once changed, the unknown name is refused as any other.
    assert "time_zone" in assert_error(back, 400, "invalid")["fields"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"hour": 24}, "hour"),
        ({"hour": -1}, "hour"),
        ({"max_papers": 0}, "max_papers"),
        ({"max_papers": DIGEST_MAX_PAPERS + 1}, "max_papers"),
        ({"frequency": "hourly"}, "frequency"),
        ({"weekday": 7}, "weekday"),
        ({"time_zone": "Mars/Olympus"}, "time_zone"),
        ({"hour": "eight"}, "hour"),
    ],
)
def test_digest_preferences_follow_the_forms_rules(as_alice, body, field):
    response = as_alice.patch("/api/v1/me/digest/", body, format="json")
    assert field in assert_error(response, 400, "invalid")["fields"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"hour": "7"}, "hour"),
        ({"hour": 7.0}, "hour"),
        ({"hour": True}, "hour"),
        ({"weekday": "3"}, "weekday"),
        ({"weekday": True}, "weekday"),
        ({"frequency": ["daily"]}, "frequency"),
        ({"time_zone": " UTC"}, "time_zone"),
    ],
)
def test_digest_preferences_take_json_types_as_the_schema_says(
    as_alice, alice, body, field
):
    response = as_alice.patch("/api/v1/me/digest/", body, format="json")
    assert field in assert_error(response, 400, "invalid")["fields"]
    assert not DigestPreferences.objects.filter(user=alice).exclude(hour=8).exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"first_name": 7}, "first_name"),
        ({"last_name": False}, "last_name"),
        ({"first_name": "x" * 150 + " "}, "first_name"),
        ({"first_name": "Ada\x00"}, "first_name"),
        ({"first_name": "Ren\u00e9\x1b[31m"}, "first_name"),
        # An unclosed right-to-left override turns the text after it around.
        ({"last_name": "\u202eecalevol"}, "last_name"),
    ],
)
def test_profile_names_are_strings_as_sent(as_alice, body, field):
    response = as_alice.patch("/api/v1/me/", body, format="json")
    assert field in assert_error(response, 400, "invalid")["fields"]


def test_profile_names_are_stored_without_surrounding_whitespace(as_alice, alice):
    response = as_alice.patch("/api/v1/me/", {"first_name": " Ada  "}, format="json")

    assert response.json()["first_name"] == "Ada"
    alice.refresh_from_db()
    assert alice.first_name == "Ada"


def test_a_name_may_be_cleared_and_its_error_says_what_is_refused(as_alice, alice):
    """A name may be empty (admin and sign-up leave it so): the error for one
    of whitespace alone said it "may not be blank", which "" is."""
    alice.first_name = "Ada"
    alice.save()

    cleared = as_alice.patch("/api/v1/me/", {"first_name": ""}, format="json")
    spaces = as_alice.patch("/api/v1/me/", {"first_name": "  "}, format="json")
    control = as_alice.patch("/api/v1/me/", {"last_name": "Ada\x07"}, format="json")

    assert cleared.status_code == 200, cleared.content
    alice.refresh_from_db()
    assert alice.first_name == ""
    messages = [
        assert_error(spaces, 400, "invalid")["fields"]["first_name"][0]["message"],
        assert_error(control, 400, "invalid")["fields"]["last_name"][0]["message"],
    ]
    for message in messages:
        assert message == (
            "This field may be empty, but not whitespace alone, and may not "
            "hold control characters."
        )


@pytest.mark.parametrize(
    ("weekday", "message"),
    [
        (7, "7 is not a valid choice."),
        (-1, "-1 is not a valid choice."),
        ("3", '"3" is not a valid choice.'),
        (True, "true is not a valid choice."),
    ],
)
def test_a_weekday_not_offered_is_named_as_sent(as_alice, weekday, message):
    response = as_alice.patch("/api/v1/me/digest/", {"weekday": weekday}, format="json")

    error = assert_error(response, 400, "invalid")["fields"]["weekday"][0]
    assert error["message"] == message


def test_the_schema_gives_the_weekday_its_choices_and_no_other_bounds(anonymous):
    schema = anonymous.get("/api/schema/", {"format": "json"}).json()["components"]

    for component in ("DigestPreferencesRequest", "PatchedDigestPreferencesRequest"):
        weekday = schema["schemas"][component]["properties"]["weekday"]
        assert "maximum" not in weekday
        assert "minimum" not in weekday
    assert schema["schemas"]["WeekdayEnum"]["enum"] == [0, 1, 2, 3, 4, 5, 6]


def test_follow_list_and_unfollow(as_alice, as_bob, alice, corpus):
    response = as_alice.post(
        "/api/v1/me/follows/", {"topic": "robot-learning"}, format="json"
    )
    assert response.status_code == 201
    assert response.json()["topic"] == {
        "slug": "robot-learning",
        "name": "Robot Learning",
    }
    again = as_alice.post(
        "/api/v1/me/follows/", {"topic": "robot-learning"}, format="json"
    )
    # Idempotent, and says so: nothing was created.
    assert again.status_code == 200
    assert again.json()["topic"]["slug"] == "robot-learning"
    assert Follow.objects.filter(user=alice).count() == 1

    assert [f["topic"]["slug"] for f in as_alice.get("/api/v1/me/follows/").json()] == [
        "robot-learning"
    ]
    assert as_bob.get("/api/v1/me/follows/").json() == []
    # Bob unfollowing changes nothing of Alice's.
    assert as_bob.delete("/api/v1/me/follows/robot-learning/").status_code == 204
    assert Follow.objects.filter(user=alice).count() == 1
    assert as_alice.delete("/api/v1/me/follows/robot-learning/").status_code == 204
    assert as_alice.delete("/api/v1/me/follows/robot-learning/").status_code == 204
    assert not Follow.objects.filter(user=alice).exists()


def test_mute_a_followed_topic_in_digests(as_alice, alice, corpus):
    as_alice.post("/api/v1/me/follows/", {"topic": "robot-learning"}, format="json")
    url = "/api/v1/me/follows/robot-learning/"

    response = as_alice.patch(url, {"muted": True}, format="json")

    assert response.status_code == 200
    assert response.json()["muted"] is True
    assert Follow.objects.get(user=alice).muted
    assert as_alice.patch(url, {"muted": "loud"}, format="json").status_code == 400
    assert as_alice.patch(url, {"muted": 0}, format="json").status_code == 400
    assert Follow.objects.get(user=alice).muted


def test_patching_a_follow_without_muted_changes_nothing(as_alice, alice, corpus):
    as_alice.post("/api/v1/me/follows/", {"topic": "robot-learning"}, format="json")

    response = as_alice.patch("/api/v1/me/follows/robot-learning/", {}, format="json")

    assert response.status_code == 200
    assert response.json()["muted"] is False
    assert not Follow.objects.get(user=alice).muted


@pytest.mark.parametrize("body", [{}, {"topic": 5}, {"topic": None}, {"topic": [1]}])
def test_following_needs_a_topic_slug(as_alice, corpus, body):
    response = as_alice.post("/api/v1/me/follows/", body, format="json")
    assert "topic" in assert_error(response, 400, "invalid")["fields"]


@pytest.mark.parametrize("slug", ["nope", "robot-learning\x00"])
def test_following_a_topic_that_does_not_exist_is_a_404(as_alice, corpus, slug):
    response = as_alice.post("/api/v1/me/follows/", {"topic": slug}, format="json")
    error = assert_error(response, 404, "not_found")
    assert error["fields"]["topic"][0]["code"] == "does_not_exist"


def test_following_an_inactive_topic_is_a_404(as_alice, corpus):
    corpus["robots"].is_active = False
    corpus["robots"].save()

    response = as_alice.post(
        "/api/v1/me/follows/", {"topic": "robot-learning"}, format="json"
    )

    assert "topic" in assert_error(response, 404, "not_found")["fields"]


def test_save_list_and_unsave(as_alice, as_bob, alice, corpus):
    response = as_alice.post(
        "/api/v1/me/saved/", {"paper": "2606.00100v1"}, format="json"
    )
    assert response.status_code == 201
    assert response.json()["paper"]["arxiv_id"] == "2606.00100"
    first = as_alice.post("/api/v1/me/saved/", {"paper": "math/0601001"}, format="json")
    again = as_alice.post("/api/v1/me/saved/", {"paper": "math/0601001"}, format="json")
    assert (first.status_code, again.status_code) == (201, 200)

    listed = as_alice.get("/api/v1/me/saved/").json()
    assert listed["count"] == 2
    assert [s["paper"]["arxiv_id"] for s in listed["results"]] == [
        "math/0601001",
        "2606.00100",
    ]
    assert listed["results"][0]["saved_at"]
    assert as_bob.get("/api/v1/me/saved/").json()["count"] == 0

    assert as_alice.delete("/api/v1/me/saved/math/0601001v2/").status_code == 204
    assert list(
        SavedPaper.objects.filter(user=alice).values_list("paper__arxiv_id", flat=True)
    ) == ["2606.00100"]


@pytest.mark.parametrize(
    "paper", ["garbage", "", None, 12, "2606.00100\n", "arXiv:2606.00100"]
)
def test_saving_needs_an_arxiv_id(as_alice, corpus, paper):
    response = as_alice.post("/api/v1/me/saved/", {"paper": paper}, format="json")
    assert "paper" in assert_error(response, 400, "invalid")["fields"]


@pytest.mark.parametrize("paper", ["2606.99999", "2606.99999v2", "math/0601999"])
def test_saving_a_paper_that_does_not_exist_is_a_404(as_alice, corpus, paper):
    response = as_alice.post("/api/v1/me/saved/", {"paper": paper}, format="json")
    error = assert_error(response, 404, "not_found")
    assert error["fields"]["paper"][0]["code"] == "does_not_exist"


def test_saved_pages_are_refused_past_the_end_and_over_the_maximum(as_alice, corpus):
    assert_error(as_alice.get("/api/v1/me/saved/?page=2"), 404, "not_found")
    assert_error(as_alice.get("/api/v1/me/saved/?page_size=500"), 400, "invalid")


@pytest.mark.parametrize(
    ("component", "address"),
    [
        ("PaginatedSavedPaperList", "/api/v1/me/saved/"),
        ("PaginatedIngestRunList", "/api/v1/ingest-runs/"),
        ("PaginatedFeedSourceList", "/api/v1/feed-sources/"),
    ],
)
def test_the_schema_shows_the_page_links_of_the_list_itself(
    anonymous, settings, component, address
):
    """The docs' example of `next` named DRF's http://api.example.org/accounts/,
    a host and a list neither of which this API has."""
    settings.MOMENTUM_SITE_URL = "https://momentum.example.net"
    schema = anonymous.get("/api/schema/", {"format": "json"}).json()
    page = schema["components"]["schemas"][component]["properties"]

    site = "https://momentum.example.net" + address
    assert page["next"]["example"] == site + "?page=4"
    assert page["previous"]["example"] == site + "?page=2"


def test_saved_pages_list_papers_saved_at_one_moment_once_each(as_alice, alice, corpus):
    """Saves of one moment (a clock that ticks in milliseconds, or saves made
    together) had no order among them: a walk page by page listed some twice
    and others never. The later save comes first."""
    for paper in Paper.objects.order_by("?"):
        SavedPaper.objects.create(user=alice, paper=paper)
    SavedPaper.objects.update(created_at="2026-06-01T12:00Z")
    newest_first = [save.paper.arxiv_id for save in SavedPaper.objects.order_by("-id")]

    walked, address = [], "/api/v1/me/saved/?page_size=1"
    while address:
        page = as_alice.get(address).json()
        walked += [saved["paper"]["arxiv_id"] for saved in page["results"]]
        address = page["next"]

    assert sorted(walked) == sorted(newest_first)  # each once
    assert walked == newest_first


def test_token_create_rotate_revoke(alice):
    client = APIClient()
    client.force_authenticate(alice)
    assert client.get("/api/v1/me/token/").json() == {"exists": False, "created": None}

    created = client.post("/api/v1/me/token/")
    assert created.status_code == 201
    key = created.json()["key"]
    assert_error(client.post("/api/v1/me/token/"), 409, "token_exists")
    assert client.get("/api/v1/me/token/").json()["exists"] is True

    rotated = client.post("/api/v1/me/token/rotate/").json()["key"]
    assert rotated != key
    old = APIClient()
    old.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert_error(old.get("/api/v1/me/"), 401, "authentication_failed")
    new = APIClient()
    new.credentials(HTTP_AUTHORIZATION=f"Token {rotated}")
    assert new.get("/api/v1/me/").status_code == 200

    assert client.delete("/api/v1/me/token/").status_code == 204
    assert client.delete("/api/v1/me/token/").status_code == 204
    assert not Token.objects.filter(user=alice).exists()
    assert_error(new.get("/api/v1/me/"), 401, "authentication_failed")


def test_a_token_authenticates_and_a_missing_one_asks_for_it(alice):
    assert token_client(alice).get("/api/v1/me/").status_code == 200
    response = APIClient().get("/api/v1/me/")
    assert_error(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"] == "Token"


def test_session_writes_need_the_csrf_token(alice, corpus):
    client = APIClient(enforce_csrf_checks=True)
    client.login(email="alice@example.com", password="correct horse battery")
    assert client.get("/api/v1/me/").status_code == 200

    refused = client.post(
        "/api/v1/me/follows/", {"topic": "robot-learning"}, format="json"
    )
    assert_error(refused, 403, "csrf_failed")

    client.get("/topics/")  # any page sets the CSRF cookie
    token = client.cookies["csrftoken"].value
    accepted = client.post(
        "/api/v1/me/follows/",
        {"topic": "robot-learning"},
        format="json",
        HTTP_X_CSRFTOKEN=token,
    )
    assert accepted.status_code == 201


def test_reading_saved_papers_costs_fixed_queries(
    as_alice, alice, corpus, django_assert_max_num_queries
):
    from papers.library import set_saved

    for paper in Paper.objects.all():
        set_saved(alice, paper, True)
    with django_assert_max_num_queries(9):
        assert as_alice.get("/api/v1/me/saved/").json()["count"] == 9
