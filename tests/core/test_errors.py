"""The pages and API answers for requests refused before any view answers
(core.errors, core.api.errors)."""

from __future__ import annotations

import io
import logging
import re

import pytest
from django.test import Client

from tests.clients import signed_in

pytestmark = pytest.mark.django_db

TOO_MANY = "&".join(["page_size=5"] * 1001)
LAYOUT_MARK = '<a class="brand" href="/">Momentum</a>'


@pytest.mark.parametrize("address", ["/api/v1/papers/", "/api/v1/topics/"])
def test_too_many_parameters_are_the_clients_fault_in_the_api(client, address):
    response = client.get(f"{address}?{TOO_MANY}")

    assert response.status_code == 400
    assert response.json()["error"] == {
        "code": "parse_error",
        "message": "The request is malformed: too many parameters, or too large a "
        "body.",
    }


def test_too_many_parameters_on_a_page_get_the_sites_own_page(client):
    response = client.get(f"/search/?{TOO_MANY}")

    assert response.status_code == 400
    assert LAYOUT_MARK in response.text
    assert "<h1>Bad request</h1>" in response.text


def test_a_form_sent_with_an_expired_token_says_so_in_the_site(alice):
    """The page was opened before its reader logged in again in another tab."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)

    response = client.post(
        "/papers/2606.00001/save/",
        {"csrfmiddlewaretoken": "x" * 64, "on": "1"},
        headers={"Referer": "http://testserver/topics/"},
    )

    assert response.status_code == 403
    assert LAYOUT_MARK in response.text
    assert "<h1>This form has expired</h1>" in response.text
    assert (
        '<a href="http://testserver/topics/">Go back to the page</a>' in response.text
    )
    assert "DEBUG" not in response.text


def test_a_form_address_opened_as_a_page_says_what_it_is(alice):
    response = signed_in(alice).get("/digest/test/")

    assert response.status_code == 405
    assert response["Allow"] == "POST"
    assert LAYOUT_MARK in response.text
    assert "<h1>Nothing to show here</h1>" in response.text


def test_an_api_address_without_its_slash_leads_to_it(client, alice):
    read = client.get("/api/v1/papers?page_size=5")
    docs = client.get("/api/docs")
    written = signed_in(alice).post("/api/v1/me/searches", {"q": "x"})

    assert (read.status_code, read["Location"]) == (301, "/api/v1/papers/?page_size=5")
    assert (docs.status_code, docs["Location"]) == (301, "/api/docs/")
    assert written.status_code == 404
    assert written.json()["error"]["message"] == (
        "No API endpoint at /api/v1/me/searches; the address ends in a slash: "
        "/api/v1/me/searches/"
    )
    assert client.get("/api/v1/nothing").status_code == 404


@pytest.mark.parametrize("method", ["trace", "options", "put", "delete"])
def test_a_page_asked_with_another_method_is_refused_not_served(client, method):
    response = getattr(client, method)("/search/?q=graph")

    assert response.status_code == 405
    assert response["Allow"] == "GET, HEAD, POST"
    assert f"a {method.upper()} request does nothing here" in response.text


@pytest.mark.parametrize("address", ["/search/", "/api/v1/papers/"])
def test_a_host_the_site_does_not_serve_is_told_so_plainly(client, address):
    response = client.get(address, headers={"Host": "evil.example"})

    assert response.status_code == 400
    assert response.text == "This server does not answer for that host."


def _broken(*args, **kwargs):
    raise RuntimeError("database on fire")


@pytest.fixture
def console():
    """What LOGGING's console handler writes (its filters, its format)."""
    [handler] = [h for h in logging.getLogger().handlers if h.name == "console"]
    written = io.StringIO()
    stream = handler.setStream(written)
    yield written
    handler.setStream(stream)


def test_a_server_error_page_gives_the_id_its_log_lines_carry(client, console):
    """A reader who writes in quotes the reference; the log finds the request."""
    client.raise_request_exception = False
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("papers.views.get_paper", _broken)
        response = client.get("/papers/2606.00100/")

    reference = response["X-Request-ID"]
    assert re.fullmatch("[0-9a-f]{32}", reference)
    assert response.status_code == 500
    assert f"quote its reference: <code>{reference}</code>" in response.text
    assert f" ERROR [{reference}] django.request " in console.getvalue()
    assert "database on fire" in console.getvalue()


def test_a_server_error_in_the_api_before_its_view_is_json_too(client):
    """Failing in a middleware, before DRF's handler (tests/api/test_errors.py
    has a view's): taking the tracking parameter off."""
    client.raise_request_exception = False
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("core.tracking.escape_uri_path", _broken)
        response = client.get("/api/v1/papers/2606.00100/?utm_source=x")

    assert response.status_code == 500
    assert response.json()["error"] == {
        "code": "server_error",
        "message": "Something went wrong on our side.",
        "reference": response["X-Request-ID"],
    }


def test_a_proxys_request_id_is_kept_and_anything_else_replaced(client, console):
    """nginx's $request_id is 32 hex digits; a header of anything else would
    write what a client likes into the logs."""
    given = "0123456789abcdef0123456789abcdef"

    kept = client.get("/robots.txt", headers={"X-Request-ID": given})
    hostile = [
        client.get("/robots.txt", headers={"X-Request-ID": forged})
        for forged in ("x] ERROR forged", "forged-by-the-client-ERROR")
    ]

    assert kept["X-Request-ID"] == given
    assert all(re.fullmatch("[0-9a-f]{32}", r["X-Request-ID"]) for r in hostile)
    assert "forged" not in console.getvalue()
