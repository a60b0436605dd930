"""Count a request's cache round trips: each `get` and each `get_many` is one
(the local-memory cache's get_many calls get for each key; those are not)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

from django.core.cache import caches


@contextmanager
def cache_round_trips() -> Iterator[list[object]]:
    """The keys each round trip asked for (a key, or a tuple of them), in order."""
    cache = caches["default"]
    trips: list[object] = []
    get, get_many = cache.get, cache.get_many
    inside_many = False

    def one(key: str, *args: object, **kwargs: object) -> object:
        if not inside_many:
            trips.append(key)
        return get(key, *args, **kwargs)

    def many(keys: list[str], *args: object, **kwargs: object) -> dict:
        nonlocal inside_many
        trips.append(tuple(keys))
        inside_many = True
        try:
            return get_many(keys, *args, **kwargs)
        finally:
            inside_many = False

    with (
        mock.patch.object(cache, "get", one),
        mock.patch.object(cache, "get_many", many),
    ):
        yield trips
