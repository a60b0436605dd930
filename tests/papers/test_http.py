from __future__ import annotations

import os
import threading
import time
import uuid
from itertools import pairwise

import httpx
import pytest
import redis
from pytest_httpserver import HTTPServer
from werkzeug import Request
from werkzeug import Response as WerkzeugResponse

from papers.ingest import http
from papers.ingest.http import FetchError
from papers.ingest.http import fetch
from papers.ingest.http import get_client
from papers.ingest.http import retry_after_seconds
from papers.ingest.ratelimit import LocalLimiter
from papers.ingest.ratelimit import RedisLimiter
from papers.ingest.ratelimit import get_limiter
from papers.ingest.records import size_text

# What export.arxiv.org/oai2 sent with its 503 (recorded 2025).
ARXIV_RETRY_BODY = "<html><body>\n<h1>Retry after 10 seconds</h1>\n</body></html>\n"


@pytest.fixture
def redis_url(settings) -> str:
    """The test Redis, read before http_settings blanks REDIS_URL."""
    return settings.REDIS_URL


@pytest.fixture(autouse=True)
def http_settings(settings, redis_url):
    settings.MOMENTUM_SITE_URL = "https://momentum.example"
    settings.MOMENTUM_CONTACT_EMAIL = "ops@momentum.example"
    settings.MOMENTUM_ARXIV_MIN_INTERVAL = 0.0
    settings.MOMENTUM_HTTP_CONNECT_TIMEOUT = 2.0
    settings.MOMENTUM_HTTP_READ_TIMEOUT = 5.0
    settings.MOMENTUM_HTTP_MAX_ATTEMPTS = 5
    settings.MOMENTUM_HTTP_MAX_BYTES = 64 * 1024 * 1024
    # Most tests use the in-process limiter; the Redis ones bring their own keys.
    settings.REDIS_URL = ""
    return settings


@pytest.fixture(autouse=True)
def sleeps(monkeypatch) -> list[float]:
    """Backoff waits, recorded instead of slept."""
    recorded: list[float] = []
    monkeypatch.setattr(http, "backoff_sleep", recorded.append)
    return recorded


@pytest.fixture(scope="module")
def threaded_server():
    # The default server answers one request at a time, which would hide
    # overlapping requests and queue up a timed-out handler's successors.
    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    yield server
    server.clear()
    server.stop()


@pytest.fixture
def threaded_httpserver(threaded_server):
    threaded_server.clear()
    return threaded_server


@pytest.fixture
def redis_prefix(redis_url):
    """A key prefix of this test's own, deleted afterwards."""
    prefix = f"momentum:arxiv:test-{uuid.uuid4().hex}:"
    client = redis.Redis.from_url(redis_url)
    yield prefix
    keys = list(client.scan_iter(match=f"{prefix}*"))
    if keys:
        client.delete(*keys)
    client.close()


def test_sends_user_agent_and_uses_configured_timeouts(httpserver):
    agent = "Momentum/1.0 (+https://momentum.example; mailto:ops@momentum.example)"
    httpserver.expect_request("/api", headers={"User-Agent": agent}).respond_with_data(
        "ok"
    )

    response = fetch(httpserver.url_for("/api"), params={"id_list": "2508.13167"})

    assert (response.status, response.body, response.attempts) == (200, b"ok", 1)
    assert response.url.endswith("/api?id_list=2508.13167")
    assert get_client().timeout == httpx.Timeout(5.0, connect=2.0)


def test_rebuilds_the_client_when_timeouts_change(http_settings):
    before = get_client()
    http_settings.MOMENTUM_HTTP_READ_TIMEOUT = 0.5

    after = get_client()

    assert after is not before
    assert after.timeout.read == 0.5
    assert get_client() is after


def test_each_thread_gets_its_own_client():
    clients = []
    thread = threading.Thread(target=lambda: clients.append(get_client()))
    thread.start()
    thread.join()

    assert clients[0] is not get_client()


def test_a_forked_child_builds_its_own_client():
    # Celery prefork: a child must not share the parent's sockets.
    parent = get_client()
    pid = os.fork()
    if pid == 0:
        os._exit(0 if get_client() is not parent else 1)
    _, status = os.waitpid(pid, 0)

    assert os.waitstatus_to_exitcode(status) == 0


