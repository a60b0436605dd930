"""The live OpenAPI schema, checked by schemathesis against the running API, and
the docs page under the site's Content-Security-Policy."""

from __future__ import annotations

import re

import pytest
import schemathesis
from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.signals import request_finished
from django.core.signals import request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from rest_framework.authtoken.models import Token
from rest_framework.throttling import SimpleRateThrottle
from schemathesis.specs.openapi.checks import response_schema_conformance

import tests.api.schemathesis_hooks  # noqa: F401  (formats and ranges, as the CLI)
from accounts.models import DigestPreferences
from tests.api.conftest import assert_error

pytestmark = pytest.mark.django_db

# Bounded: examples per operation and generation mode (valid and invalid input),
# for each caller. Every check runs, positive_data_acceptance and
# negative_data_rejection included: what the schema allows is accepted and
# what it forbids refused.
EXAMPLES = 30
STAFF_KEY = "5" * 40


@pytest.fixture
def api_schema(corpus, monkeypatch, settings):
    """The schema served at /api/schema/, calling the app in-process.

    The calls share the test's database transaction: Django's per-request
    connection clean-up (which would close it) is off meanwhile, as in Django's
    own test client. No rate limits: a 429 would only hide what is behind it.
    """
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    for scope in ("anon", "user"):
        monkeypatch.setitem(SimpleRateThrottle.THROTTLE_RATES, scope, None)
    settings.MOMENTUM_ASK_RATE = "100000/hour"
    settings.MOMENTUM_FLAG_RATE = "100000/hour"
    settings.MOMENTUM_SAVED_SEARCHES_MAX = 1000  # no limit hides what is behind it
    yield schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application())
    for signal in (request_started, request_finished):
        signal.connect(close_old_connections)


schema = schemathesis.pytest.from_fixture("api_schema")
# schemathesis asks for gzip as requests does, and its WSGI calls read the
# body as sent, never inflated: the API's answers are read uncompressed
# (tests/core/test_compression.py has the compressed ones).
PLAIN = {"Accept-Encoding": "identity"}
examples = hypothesis_settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)


@pytest.mark.slow
@schema.parametrize()
@examples
def test_api_matches_its_schema_for_staff(case, curator):
    # Each example starts with the curator's known token: a generated call may
    # have rotated or revoked it.
    Token.objects.filter(user=curator).delete()
    Token.objects.create(user=curator, key=STAFF_KEY)
    case.call_and_validate(headers={**PLAIN, "Authorization": f"Token {STAFF_KEY}"})


@pytest.mark.slow
@schema.parametrize()
@examples
def test_api_matches_its_schema_for_visitors(case):
    case.call_and_validate(headers=PLAIN)


def test_a_stored_zone_the_server_no_longer_knows_is_read_as_the_schema_says(
    api_schema, alice
):
    """A zone a tzdata upgrade moved out (Debian's tzdata-legacy) is read back
    as stored, which the schema's list of zones did not allow: a client whose
    generated types hold that list failed to read such a reader's settings."""
    DigestPreferences.objects.create(user=alice, time_zone="US/Pacific-New")
    key = Token.objects.create(user=alice).key
    case = api_schema["/api/v1/me/digest/"]["GET"].Case(
        headers={"Authorization": f"Token {key}"}
    )

    response = case.call()

    assert response.json()["time_zone"] == "US/Pacific-New"
    case.validate_response(response, checks=[response_schema_conformance])
    # A write still names the zones it takes, and the stored one is not among them.
    components = api_schema.raw_schema["components"]["schemas"]
    write = components["PatchedDigestPreferencesRequest"]["properties"]["time_zone"]
    assert write["allOf"] == [{"$ref": "#/components/schemas/TimeZoneEnum"}]
    assert "Europe/Paris" in components["TimeZoneEnum"]["enum"]
    assert "US/Pacific-New" not in components["TimeZoneEnum"]["enum"]


def test_schema_describes_every_endpoint(client):
    served = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    paths = served.json()["paths"]
    assert set(paths) >= {
        "/api/v1/papers/",
        "/api/v1/papers/{arxiv_id}/",
        "/api/v1/topics/",
        "/api/v1/topics/{slug}/",
        "/api/v1/topics/{slug}/papers/",
        "/api/v1/topics/{slug}/retag/",
        "/api/v1/topics/{slug}/papers/{arxiv_id}/not-relevant/",
        "/api/v1/me/",
        "/api/v1/me/digest/",
        "/api/v1/me/follows/",
        "/api/v1/me/follows/{slug}/",
        "/api/v1/me/saved/",
        "/api/v1/me/saved/{arxiv_id}/",
        "/api/v1/me/followed-authors/",
        "/api/v1/me/followed-authors/{author_id}/",
        "/api/v1/me/token/",
        "/api/v1/me/token/rotate/",
        "/api/v1/ingest-runs/",
        "/api/v1/feed-sources/",
    }
    for path, operations in paths.items():
        for method, operation in operations.items():
            assert operation.get("summary") or operation.get("description"), (
                path,
                method,
            )
            responses = operation["responses"]
            # Any request may be malformed, carry a bad token or be throttled.
            assert {"400", "401", "429"} <= set(responses), (path, method)
            errors = [code for code in responses if code.startswith(("4", "5"))]
            for code in errors:
                schema_ref = responses[code]["content"]["application/json"]["schema"]
                assert schema_ref == {"$ref": "#/components/schemas/Error"}


