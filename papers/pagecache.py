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
        version = cache.get_or_set(VERSION_KEY, time.time_ns, None)
        address = hashlib.sha256(request.get_full_path().encode()).hexdigest()
        key = f"pages:{version}:{address}"
        response = cache.get(key)
        if response is None:
            response = view(request, *args, **kwargs)
            if response.status_code == 200 and not response.cookies:
                cache.set(key, response, TIMEOUT)
        return response

    return cached_view
