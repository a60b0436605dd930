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
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

# After a failure, the cache is not asked again for this long.
BREAKER_SECONDS = 5.0
T = TypeVar("T")


class _Breaker:
    """Per process: open (skipping the cache) for a while after a failure."""

    open_until = 0.0

    @classmethod
    def call(cls, operation: Callable[[], T], fallback: T) -> T:
        if cls.open_until and time.monotonic() < cls.open_until:
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
        return _Breaker.call(
            lambda: RedisCacheClient.add(self, key, value, timeout), True
        )

    def get(self, key: Any, default: Any) -> Any:
        return _Breaker.call(lambda: RedisCacheClient.get(self, key, default), default)

    def set(self, key: Any, value: Any, timeout: Any) -> None:
        _Breaker.call(lambda: RedisCacheClient.set(self, key, value, timeout), None)

    def touch(self, key: Any, timeout: Any) -> bool:
        return _Breaker.call(lambda: RedisCacheClient.touch(self, key, timeout), False)

    def delete(self, key: Any) -> bool:
        return _Breaker.call(lambda: RedisCacheClient.delete(self, key), False)

    def get_many(self, keys: Any) -> dict[Any, Any]:
        return _Breaker.call(lambda: RedisCacheClient.get_many(self, keys), {})

    def has_key(self, key: Any) -> bool:
        return _Breaker.call(lambda: RedisCacheClient.has_key(self, key), False)

    def incr(self, key: Any, delta: int) -> int:
        missing = object()
        result = _Breaker.call(lambda: RedisCacheClient.incr(self, key, delta), missing)
        if result is missing:
            # What a missing key raises: counters start again.
            raise ValueError(f"Key {key!r} not found (the cache is unavailable)")
        return cast(int, result)

    def set_many(self, data: Mapping[Any, Any], timeout: Any) -> None:
        _Breaker.call(lambda: RedisCacheClient.set_many(self, data, timeout), None)

    def delete_many(self, keys: Any) -> None:
        _Breaker.call(lambda: RedisCacheClient.delete_many(self, keys), None)

    def clear(self) -> bool:
        return _Breaker.call(lambda: RedisCacheClient.clear(self), False)


class ResilientRedisCache(RedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = ResilientRedisCacheClient

    def validate_key(self, key: str) -> None:
        # Django warns of keys memcached could not store (long, or with spaces
        # or control characters) by reading every character of every key on
        # each call; Redis stores any key.
        return None
