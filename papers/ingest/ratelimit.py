"""Spacing of arXiv requests across threads, processes and machines.

A limiter hands out slots: one at a time, each starting at least
MOMENTUM_ARXIV_MIN_INTERVAL seconds after the previous one finished. The slot
is held for the whole request, so arXiv also sees one connection at a time.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import threading
import time
from collections.abc import Callable
from collections.abc import Iterator
from contextlib import AbstractContextManager
from contextlib import contextmanager
from typing import Protocol

import redis
from django.conf import settings
from redis.exceptions import LockError
from redis.lock import Lock

logger = logging.getLogger(__name__)

KEY_PREFIX = "momentum:arxiv:"
# How long a RedisLimiter waits for its turn before giving up.
SLOT_WAIT_LIMIT = 600.0

# Called by the slot holder as a response streams in, to say it is still alive.
Keepalive = Callable[[], None]


class Limiter(Protocol):
    def slot(self) -> AbstractContextManager[Keepalive]: ...


def get_limiter() -> Limiter:
    """The arXiv limiter: shared through Redis when REDIS_URL is set, else local."""
    url = settings.REDIS_URL
    if url:
        return RedisLimiter(_redis_client(url))
    return _local_limiter


def _interval(override: float | None) -> float:
    if override is not None:
        return override
    return float(settings.MOMENTUM_ARXIV_MIN_INTERVAL)


def _noop() -> None:
    return None


class LocalLimiter:
    """Spaces the requests of one process's threads (the embedded default)."""

    def __init__(self, interval: float | None = None) -> None:
        self._interval = interval
        self._lock = threading.Lock()
        self._last = -math.inf

    @contextmanager
    def slot(self) -> Iterator[Keepalive]:
        with self._lock:
            wait = self._last + _interval(self._interval) - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            try:
                yield _noop
            finally:
                self._last = time.monotonic()


class RedisLimiter:
    """Spaces the requests of every worker on every machine sharing one Redis."""

    def __init__(
        self,
        client: redis.Redis,
        *,
        prefix: str = KEY_PREFIX,
        interval: float | None = None,
    ) -> None:
        self._client = client
        self._lock_key = f"{prefix}lock"
        self._last_key = f"{prefix}last"
        self._interval = interval

    @contextmanager
    def slot(self) -> Iterator[Keepalive]:
        interval = _interval(self._interval)
        lock = self._client.lock(
            self._lock_key,
            timeout=lock_timeout(),
            sleep=0.05,
            blocking_timeout=SLOT_WAIT_LIMIT,
        )
        if not lock.acquire():
            raise LockError(f"no slot within {SLOT_WAIT_LIMIT:.0f} s")
        try:
            wait = self._wait(interval)
            if wait > 0:
                time.sleep(wait)
                lock.reacquire()
            yield _LockKeepalive(lock)
        finally:
            self._finish(interval)
            _release(lock)

    def _wait(self, interval: float) -> float:
        # Both times come from the Redis server's clock, so machines whose own
        # clocks disagree still agree on when the last request finished.
        pipe = self._client.pipeline()
        pipe.time()
        pipe.get(self._last_key)
        (seconds, micros), last = pipe.execute()
        if last is None:
            return 0.0
        return float(last) + interval - (int(seconds) + int(micros) / 1e6)

    def _finish(self, interval: float) -> None:
        try:
            seconds, micros = self._client.time()
            self._client.set(
                self._last_key,
                f"{seconds}.{micros:06d}",
                ex=math.ceil(interval) + 60,
            )
        except redis.RedisError:
            logger.warning(
                "could not record the end of an arXiv request", exc_info=True
            )


def lock_timeout() -> float:
    """Seconds a dead holder keeps the arXiv lock: longer than any one silence."""
    # A live holder renews the lock after its wait and after every body chunk,
    # so the lock only has to outlast connecting plus sending plus waiting for
    # the first byte; each of those is bounded by a timeout.
    connect: float = settings.MOMENTUM_HTTP_CONNECT_TIMEOUT
    read: float = settings.MOMENTUM_HTTP_READ_TIMEOUT
    return connect + 2 * read + 10.0


class _LockKeepalive:
    """Renews the lock while a body streams in, at most once a second."""

    def __init__(self, lock: Lock) -> None:
        self._lock = lock
        self._renewed = time.monotonic()

    def __call__(self) -> None:
        if time.monotonic() - self._renewed < 1.0:
            return
        self._renewed = time.monotonic()
        try:
            self._lock.reacquire()
        except redis.RedisError:
            logger.warning("arXiv lock expired while a request was running")


def _release(lock: Lock) -> None:
    try:
        lock.release()
    except LockError:
        # It expired and may be someone else's now; their request is spaced
        # from ours by the "last" key anyway.
        logger.warning("arXiv lock expired before release")


@functools.cache
def _redis_client(url: str) -> redis.Redis:
    # redis-py clients are thread-safe and reconnect after fork by themselves.
    return redis.Redis.from_url(url)


_local_limiter = LocalLimiter()


def _after_fork() -> None:
    # The parent's lock may be held by a thread that does not exist in the child.
    global _local_limiter
    _local_limiter = LocalLimiter()
    _redis_client.cache_clear()


os.register_at_fork(after_in_child=_after_fork)
