"""Whole pages cached for visitors (not signed in), invalidated on every change.

A visitor's page is the same for everyone, so it is cached under its address and
a content version. Whatever changes what pages show — ingest, tagging, curation,
topic edits, momentum — calls `content_changed()`, which moves the version on
once the transaction commits, so every cached page is stale at once. Signed-in
readers' pages carry their follows and saves and are never cached.

With several web processes the cache must be shared (CACHE_URL=redis://...), or
one process's change would not reach the others' pages.
"""

from __future__ import annotations

import hashlib
import time
import zlib
from collections.abc import Callable
from functools import wraps

from django.core.cache import cache
from django.db import transaction
from django.http import HttpRequest
from django.http import HttpResponse

VERSION_KEY = "pages:version"
# Relative times ("last harvest 3 hours ago") are at most this old.
TIMEOUT = 5 * 60

View = Callable[..., HttpResponse]


def content_changed() -> None:
    """Make every cached page stale when the current transaction commits."""
    transaction.on_commit(lambda: cache.set(VERSION_KEY, time.time_ns(), None))


def cache_for_visitors(view: View) -> View:
    @wraps(view)
    def cached_view(
        request: HttpRequest, *args: object, **kwargs: object
    ) -> HttpResponse:
        if (
            request.method != "GET"
            or request.user.is_authenticated
            or "messages" in request.COOKIES  # a one-off notice is waiting
        ):
            return view(request, *args, **kwargs)
        address = hashlib.sha256(request.get_full_path().encode()).hexdigest()
        key = f"pages:{address}"
        # One round trip: the current version and the page stored with its own.
        found = cache.get_many([VERSION_KEY, key])
        version = found.get(VERSION_KEY)
        if version is None:
            version = time.time_ns()
            cache.add(VERSION_KEY, version, None)
        entry = found.get(key)
        if entry is not None and entry[0] == version:
            return _response(entry)
        response = view(request, *args, **kwargs)
        if response.status_code == 200 and not response.cookies:
            cache.set(key, _entry(version, response), TIMEOUT)
        return response

    return cached_view


def _entry(version: int, response: HttpResponse) -> tuple[int, bytes, str]:
    # The body, compressed, and its type: a fraction of a pickled response to
    # send to and from the cache. Security headers are added again by the
    # middleware on the way out.
    return version, zlib.compress(response.content, 1), response["Content-Type"]


def _response(entry: tuple[int, bytes, str]) -> HttpResponse:
    _, body, content_type = entry
    return HttpResponse(zlib.decompress(body), content_type=content_type)
