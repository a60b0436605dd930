"""Answers to a signed-in request are the reader's own."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest
from django.http import HttpResponse
from django.utils.cache import patch_cache_control


def private_answers(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    """Middleware: an answer to a request signed in by a session or an API
    token (their settings with a new key, their library, their answers) may be
    kept by no shared cache, unless its view said how it may be kept. A page is
    kept by no browser either (`private, no-store`): its back/forward cache
    keeps a `no-cache` one, and Back after logging out would show the reader's
    pages again, or after a change elsewhere their state as it was. Data (the
    API, feeds) is kept only to ask again with its validators (`no-cache`)."""

    def middleware(request: HttpRequest) -> HttpResponse:
        response = get_response(request)
        if response.has_header("Cache-Control"):
            return response
        user = getattr(request, "user", None)
        if "Authorization" in request.headers or (user and user.is_authenticated):
            page = response.get("Content-Type", "").startswith("text/html")
            kept = {"no_store": True} if page else {"no_cache": True}
            patch_cache_control(response, private=True, **kept)
        return response

    return middleware