def test_round_trips_etag_and_last_modified_and_handles_304(httpserver):
    etag = '"a1b2"'
    modified = "Mon, 18 Aug 2025 20:00:00 GMT"
    httpserver.expect_ordered_request("/feed").respond_with_data(
        "<rss/>", headers={"ETag": etag, "Last-Modified": modified}
    )
    httpserver.expect_ordered_request(
        "/feed", headers={"If-None-Match": etag, "If-Modified-Since": modified}
    ).respond_with_data("", status=304, headers={"ETag": etag})

    first = fetch(httpserver.url_for("/feed"))
    second = fetch(
        httpserver.url_for("/feed"), etag=first.etag, last_modified=first.last_modified
    )

    assert (first.body, first.etag, first.last_modified) == (b"<rss/>", etag, modified)
    assert not first.not_modified
    assert second.not_modified
    assert (second.status, second.body) == (304, b"")
    # The 304 did not repeat Last-Modified; the caller's value is kept.
    assert (second.etag, second.last_modified) == (etag, modified)
    httpserver.check_assertions()


def test_waits_as_long_as_retry_after_says_on_503(httpserver, sleeps):
    httpserver.expect_ordered_request("/oai2").respond_with_data(
        ARXIV_RETRY_BODY,
        status=503,
        headers={"Retry-After": "10"},
        content_type="text/html",
    )
    httpserver.expect_ordered_request("/oai2").respond_with_data("<OAI-PMH/>")

    response = fetch(httpserver.url_for("/oai2"), params={"verb": "ListRecords"})

    assert (response.status, response.body, response.attempts) == (
        200,
        b"<OAI-PMH/>",
        2,
    )
    assert sleeps == [10.0]


def test_backs_off_with_jitter_after_429(httpserver, sleeps):
    httpserver.expect_ordered_request("/api").respond_with_data("slow down", 429)
    httpserver.expect_ordered_request("/api").respond_with_data("ok")

    response = fetch(httpserver.url_for("/api"))

    assert (response.body, response.attempts) == (b"ok", 2)
    assert len(sleeps) == 1
    assert 0 <= sleeps[0] <= http.BACKOFF_BASE


def test_gives_up_after_max_attempts_of_500(httpserver, sleeps):
    httpserver.expect_request("/api").respond_with_data("boom", status=500)
    url = httpserver.url_for("/api")

    with pytest.raises(FetchError, match="HTTP 500 after 5 attempts") as excinfo:
        fetch(url)

    assert excinfo.value.status == 500
    assert url in str(excinfo.value)
    assert len(httpserver.log) == 5
    # Full jitter: each wait lies anywhere below its doubling ceiling.
    assert len(sleeps) == 4
    for attempt, delay in enumerate(sleeps, 1):
        assert 0 <= delay <= http.BACKOFF_BASE * 2 ** (attempt - 1)


def test_fails_at_once_on_404(httpserver, sleeps):
    httpserver.expect_request("/api").respond_with_data("no such thing", status=404)

    with pytest.raises(FetchError, match="HTTP 404") as excinfo:
        fetch(httpserver.url_for("/api"))

    assert excinfo.value.status == 404
    assert len(httpserver.log) == 1
    assert sleeps == []


def test_fails_rather_than_wait_out_a_long_retry_after(httpserver, sleeps):
    httpserver.expect_request("/api").respond_with_data(
        "", status=503, headers={"Retry-After": "3600"}
    )

    with pytest.raises(FetchError, match="Retry-After 3600 s") as excinfo:
        fetch(httpserver.url_for("/api"))

    assert excinfo.value.status == 503
    assert len(httpserver.log) == 1
    assert sleeps == []


def test_retries_read_timeouts_then_fails(threaded_httpserver, http_settings, sleeps):
    http_settings.MOMENTUM_HTTP_READ_TIMEOUT = 0.1
    http_settings.MOMENTUM_HTTP_MAX_ATTEMPTS = 3

    def slow(request: Request) -> WerkzeugResponse:
        time.sleep(0.5)
        return WerkzeugResponse("late")

    threaded_httpserver.expect_request("/api").respond_with_handler(slow)

    with pytest.raises(FetchError, match="timed out after 3 attempts") as excinfo:
        fetch(threaded_httpserver.url_for("/api"))

    assert excinfo.value.status is None
    assert len(sleeps) == 2


@pytest.mark.parametrize("declared", [True, False], ids=["length", "chunked"])
def test_refuses_a_body_over_the_size_limit(httpserver, http_settings, declared):
    http_settings.MOMENTUM_HTTP_MAX_BYTES = 1024
    body = b"x" * 4096

    def big(request: Request) -> WerkzeugResponse:
        # A generator body goes out chunked, with no Content-Length to refuse.
        return WerkzeugResponse(body if declared else iter([body[:2048], body[2048:]]))

    httpserver.expect_request("/dump").respond_with_handler(big)

    with pytest.raises(FetchError, match="response larger than 1,024 bytes"):
        fetch(httpserver.url_for("/dump"))

    assert len(httpserver.log) == 1


