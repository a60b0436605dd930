"""The shared cache (Redis), kept optional: while it is down, every call answers
as a miss would, and the site keeps serving.

What degrades while the cache is down, by design (logged when it goes and when
it comes back): pages and API bodies are rendered uncached; rate limits
(questions, flags, the API's throttles, allauth's) let requests through; a
stream ticket can be used more than once; each curator decision asks for its own
training instead of one per burst. Nothing is lost: all of it is rebuilt or
counted again once the cache is back. A circuit breaker skips the cache for a
few seconds after a failure, so an outage costs each process one connection
attempt every few seconds, not one per call.

A write lost meanwhile (a page version not moved, a signed-out session not
removed) would leave what the cache held before the outage to be served as
current once it is back: a process that lost one drops the cache's keys when it
reaches the cache again, so pages are built anew and sessions read from the
database, which holds every change.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any
from typing import TypeVar
from typing import cast

from django.core.cache.backends.redis import RedisCache
from django.core.cache.backends.redis import RedisCacheClient
from django.utils.functional import cached_property
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

# After a failure, the cache is not asked again for this long.
BREAKER_SECONDS = 5.0
T = TypeVar("T")


class _Breaker:
    """Per process: open (skipping the cache) for a while after a failure; and
    whether a write was lost since the cache last answered."""

    open_until = 0.0
    lost_writes = False

    @classmethod
    def is_open(cls) -> bool:
        return bool(cls.open_until) and time.monotonic() < cls.open_until

    @classmethod
    def call(cls, operation: Callable[[], T], fallback: T, *, write: bool) -> T:
        if cls.is_open():
            cls.lost_writes = cls.lost_writes or write
            return fallback
        try:
            result = operation()
        except RedisError as exc:
            if not cls.open_until:
                logger.warning(
                    "cache unavailable (%s): serving uncached, with rate limits "
                    "and one-time tickets open, until it is back",
                    exc,
                )
            cls.open_until = time.monotonic() + BREAKER_SECONDS
            cls.lost_writes = cls.lost_writes or write
            return fallback
        if cls.open_until:
            logger.warning("cache available again")
            cls.open_until = 0.0
        return result


class ResilientRedisCacheClient(RedisCacheClient):
    """Django's Redis client, answering as a miss while Redis fails."""

    # Set by RedisCacheClient.__init__; not in the stubs.
    _client: Callable[..., Any]
    _get_connection_pool: Callable[[bool], Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}
        self.own_keys = "*"  # the pattern of this cache's keys (set by its cache)

    def _call(
        self, operation: Callable[[], T], fallback: T, *, write: bool = False
    ) -> T:
        if _Breaker.lost_writes and not _Breaker.is_open():
            # Before this call reads what a lost write left stale.
            _Breaker.call(self._drop_stale_keys, None, write=False)
        return _Breaker.call(operation, fallback, write=write)

    def _drop_stale_keys(self) -> None:
        """The cache is back, and this process lost writes while it was not:
        drop this cache's keys (a broker on the same Redis keeps its own)."""
        client = self.get_client(write=True)
        keys = list(client.scan_iter(match=self.own_keys, count=1000))
        for start in range(0, len(keys), 1000):
            client.delete(*keys[start : start + 1000])
        _Breaker.lost_writes = False
        logger.warning(
            "cache: dropped %s keys that writes lost in the outage may have left stale",
            len(keys),
        )

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        # Django builds a redis.Redis for every call, and building one (its
        # table of response callbacks) costs more than the round trip itself.
        # A client is safe to share; one per connection pool, kept.
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)
        return client

    def add(self, key: Any, value: Any, timeout: Any) -> bool:
        # As if added: a debounce or a one-time ticket lets its caller go on.
        return self._call(
            lambda: RedisCacheClient.add(self, key, value, timeout), True, write=True
        )

    def get(self, key: Any, default: Any) -> Any:
        return self._call(lambda: RedisCacheClient.get(self, key, default), default)

    def set(self, key: Any, value: Any, timeout: Any) -> None:
        self._call(
            lambda: RedisCacheClient.set(self, key, value, timeout), None, write=True
        )

    def touch(self, key: Any, timeout: Any) -> bool:
        return self._call(
            lambda: RedisCacheClient.touch(self, key, timeout), False, write=True
        )

    def delete(self, key: Any) -> bool:
        return self._call(lambda: RedisCacheClient.delete(self, key), False, write=True)

    def get_many(self, keys: Any) -> dict[Any, Any]:
        return self._call(lambda: RedisCacheClient.get_many(self, keys), {})

    def has_key(self, key: Any) -> bool:
        return self._call(lambda: RedisCacheClient.has_key(self, key), False)

    def incr(self, key: Any, delta: int) -> int:
        missing = object()
        result = self._call(
            lambda: RedisCacheClient.incr(self, key, delta), missing, write=True
        )
        if result is missing:
            # What a missing key raises: counters start again.
            raise ValueError(f"Key {key!r} not found (the cache is unavailable)")
        return cast(int, result)

    def set_many(self, data: Mapping[Any, Any], timeout: Any) -> None:
        self._call(
            lambda: RedisCacheClient.set_many(self, data, timeout), None, write=True
        )

    def delete_many(self, keys: Any) -> None:
        self._call(lambda: RedisCacheClient.delete_many(self, keys), None, write=True)

    def clear(self) -> bool:
        return self._call(lambda: RedisCacheClient.clear(self), False, write=True)


class ResilientRedisCache(RedisCache):
    # Set by RedisCache.__init__; not in the stubs.
    _servers: list[str]
    _options: dict[str, Any]

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = ResilientRedisCacheClient

    @cached_property
    def _cache(self) -> ResilientRedisCacheClient:
        client = ResilientRedisCacheClient(self._servers, **self._options)
        client.own_keys = self.make_key("*")
        return client

    def validate_key(self, key: str) -> None:
        # Django warns of keys memcached could not store (long, or with spaces
        # or control characters) by reading every character of every key on
        # each call; Redis stores any key.
        return None
