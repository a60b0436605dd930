"""Polite HTTP GETs to arXiv: spaced, one at a time, retried, size-capped.

Every attempt, retries included, runs inside a limiter slot, so all threads,
processes and machines together send at most one request per
MOMENTUM_ARXIV_MIN_INTERVAL seconds over one connection, as arXiv asks of
API clients. Callers catch FetchError; nothing else escapes `fetch`.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import replace
from datetime import UTC
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
import redis
from django.conf import settings

from papers.ingest.ratelimit import Keepalive
from papers.ingest.ratelimit import Limiter
from papers.ingest.ratelimit import get_limiter
from papers.ingest.records import size_text

logger = logging.getLogger(__name__)

# A longer Retry-After means arXiv wants us gone for a while: fail the run and
# let the next scheduled one try, rather than hold a worker asleep.
MAX_RETRY_AFTER = 120.0
BACKOFF_BASE = 2.0
BACKOFF_CAP = 60.0

# Patched in tests so backoff does not really sleep; limiters sleep on their own.
backoff_sleep: Callable[[float], None] = time.sleep


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    body: bytes
    etag: str
    last_modified: str
    not_modified: bool
    url: str
    attempts: int


class FetchError(Exception):
    """A fetch failed for good; the message names the URL and the last reason."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class _Transient:
    reason: str
    status: int | None = None
    retry_after: float | None = None


def fetch(
    url: str,
    *,
    params: dict[str, Any] | None = None,
    etag: str = "",
    last_modified: str = "",
    limiter: Limiter | None = None,
    max_bytes: int | None = None,
) -> Response:
    """GET `url` through the arXiv limiter, retrying transient failures; a body
    over `max_bytes` (default MOMENTUM_HTTP_MAX_BYTES) fails at once."""
    limiter = limiter or get_limiter()
    full_url = str(httpx.URL(url).copy_merge_params(params)) if params else url
    headers = _conditional_headers(etag, last_modified)
    max_attempts = max(1, settings.MOMENTUM_HTTP_MAX_ATTEMPTS)
    for attempt in range(1, max_attempts + 1):
        try:
            with limiter.slot() as keepalive:
                outcome = _attempt(full_url, headers, attempt, keepalive, max_bytes)
        except redis.RedisError as exc:
            raise FetchError(f"{full_url}: rate limiter failed: {exc}") from exc
        if isinstance(outcome, Response):
            return _fill_validators(outcome, etag, last_modified)
        if attempt == max_attempts:
            break
        delay = _retry_delay(full_url, outcome, attempt)
        logger.warning(
            "GET %s: %s, retrying in %.1f s (attempt %s of %s)",
            full_url,
            outcome.reason,
            delay,
            attempt,
            max_attempts,
        )
        backoff_sleep(delay)
    assert isinstance(outcome, _Transient)  # a Response returned above
    raise FetchError(
        f"{full_url}: {outcome.reason} after {max_attempts} attempts",
        status=outcome.status,
    )


def _conditional_headers(etag: str, last_modified: str) -> dict[str, str]:
    headers = {}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    return headers


def _fill_validators(response: Response, etag: str, last_modified: str) -> Response:
    # A 304 need not repeat the validators; keep the caller's so it can store
    # whatever comes back without special-casing.
    if not response.not_modified:
        return response
    return replace(
        response,
        etag=response.etag or etag,
        last_modified=response.last_modified or last_modified,
    )


def _attempt(
    url: str,
    headers: dict[str, str],
    attempt: int,
    keepalive: Keepalive,
    max_bytes: int | None = None,
) -> Response | _Transient:
    started = time.monotonic()
    try:
        with get_client().stream("GET", url, headers=headers) as response:
            body = _read_body(response, url, keepalive, max_bytes)
    except httpx.TimeoutException:
        return _Transient("timed out")
    except (httpx.NetworkError, httpx.RemoteProtocolError) as exc:
        return _Transient(f"connection failed ({type(exc).__name__}: {exc})")
    except httpx.HTTPError as exc:
        raise FetchError(f"{url}: {type(exc).__name__}: {exc}") from exc
    logger.info(
        "GET %s -> %s, %s bytes in %.2f s (attempt %s)",
        url,
        response.status_code,
        len(body),
        time.monotonic() - started,
        attempt,
    )
    return _outcome(url, response, body, attempt)


