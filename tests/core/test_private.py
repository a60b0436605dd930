"""Answers to signed-in requests are kept by no shared cache (core.private)."""

from __future__ import annotations

import pytest

from tests.clients import token_client

pytestmark = pytest.mark.django_db


@pytest.mark.usefixtures("corpus")
@pytest.mark.parametrize(
    "path", ["/saved/", "/", "/topics/rl-for-llm-agents/", "/digest/preview/"]
)
def test_a_readers_pages_are_theirs_alone_and_kept_by_no_browser(reader, path):
    """A `no-cache` page stayed in the back/forward cache: Back after logging
    out showed the reader's library again."""
    response = reader.get(path)

    assert response.status_code == 200
    assert response["Cache-Control"] == "private, no-store"


def test_the_settings_page_with_its_keys_is_never_stored(reader):
    assert "no-store" in reader.get("/settings/")["Cache-Control"]


def test_the_apis_answers_to_a_token_are_private(alice):
    response = token_client(alice).get("/api/v1/me/")

    assert "private" in response["Cache-Control"]


@pytest.mark.usefixtures("corpus")
def test_a_visitors_pages_are_left_as_they_are(client):
    assert not client.get("/topics/rl-for-llm-agents/").has_header("Cache-Control")