def test_names_the_limit_in_mib():
    assert size_text(64 * 1024 * 1024) == "64 MiB"
    assert size_text(1500) == "1,500 bytes"


def test_reads_retry_after_as_an_http_date_on_the_servers_clock():
    # The server's clock is 2001; ours is not. Only the difference counts.
    headers = httpx.Headers(
        {
            "Date": "Mon, 01 Jan 2001 00:00:00 GMT",
            "Retry-After": "Mon, 01 Jan 2001 00:00:30 GMT",
        }
    )

    assert retry_after_seconds(headers) == 30.0


def test_ignores_an_unreadable_retry_after():
    assert retry_after_seconds(httpx.Headers({"Retry-After": "soon"})) is None
    assert retry_after_seconds(httpx.Headers({})) is None


# POLITENESS
# ------------------------------------------------------------------------------
class RequestClock:
    """A handler that records when each request arrived and when it finished."""

    def __init__(self) -> None:
        self.spans: list[tuple[float, float]] = []
        self._lock = threading.Lock()

    def __call__(self, request: Request) -> WerkzeugResponse:
        started = time.monotonic()
        time.sleep(0.05)  # long enough for an overlap to show
        with self._lock:
            self.spans.append((started, time.monotonic()))
        return WerkzeugResponse("ok")


def run_clients(url: str, limiters: list) -> None:
    errors: list[BaseException] = []

    def client(limiter) -> None:
        try:
            for _ in range(3):
                fetch(url, limiter=limiter)
        except BaseException as exc:  # surfaced in the test thread below
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(each,)) for each in limiters]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def assert_spaced(spans: list[tuple[float, float]], interval: float) -> None:
    spans = sorted(spans)
    assert len(spans) == 6
    for (start, end), (next_start, _) in pairwise(spans):
        assert next_start >= end, "requests overlapped"
        assert next_start - start >= interval
        # The interval runs from the end of one request to the start of the next.
        assert next_start - end >= interval


def test_spaces_requests_from_threads_of_one_process(threaded_httpserver, settings):
    settings.MOMENTUM_ARXIV_MIN_INTERVAL = 0.3
    clock = RequestClock()
    threaded_httpserver.expect_request("/api").respond_with_handler(clock)
    limiter = get_limiter()

    assert isinstance(limiter, LocalLimiter)
    run_clients(threaded_httpserver.url_for("/api"), [limiter, limiter])
    assert_spaced(clock.spans, 0.3)


def test_spaces_requests_from_two_machines_through_redis(
    threaded_httpserver, settings, redis_url, redis_prefix
):
    settings.MOMENTUM_ARXIV_MIN_INTERVAL = 0.3
    clock = RequestClock()
    threaded_httpserver.expect_request("/api").respond_with_handler(clock)
    # Two clients with their own connections stand for two machines.
    machines = [redis.Redis.from_url(redis_url) for _ in range(2)]
    limiters = [RedisLimiter(each, prefix=redis_prefix) for each in machines]

    run_clients(threaded_httpserver.url_for("/api"), limiters)

    assert_spaced(clock.spans, 0.3)
    for each in machines:
        each.close()


def test_waits_for_a_request_another_machine_just_finished(
    settings, redis_url, redis_prefix
):
    settings.MOMENTUM_ARXIV_MIN_INTERVAL = 0.3
    client = redis.Redis.from_url(redis_url)
    seconds, micros = client.time()
    client.set(f"{redis_prefix}last", f"{seconds}.{micros:06d}")

    started = time.monotonic()
    with RedisLimiter(client, prefix=redis_prefix).slot():
        waited = time.monotonic() - started

    assert waited >= 0.25  # less the round trip since the key was set
    client.close()


def test_records_the_finish_on_the_redis_clock_and_frees_the_lock(
    redis_url, redis_prefix
):
    client = redis.Redis.from_url(redis_url)

    with RedisLimiter(client, prefix=redis_prefix).slot():
        assert client.exists(f"{redis_prefix}lock")
        assert client.pttl(f"{redis_prefix}lock") > 0

    seconds, micros = client.time()
    assert float(client.get(f"{redis_prefix}last")) <= seconds + micros / 1e6
    assert not client.exists(f"{redis_prefix}lock")
    client.close()


def test_uses_redis_when_redis_url_is_set(settings, redis_url):
    settings.REDIS_URL = redis_url

    assert isinstance(get_limiter(), RedisLimiter)
