"""Pages, feeds and the API sent gzip-compressed (docs/website.md)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.middleware import gzip

# Set on a response its view keeps uncompressed (`uncompressed`).
EXEMPT = "compression_exempt"


class GZipMiddleware(gzip.GZipMiddleware):
    """Django's, which pads each body with random bytes against BREACH, but
    not for an event stream, whose events gzip would hold in its buffer until
    the answer ends (an Ask answer, written as the model writes it), nor for a
    response its view keeps uncompressed."""

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        streamed_events = response.get("Content-Type", "").startswith(
            "text/event-stream"
        )
        if streamed_events or getattr(response, EXEMPT, False):
            return response
        return super().process_response(request, response)


def uncompressed(
    view: Callable[..., HttpResponseBase],
) -> Callable[..., HttpResponseBase]:
    """A view whose page shows a long-lived secret (the private feed's
    address), sent as it is. Compressed, its size could give the secret away,
    a character at a time, to one who can put text of their own beside it and
    watch the sizes go by (BREACH). The settings page echoes nothing of a
    request today; it is opened rarely, so compressing it gains little, and
    its safety need not rest on its template staying so."""

    @wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> HttpResponseBase:
        response = view(*args, **kwargs)
        setattr(response, EXEMPT, True)
        return response

    return wrapped