def test_schema_names_the_errors_of_the_paper_lists(client):
    served = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    paths = served.json()["paths"]
    papers = paths["/api/v1/papers/"]["get"]
    topic_papers = paths["/api/v1/topics/{slug}/papers/"]["get"]

    assert "saved" in papers["responses"]["401"]["description"]
    assert "topic" in papers["responses"]["404"]["description"]
    # The path names the topic there: no `topic` parameter to refuse.
    assert "topic" not in {p["name"] for p in topic_papers["parameters"]}
    cursor = next(p for p in papers["parameters"] if p["name"] == "cursor")
    assert cursor["schema"]["pattern"] == r"^[0-9]{1,6}\.[0-9]{1,18}$"


def test_schema_says_a_topic_write_answers_with_its_validators(client):
    """Which the next write sends back (tests/api/test_topics.py); required, so
    the schema tests find a write without them."""
    served = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    paths = served.json()["paths"]
    topic = paths["/api/v1/topics/{slug}/"]
    writes = [
        topic["put"]["responses"]["200"],
        topic["patch"]["responses"]["200"],
        paths["/api/v1/topics/"]["post"]["responses"]["201"],
    ]

    for answer in writes:
        headers = answer["headers"]
        assert {"ETag", "Last-Modified", "Content-Location"} <= set(headers)
        assert all(header["required"] for header in headers.values())
    assert set(writes[-1]["headers"]) - set(writes[0]["headers"]) == {"Location"}
    assert "If-Match" in topic["patch"]["description"]


def test_docs_page_says_its_language_and_holds_the_docs_in_its_main_landmark(client):
    """Screen readers pick the voice from lang; landmarks let them skip to the docs."""
    html = client.get("/api/docs/").text

    assert '<html lang="en">' in html
    assert '<main id="swagger-ui"></main>' in html


def test_docs_page_loads_only_scripts_and_styles_of_this_site(client):
    page = client.get("/api/docs/")
    policy = page["Content-Security-Policy"]

    assert page.status_code == 200
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy
    html = page.text
    assert "<style" not in html
    # Every script is loaded from this site; none is inline.
    assert re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", html) == []
    urls = [
        u.replace("&amp;", "&") for u in re.findall(r'(?:src|href)="([^"]+)"', html)
    ]
    assert len(urls) == 6  # favicon, two stylesheets, three scripts
    for url in urls:
        assert url.startswith("/"), url
        if url.startswith(settings.STATIC_URL):
            assert finders.find(url.removeprefix(settings.STATIC_URL)), url
        else:  # the start-up script, from the docs view itself
            script = client.get(url)
            assert script.status_code == 200
            assert script["Content-Type"] == "application/javascript"
            assert "SwaggerUIBundle(" in script.text


@pytest.mark.parametrize("query", [{"format": "xml"}, {"format": "openapi"}])
def test_a_format_the_schema_does_not_come_in_is_a_json_404(client, query):
    response = client.get("/api/schema/", query)

    error = assert_error(response, 404, "not_found")
    # It says which formats there are.
    assert "yaml" in error["message"]
    assert "json" in error["message"]


def test_a_schema_media_type_not_offered_is_a_json_406(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/xml")
    assert_error(response, 406, "not_acceptable")


@pytest.mark.parametrize(
    ("query", "accept", "served"),
    [
        ({}, "*/*", "application/vnd.oai.openapi; charset=utf-8"),
        ({"format": "yaml"}, "*/*", "application/vnd.oai.openapi; charset=utf-8"),
        ({"format": "json"}, "*/*", "application/vnd.oai.openapi+json"),
        ({}, "application/vnd.oai.openapi+json", "application/vnd.oai.openapi+json"),
        ({}, "application/json", "application/json"),
    ],
)
def test_the_schema_comes_in_yaml_or_json(client, query, accept, served):
    response = client.get("/api/schema/", query, HTTP_ACCEPT=accept)
    assert response.status_code == 200
    assert response["Content-Type"] == served
    assert b"Momentum API" in response.content


@pytest.mark.parametrize(
    "query",
    [{"version": "zz"}, {"format": "json", "lang": "de", "versoin": "2"}],
)
def test_the_schema_refuses_parameters_it_does_not_read(client, query):
    """?version=zz was written into the schema's version and its file's name."""
    response = client.get("/api/schema/", query)

    error = assert_error(response, 400, "invalid")
    unknown = {"code": "unknown_parameter", "message": "Unknown query parameter."}
    assert error["fields"] == {
        name: [unknown] for name in set(query) - {"format", "lang"}
    }


def test_the_schema_takes_a_parameter_once(client):
    response = client.get("/api/schema/?format=json&format=yaml")

    error = assert_error(response, 400, "invalid")
    assert error["fields"]["format"][0]["code"] == "repeated_parameter"


def test_the_schema_comes_in_the_language_asked_for(client):
    english = client.get("/api/schema/", {"format": "json"})
    german = client.get("/api/schema/", {"format": "json", "lang": "de"})

    assert english.status_code == german.status_code == 200
    assert german["Content-Type"] == "application/vnd.oai.openapi+json"
    # Django words a user's first name itself, so knows it in German.
    assert "Vorname" in german.text
    assert "Vorname" not in english.text
