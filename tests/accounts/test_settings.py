"""The settings page: digest preferences, API token, account deletion."""

from __future__ import annotations

import re
from datetime import UTC
from datetime import datetime

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.test import APIRequestFactory
from rest_framework.views import APIView

from accounts import tokens
from accounts.models import DIGEST_MAX_PAPERS
from accounts.models import DigestPreferences
from accounts.models import User
from papers.ingest.upsert import upsert_records
from papers.models import Paper
from papers.models import SavedPaper
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.models import Follow

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"
SETTINGS_URL = "/settings/"
DELETE_URL = "/settings/delete/"


@pytest.fixture
def library(alice, bob):
    """alice and bob each follow a topic and save a paper."""
    upsert_records([paper_record("2606.00001"), paper_record("2606.00002")])
    first, second = Paper.objects.order_by("arxiv_id")
    agents = make_topic("RL for LLM Agents")
    robots = make_topic("Robot Learning", rule="ti:robot")
    for user, topic, paper in [(alice, agents, first), (bob, robots, second)]:
        Follow.objects.create(user=user, topic=topic)
        SavedPaper.objects.create(user=user, paper=paper)
        DigestPreferences.objects.create(user=user)
        tokens.create_token(user=user)


class WhoAmI(APIView):
    permission_classes = [IsAuthenticated]

    def get(self, request):
        return Response({"email": request.user.email})


def test_url_is_named_settings():
    assert reverse("accounts:settings") == SETTINGS_URL


@pytest.mark.parametrize(
    ("method", "url", "back_to"),
    [
        ("get", SETTINGS_URL, SETTINGS_URL),
        ("post", SETTINGS_URL, SETTINGS_URL),
        # A button's POST comes back to the page it is on, which a GET opens.
        ("post", "/settings/token/create/", SETTINGS_URL),
        ("post", "/settings/token/rotate/", SETTINGS_URL),
        ("post", "/settings/token/revoke/", SETTINGS_URL),
        ("get", DELETE_URL, DELETE_URL),
        ("post", DELETE_URL, DELETE_URL),
    ],
)
def test_anonymous_visitor_is_sent_to_login_with_next(client, method, url, back_to):
    response = getattr(client, method)(url)

    assert response.status_code == 302
    assert response.url == f"{reverse('account_login')}?next={back_to}"


def test_first_visit_creates_default_digest_preferences(reader, alice):
    response = reader.get(SETTINGS_URL)

    assert response.status_code == 200
    assert DigestPreferences.objects.get(user=alice).frequency == "weekly"
    assert 'class="brand"' in response.text
    assert 'name="frequency"' in response.text
    # What a digest holds: all three kinds of what a reader follows.
    assert (
        "An email with the new papers in the topics you follow, by the authors you "
        "follow and matching your saved searches." in response.text
    )
    assert reverse("account_email") in response.text
    assert reverse("account_change_password") in response.text
    assert DELETE_URL in response.text


@pytest.mark.parametrize("url", [SETTINGS_URL, DELETE_URL])
def test_forms_read_as_every_form_of_the_site(reader, url):
    """Fields as on allauth's pages (partials/form_fields.html): no colon after
    a label, help text under it."""
    page = reader.get(url).text

    assert ":</label>" not in page
    if url == SETTINGS_URL:
        assert '<label for="id_frequency">How often</label>' in page
        assert 'id="id_weekday_helptext">For weekly digests.</div>' in page


def test_header_links_to_settings_when_signed_in(reader, client):
    assert f'href="{SETTINGS_URL}"' in reader.get("/").text
    assert f'href="{SETTINGS_URL}"' not in client.get("/").text


def test_saves_digest_preferences(reader, alice):
    data = {
        "frequency": "daily",
        "weekday": "4",
        "hour": "18",
        "time_zone": "Europe/Berlin",
        "max_papers": "50",
    }
    response = reader.post(SETTINGS_URL, data, follow=True)

    assert response.redirect_chain == [(SETTINGS_URL, 302)]
    assert 'role="status">Your digest preferences are saved.' in response.text
    preferences = DigestPreferences.objects.get(user=alice)
    assert (preferences.frequency, preferences.weekday, preferences.hour) == (
        "daily",
        4,
        18,
    )
    assert preferences.time_zone == "Europe/Berlin"
    assert preferences.max_papers == 50


