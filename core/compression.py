"""Pages, feeds and the API sent gzip-compressed (docs/website.md)."""

from __future__ import annotations

import gzip
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import HttpRequest
from django.http import HttpResponse
from django.http.response import HttpResponseBase
from django.middleware import gzip as django_gzip
from django.utils.cache import patch_vary_headers

# Set on a response its view keeps uncompressed (`uncompressed`).
EXEMPT = "compression_exempt"

# Bodies and their compressed streams kept per process, in bytes. A topic's
# page and its stream take about 200 KB and a paper's about 86 KB, so 16 MiB
# keeps some 80 to 190 pages: of the order of the 128 filled pages a process
# keeps for visitors (papers.pagecache.FILLED_COPIES_KEPT), whose bodies the
# kept ones mostly are, the same objects, not copies. A page beyond it costs
# its compressing (2.7 ms for a topic's) again.
KEPT_BYTES = 16 * 1024 * 1024

# Bodies seen once, remembered by their hash (a few hundred KB), so that only
# one served a second time is kept: a search's or an API client's answer, or a
# page with a form (its CSRF token is masked anew in each response), is seen
# once and would otherwise push the pages read again and again out.
SEEN_ONCE_REMEMBERED = 4096

# gzip's levels: a body served once (a signed-in reader's page, whose form
# tokens differ in each response; a search) is compressed fast, as nginx does
# by default (a topic's page: 0.9 ms to 22 % of its size); one kept, once for
# many responses, as well as Django's compress_string does (2.6 ms to 18 %).
LEVEL_ONCE = 1
LEVEL_KEPT = 6


class Streams:
    """The gzip stream of each body served more than once, without Django's
    random padding (that is added to each response, `padded`): the same body
    always compresses to the same stream (gzip writes no time here), so
    a page served from the page cache's copy is not compressed anew on each
    hit. Keyed by the body itself: a dict compares equal bytes after their
    hash, so no two bodies can share a stream. One per process, shared by the
    threads of runserver and the embedded default."""

    def __init__(self, kept_bytes: int) -> None:
        self.kept_bytes = kept_bytes
        self.size = 0  # of the bodies and streams kept
        self._kept: OrderedDict[bytes, bytes] = OrderedDict()  # oldest used first
        self._seen_once: dict[int, None] = {}  # oldest first
        self._lock = threading.Lock()

    def deflated(self, body: bytes) -> bytes:
        with self._lock:
            stream = self._kept.get(body)
            if stream is not None:
                self._kept.move_to_end(body)
                return stream
            key = hash(body)
            seen = key in self._seen_once
            if seen:
                del self._seen_once[key]
            else:
                self._seen_once[key] = None
                if len(self._seen_once) > SEEN_ONCE_REMEMBERED:
                    del self._seen_once[next(iter(self._seen_once))]
        keep = seen and 2 * len(body) <= self.kept_bytes
        # Outside the lock: milliseconds for a topic's page.
        stream = gzip.compress(body, LEVEL_KEPT if keep else LEVEL_ONCE, mtime=0)
        if keep and len(body) + len(stream) <= self.kept_bytes:
            with self._lock:
                if body not in self._kept:
                    self._kept[body] = stream
                    self.size += len(body) + len(stream)
                while self.size > self.kept_bytes:
                    old_body, old_stream = self._kept.popitem(last=False)
                    self.size -= len(old_body) + len(old_stream)
        return stream


streams = Streams(KEPT_BYTES)


def padded(stream: bytes, max_random_bytes: int) -> bytes:
    """The stream with a file name of 0 to max_random_bytes - 1 random bytes
    in its header, as django.utils.text.compress_string pads it ("Heal The
    Breach"), new for each response: a page's compressed size then tells
    little of its content."""
    header = bytearray(stream[:10])
    header[3] = gzip.FNAME
    name = b"a" * secrets.randbelow(max_random_bytes) + b"\0"
    return bytes(header) + name + stream[10:]


class GZipMiddleware(django_gzip.GZipMiddleware):
    """Django's, which pads each body with random bytes against BREACH, but
    not for an event stream, whose events gzip would hold in its buffer until
    the answer ends (an Ask answer, written as the model writes it), nor for a
    response its view keeps uncompressed; and a body served again is not
    compressed again (`Streams`). Other streamed responses are Django's."""

    def process_response(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        streamed_events = response.get("Content-Type", "").startswith(
            "text/event-stream"
        )
        if streamed_events or getattr(response, EXEMPT, False):
            return response
        if response.status_code == 304:
            return self.not_modified(request, response)
        if isinstance(response, HttpResponse):
            return self.compressed(request, response)
        return super().process_response(request, response)

    def not_modified(
        self, request: HttpRequest, response: HttpResponseBase
    ) -> HttpResponseBase:
        """A 304 carries the headers of the answer it stands for (RFC 9110,
        15.4.5), which it has no body to be compressed by: that it varies by
        Accept-Encoding, so that a shared cache keeps its copies apart, and
        to a client that reads gzip the compressed body's weak ETag."""
        patch_vary_headers(response, ("Accept-Encoding",))
        accepts = request.META.get("HTTP_ACCEPT_ENCODING", "")
        if django_gzip.re_accepts_gzip.search(accepts):
            _weakened(response)
        return response

    def compressed(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        """Django's process_response for a body in one piece, its stream
        taken from `streams`."""
        body = response.content
        if len(body) < 200 or response.has_header("Content-Encoding"):
            return response
        patch_vary_headers(response, ("Accept-Encoding",))
        accepts = request.META.get("HTTP_ACCEPT_ENCODING", "")
        if not django_gzip.re_accepts_gzip.search(accepts):
            return response
        packed = padded(streams.deflated(body), self.max_random_bytes)
        if len(packed) >= len(body):
            return response
        response.content = packed
        response.headers["Content-Length"] = str(len(packed))
        _weakened(response)
        response.headers["Content-Encoding"] = "gzip"
        return response


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


def _weakened(response: HttpResponseBase) -> None:
    """Its ETag weak (W/), as a compressed body's is: the same content, not
    the same bytes."""
    etag = response.get("ETag")
    if etag and etag.startswith('"'):
        response.headers["ETag"] = "W/" + etag
