"""Pages, feeds and the API go out gzip-compressed to a client that accepts it
(core.compression)."""

from __future__ import annotations

import gzip
import json
import zlib
from gzip import FNAME

import pytest
from django.utils.cache import has_vary_header
from django.utils.text import compress_string

from accounts import feed_tokens
from core.compression import LEVEL_ONCE
from core.compression import Streams

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
    # The 304 says what the answer it stands for said (RFC 9110): it named the
    # strong ETag and no Vary, and a shared cache then served the compressed
    # copy to a client that reads no gzip.
    assert poll["ETag"] == first["ETag"]
    assert has_vary_header(poll, "Accept-Encoding")
    plain = client.get(
        "/topics/rl-for-llm-agents/feed/",
        HTTP_IF_NONE_MATCH=first["ETag"].removeprefix("W/"),
    )
    assert plain.status_code == 304
    assert plain["ETag"] == first["ETag"].removeprefix("W/")
    assert has_vary_header(plain, "Accept-Encoding")


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


class CountedCompress:
    """zlib's compress (which gzip.compress, and so Django's compress_string,
    calls), counting its calls."""

    def __init__(self) -> None:
        self.calls = 0
        self.compress = zlib.compress

    def __call__(self, *args, **kwargs) -> bytes:
        self.calls += 1
        return self.compress(*args, **kwargs)


@pytest.fixture
def compressions(monkeypatch) -> CountedCompress:
    counted = CountedCompress()
    monkeypatch.setattr(zlib, "compress", counted)
    return counted


def padding(packed: bytes) -> bytes:
    """The gzip header's file name: Django's random padding ("Heal The
    Breach")."""
    assert packed[3] == FNAME
    return packed[10 : packed.index(b"\0", 10)]


def test_a_page_served_again_is_not_compressed_again(client, corpus, compressions):
    """A cached page's hit cost 0.4 ms of CPU and compressing it 2.7 ms more:
    its compressed stream is kept (core.compression.Streams)."""
    path = corpus["agents"].get_absolute_url()
    first, second = client.get(path, **GZIP), client.get(path, **GZIP)
    compressions.calls = 0

    served = [client.get(path, **GZIP) for _ in range(20)]

    assert compressions.calls == 0
    plain = client.get(path).content
    assert unzipped(first) == unzipped(second) == plain
    assert all(unzipped(response) == plain for response in served)
    # Each response has padding of its own, as Django's: the bytes differ
    # from one response to the next, and so does their length.
    assert len({response.content for response in served}) > 1
    assert len({len(padding(response.content)) for response in served}) > 1
    assert all(set(padding(response.content)) <= {ord("a")} for response in served)


def test_a_kept_stream_is_sent_as_django_would_compress_the_body(client, corpus):
    path = corpus["agents"].get_absolute_url()
    for _ in range(3):
        served = client.get(path, **GZIP).content
    body = client.get(path).content

    django = compress_string(body, max_random_bytes=100)
    assert django[:3] + django[4:10] == served[:3] + served[4:10]
    assert django[10 + len(padding(django)) :] == served[10 + len(padding(served)) :]


def test_a_body_seen_once_is_compressed_and_not_kept(compressions):
    streams = Streams(kept_bytes=10_000)
    body = b"a search's results " * 100

    # Fast: it serves one response (a kept one is compressed as Django does).
    fast = gzip.compress(body, compresslevel=LEVEL_ONCE, mtime=0)
    compressions.calls = 0

    stream = streams.deflated(body)

    assert gzip.decompress(stream) == body
    assert stream == fast
    assert streams.deflated(b"another search " * 100)
    assert (compressions.calls, streams.size) == (2, 0)


def test_a_body_seen_twice_is_kept_until_newer_ones_fill_the_room(compressions):
    streams = Streams(kept_bytes=10_000)
    pages = [bytes([n]) * 3_000 for n in range(4)]
    for page in pages[:3]:
        streams.deflated(page), streams.deflated(page)
    compressions.calls = 0

    assert gzip.decompress(streams.deflated(pages[0])) == pages[0]
    assert compressions.calls == 0  # pages[0] is now the newest used
    streams.deflated(pages[3]), streams.deflated(pages[3])
    assert compressions.calls == 2
    # pages[1] went to make room (least recently used); pages[0] stayed.
    streams.deflated(pages[0]), streams.deflated(pages[2])
    assert compressions.calls == 2
    streams.deflated(pages[1])
    assert compressions.calls == 3
    assert streams.size <= 10_000


def test_a_body_larger_than_the_room_is_never_kept(compressions):
    streams = Streams(kept_bytes=1_000)
    body = b"x" * 2_000
    for _ in range(3):
        assert gzip.decompress(streams.deflated(body)) == body

    assert (compressions.calls, streams.size) == (3, 0)