def test_the_time_zones_offered_are_places_by_their_names_today(reader, alice):
    """Not the 599 names tz keeps for old ones (W-SU, Africa/Timbuktu); a
    reader's zone stored under one (a browser's Asia/Calcutta) is kept."""
    DigestPreferences.objects.update_or_create(
        user=alice, defaults={"time_zone": "Asia/Calcutta"}
    )

    page = reader.get(SETTINGS_URL)
    select = page.context["digest_form"]["time_zone"].field.widget
    offered = [value for value, _ in select.choices]
    saved = reader.post(SETTINGS_URL, weekly_at_8_in("Asia/Calcutta"))

    assert {"UTC", "Europe/Berlin", "Asia/Kolkata", "America/New_York"} <= set(offered)
    assert not {"W-SU", "Africa/Timbuktu", "US/Eastern", "Etc/GMT+5"} & set(offered)
    assert len(offered) < 450
    assert '<option value="Asia/Calcutta" selected>' in page.text
    # The names also taken, which site.js offers where a browser gives one.
    also = select.attrs["data-also-valid"].split()
    assert "Asia/Saigon" in also
    assert not {"Asia/Calcutta", "Europe/Berlin", "Etc/Unknown"} & set(also)
    assert saved.status_code == 302
    assert DigestPreferences.objects.get(user=alice).time_zone == "Asia/Calcutta"


def weekly_at_8_in(time_zone: str) -> dict[str, str]:
    """The digest form as sent: weekly, Mondays at 08:00 in this zone."""
    return {
        "frequency": "weekly",
        "weekday": "0",
        "hour": "8",
        "max_papers": "30",
        "time_zone": time_zone,
    }


def test_a_stored_zone_the_server_no_longer_knows_is_said_and_replaced(reader, alice):
    """Times on the page read in UTC, as the digests go; the form says why
    and offers only zones it takes, so that saving it unchanged works."""
    DigestPreferences.objects.update_or_create(
        user=alice, defaults={"time_zone": "US/Pacific-New", "frequency": "weekly"}
    )
    Follow.objects.create(user=alice, topic=make_topic("Agents"))

    page = reader.get(SETTINGS_URL)
    select = page.context["digest_form"]["time_zone"].field.widget
    saved = reader.post(SETTINGS_URL, weekly_at_8_in("America/Los_Angeles"))

    assert re.search(r"Next one \w+day \d+ \w+, 08:00 \(UTC\)", page.text)
    assert "US/Pacific-New" not in [value for value, _ in select.choices]
    assert (
        "“US/Pacific-New” is no longer a time zone this site knows: your digests "
        "come by UTC until you choose yours."
    ) in page.text
    assert saved.status_code == 302
    assert DigestPreferences.objects.get(user=alice).time_zone == "America/Los_Angeles"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("hour", "24"),
        ("hour", "-1"),
        ("max_papers", "0"),
        ("max_papers", str(DIGEST_MAX_PAPERS + 1)),
        ("time_zone", "Mars/Olympus_Mons"),
        ("time_zone", "localtime"),  # the server's zone, not the reader's
        ("frequency", "hourly"),
    ],
)
def test_rejects_bad_digest_values_and_keeps_the_old_ones(reader, alice, field, value):
    reader.get(SETTINGS_URL)
    data = {
        "frequency": "weekly",
        "weekday": "0",
        "hour": "8",
        "time_zone": "UTC",
        "max_papers": "30",
        field: value,
    }
    response = reader.post(SETTINGS_URL, data)

    assert response.status_code == 200
    assert field in response.context["digest_form"].errors
    assert 'class="errorlist' in response.text
    preferences = DigestPreferences.objects.get(user=alice)
    assert (preferences.hour, preferences.max_papers) == (8, 30)


def test_page_says_when_there_is_no_token(reader):
    response = reader.get(SETTINGS_URL)

    assert "You have no API token" in response.text
    assert "/settings/token/create/" in response.text
    assert "/settings/token/revoke/" not in response.text


def test_creates_a_token_and_shows_its_key_once(reader, alice):
    response = reader.post("/settings/token/create/", follow=True)

    token = Token.objects.get(user=alice)
    # At the section showing the key, which is below the top of the page.
    assert response.redirect_chain == [(SETTINGS_URL + "#token-heading", 302)]
    assert token.key in response.text
    assert f"Authorization: Token {token.key}" in response.text
    assert "created" in response.text
    assert "/settings/token/rotate/" in response.text
    assert token.key not in reader.get(SETTINGS_URL).text


