"""Pages, feeds and the API go out gzip-compressed to a client that accepts it
(core.compression)."""

from __future__ import annotations

import gzip
import json

import pytest
from django.utils.cache import has_vary_header

from accounts import feed_tokens

pytestmark = pytest.mark.django_db

GZIP = {"HTTP_ACCEPT_ENCODING": "gzip, deflate, br"}


def unzipped(response) -> bytes:
    assert response["Content-Encoding"] == "gzip"
    assert has_vary_header(response, "Accept-Encoding")
    return gzip.decompress(response.getvalue())


@pytest.mark.usefixtures("corpus")
@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/papers/2606.00001/",
        "/topics/rl-for-llm-agents/feed/",
        "/api/v1/papers/",
    ],
)
def test_pages_feeds_and_the_api_are_sent_compressed(client, path):
    packed = client.get(path, **GZIP)
    plain = client.get(path)

    assert (packed.status_code, plain.status_code) == (200, 200)
    assert unzipped(packed) == plain.content
    assert int(packed["Content-Length"]) == len(packed.content)
    # A client that does not say it reads gzip gets the body as it was.
    assert "Content-Encoding" not in plain
    assert has_vary_header(plain, "Accept-Encoding")


def test_a_cached_topic_page_is_sent_compressed_each_time(
    client, corpus, django_assert_num_queries
):
    path = corpus["agents"].get_absolute_url()
    rendered = client.get(path, **GZIP)
    with django_assert_num_queries(0):  # the page cache's hit (papers.pagecache)
        served = client.get(path, **GZIP)
    plain = client.get(path)

    assert unzipped(rendered) == unzipped(served) == plain.content
    assert b"Agent 1" in plain.content


def test_the_data_download_is_streamed_compressed(reader):
    packed = reader.get("/settings/data/", **GZIP)
    plain = reader.get("/settings/data/")

    assert packed.streaming
    assert "Content-Length" not in packed
    data, expected = json.loads(unzipped(packed)), json.loads(plain.getvalue())
    del data["exported_at"], expected["exported_at"]
    assert data == expected


@pytest.mark.usefixtures("corpus")
def test_a_feed_readers_poll_is_answered_by_the_compressed_feeds_etag(client):
    """The ETag is made of the body before it is compressed, so it stays the
    same from one poll to the next (gzip's random padding would change it
    every time); compressed, it is weak (W/), which If-None-Match matches."""
    first = client.get("/topics/rl-for-llm-agents/feed/", **GZIP)
    again = client.get("/topics/rl-for-llm-agents/feed/", **GZIP)
    poll = client.get(
        "/topics/rl-for-llm-agents/feed/", HTTP_IF_NONE_MATCH=first["ETag"], **GZIP
    )

    assert first["ETag"].startswith('W/"')
    assert again["ETag"] == first["ETag"]
    assert (poll.status_code, poll.content) == (304, b"")
    assert "Content-Encoding" not in poll
    # The 304 names the strong ETag (Django compresses no 304): a reader that
    # keeps it is answered the same.
    assert poll["ETag"] == first["ETag"].removeprefix("W/")
    next_poll = client.get(
        "/topics/rl-for-llm-agents/feed/", HTTP_IF_NONE_MATCH=poll["ETag"], **GZIP
    )
    assert next_poll.status_code == 304


@pytest.mark.usefixtures("corpus")
def test_an_api_clients_poll_is_a_304_with_the_compressed_bodys_etag(anonymous):
    first = anonymous.get("/api/v1/papers/", **GZIP)
    poll = anonymous.get("/api/v1/papers/", HTTP_IF_NONE_MATCH=first["ETag"], **GZIP)

    assert first["Content-Encoding"] == "gzip"
    assert (poll.status_code, poll.content) == (304, b"")
    assert "Content-Encoding" not in poll
    # If-Match compares strongly: the weak ETag does not hold, its value does.
    strong = first["ETag"].removeprefix("W/")
    assert (
        anonymous.get("/api/v1/papers/", HTTP_IF_MATCH=first["ETag"]).status_code == 412
    )
    assert anonymous.get("/api/v1/papers/", HTTP_IF_MATCH=strong).status_code == 200


@pytest.mark.usefixtures("corpus")
def test_a_response_of_a_few_bytes_is_left_as_it_is(client):
    moved = client.get("/papers/arXiv:2606.00001/", **GZIP)

    assert moved.status_code == 301
    assert "Content-Encoding" not in moved


def test_whitenoises_static_files_are_its_own_not_compressed_each_time(client):
    """WhiteNoise sends a file compressed at collectstatic where compressing
    gains (production); nothing compresses one again on each request."""
    response = client.get("/static/favicon.svg", **GZIP)

    assert response.status_code == 200
    assert "Content-Encoding" not in response
    assert not has_vary_header(response, "Accept-Encoding")


def test_the_health_probe_is_answered_before_anything_compresses(client):
    """Its few hundred bytes, asked every few seconds, are not worth it."""
    response = client.get("/healthz", **GZIP)

    assert response.status_code == 200
    assert json.loads(response.content)["database"] == "ok"


def test_the_settings_page_with_the_private_feeds_address_is_never_compressed(
    reader, alice
):
    """BREACH: a long-lived secret in a compressed page can be read from the
    page's compressed sizes by one who can add text of their own to it."""
    key = feed_tokens.create_feed(alice)
    page = reader.get("/settings/", **GZIP)

    assert key in page.text
    assert "Content-Encoding" not in page