def _read_body(
    response: httpx.Response,
    url: str,
    keepalive: Keepalive,
    max_bytes: int | None = None,
) -> bytes:
    limit = max_bytes or settings.MOMENTUM_HTTP_MAX_BYTES
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise FetchError(f"{url}: response larger than {size_text(limit)}")
    chunks = []
    size = 0
    # Counted after decompression, so a small gzip bomb is refused as well.
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > limit:
            raise FetchError(f"{url}: response larger than {size_text(limit)}")
        chunks.append(chunk)
        keepalive()
    return b"".join(chunks)


def _outcome(
    url: str, response: httpx.Response, body: bytes, attempt: int
) -> Response | _Transient:
    status = response.status_code
    if status == 429 or status >= 500:
        return _Transient(
            f"HTTP {status}", status, retry_after_seconds(response.headers)
        )
    if status != 304 and not 200 <= status < 300:
        raise FetchError(f"{url}: HTTP {status}", status=status)
    return Response(
        status=status,
        body=body if status != 304 else b"",
        etag=response.headers.get("etag", ""),
        last_modified=response.headers.get("last-modified", ""),
        not_modified=status == 304,
        url=str(response.url),
        attempts=attempt,
    )


def _retry_delay(url: str, failure: _Transient, attempt: int) -> float:
    if failure.retry_after is None:
        # Full jitter: spreads retries of many workers over the whole window.
        return random.uniform(0, min(BACKOFF_CAP, BACKOFF_BASE * 2 ** (attempt - 1)))
    if failure.retry_after > MAX_RETRY_AFTER:
        raise FetchError(
            f"{url}: {failure.reason} with Retry-After {failure.retry_after:.0f} s, "
            f"more than {MAX_RETRY_AFTER:.0f} s",
            status=failure.status,
        )
    return failure.retry_after


def retry_after_seconds(headers: httpx.Headers) -> float | None:
    """Seconds a Retry-After header (delay or HTTP-date) asks for, or None."""
    value = headers.get("retry-after", "").strip()
    if value.isdigit():
        return float(value)
    when = _http_date(value)
    if when is None:
        return None
    # Measure against the server's own Date so our clock's skew cancels out.
    now = _http_date(headers.get("date", "")) or datetime.now(UTC)
    return max(0.0, (when - now).total_seconds())


def _http_date(value: str) -> datetime | None:
    try:
        parsed = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


# CLIENT
# ------------------------------------------------------------------------------
# One client per thread and per process. httpx does not promise that a Client
# is thread-safe, and a client inherited over fork() would share its sockets
# with the parent (Celery prefork), so each thread of each process builds its
# own on first use and then reuses its keep-alive connection.
_state = threading.local()


def get_client() -> httpx.Client:
    """The calling thread's client, rebuilt when the HTTP settings change."""
    config = _client_config()
    cached: tuple[object, httpx.Client] | None = getattr(_state, "client", None)
    if cached is not None and cached[0] == config:
        return cached[1]
    if cached is not None:
        cached[1].close()
    connect, read, agent = config
    client = httpx.Client(
        timeout=httpx.Timeout(read, connect=connect),
        headers={"User-Agent": agent},
        follow_redirects=True,
        # The limiter allows one request at a time, so one connection will do.
        limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
    )
    _state.client = (config, client)
    return client


def _client_config() -> tuple[float, float, str]:
    return (
        settings.MOMENTUM_HTTP_CONNECT_TIMEOUT,
        settings.MOMENTUM_HTTP_READ_TIMEOUT,
        user_agent(),
    )


def user_agent() -> str:
    """The User-Agent arXiv asks for: product, site and a contact address."""
    site = settings.MOMENTUM_SITE_URL
    return f"Momentum/1.0 (+{site}; mailto:{settings.MOMENTUM_CONTACT_EMAIL})"


def _after_fork() -> None:
    # Forget the parent's clients: their sockets are shared with the parent.
    global _state
    _state = threading.local()


os.register_at_fork(after_in_child=_after_fork)