def test_the_token_is_dated_in_the_readers_time_zone(reader, alice):
    DigestPreferences.objects.update_or_create(
        user=alice, defaults={"time_zone": "Asia/Tokyo"}
    )
    token = tokens.create_token(user=alice)
    Token.objects.filter(pk=token.pk).update(
        created=datetime(2026, 12, 5, 20, 30, tzinfo=UTC)
    )

    page = reader.get(SETTINGS_URL).text

    assert "You have a token, created 6 December 2026, 05:30 (Asia/Tokyo)." in page


def test_create_keeps_an_existing_token(reader, alice):
    key = tokens.create_token(user=alice).key

    response = reader.post("/settings/token/create/", follow=True)

    assert Token.objects.get(user=alice).key == key
    assert key not in response.text
    assert "already have an API token" in response.text


def test_rotate_changes_the_key(reader, alice):
    old_key = tokens.create_token(user=alice).key

    response = reader.post("/settings/token/rotate/", follow=True)

    new_key = Token.objects.get(user=alice).key
    assert new_key != old_key
    assert new_key in response.text
    assert not Token.objects.filter(key=old_key).exists()


def test_revoke_removes_the_token(reader, alice, bob):
    tokens.create_token(user=alice)
    tokens.create_token(user=bob)

    response = reader.post("/settings/token/revoke/", follow=True)

    assert not Token.objects.filter(user=alice).exists()
    assert Token.objects.filter(user=bob).exists()
    assert "token is revoked" in response.text
    assert tokens.revoke_token(user=alice) is False


def test_rotating_a_revoked_token_from_an_older_page_makes_none(reader, alice):
    response = reader.post("/settings/token/rotate/", follow=True)

    assert "You had no API token, so none was made; create one." in response.text
    assert not Token.objects.filter(user=alice).exists()


def test_token_operations_refuse_get(reader, alice):
    for action in ["create", "rotate", "revoke"]:
        assert reader.get(f"/settings/token/{action}/").status_code == 405
    assert not Token.objects.filter(user=alice).exists()


def test_the_key_authenticates_an_api_request(alice):
    old_key = tokens.create_token(user=alice).key
    new_key = tokens.rotate_token(user=alice).key
    factory = APIRequestFactory()

    def status_with(key: str) -> int:
        request = factory.get("/", HTTP_AUTHORIZATION=f"Token {key}")
        return WhoAmI.as_view()(request).status_code

    # A refused key is 401 with a challenge: token auth comes first.
    assert status_with(new_key) == 200
    assert status_with(old_key) == 401
    tokens.revoke_token(user=alice)
    assert status_with(new_key) == 401


def test_delete_page_warns_and_asks_for_the_password(reader, library):
    response = reader.get(DELETE_URL)

    assert response.status_code == 200
    assert "cannot be undone" in response.text
    # Everything that goes (accounts.deletion), counted, none as "no".
    text = " ".join(response.text.split())
    assert "the topics and authors you follow (1 topic, no authors)" in text
    assert "your saved searches (no searches)" in text
    assert "your library (1 paper) and your ratings of papers (no ratings)" in text
    assert "the questions you asked (no questions)" in text
    assert "your private feed's address" in response.text
    assert 'type="password"' in response.text


def test_delete_with_wrong_password_keeps_everything(reader, alice, library):
    response = reader.post(DELETE_URL, {"password": "wrong horse"})

    assert response.status_code == 200
    assert "not your password" in response.text
    assert User.objects.filter(pk=alice.pk).exists()
    assert Follow.objects.filter(user=alice).count() == 1
    assert SavedPaper.objects.filter(user=alice).count() == 1
    assert reader.get(SETTINGS_URL).status_code == 200


def test_delete_removes_the_user_and_their_data(reader, alice, bob, library):
    response = reader.post(DELETE_URL, {"password": PASSWORD}, follow=True)

    assert response.redirect_chain == [("/", 302)]
    assert "account and all its data are deleted" in response.text
    assert not User.objects.filter(pk=alice.pk).exists()
    for model in [Follow, SavedPaper, DigestPreferences, Token]:
        assert not model.objects.filter(user_id=alice.pk).exists()
        assert model.objects.filter(user=bob).count() == 1
    assert Paper.objects.count() == 2
    # Signed out: settings now asks for a login.
    assert reader.get(SETTINGS_URL).status_code == 302


def test_delete_is_rate_limited(reader, alice, settings):
    settings.ACCOUNT_RATE_LIMITS = {"reauthenticate": "2/m/user"}
    for _ in range(2):
        reader.post(DELETE_URL, {"password": "wrong horse"})

    response = reader.post(DELETE_URL, {"password": PASSWORD})

    assert response.status_code == 429
    assert User.objects.filter(pk=alice.pk).exists()
