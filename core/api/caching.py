"""Conditional GETs (ETag / Last-Modified) and cached bodies for the API's reads.

A response is identified by a *version* of the data it shows plus its full
address. Papers and topics read the content version (VERSION_KEY, moved by
papers.versions.content_changed),
which every change to papers, tags, topics and momentum moves on after commit;
parts that change without it (follower counts, a user's saved papers) add a
fingerprint of their rows. So a client's If-None-Match is answered with no SQL
at all, and a body built once is served from the cache until the data changes.
A date (If-Modified-Since) or `*` is answered so only where a body of this
version was built: they hold at an address that names nothing too, which was
a 304 to a poller of a mistyped slug rather than its 404.

A write may be made conditional on a body read before (If-Match with its
ETag, or If-Unmodified-Since): require_unchanged() compares what that body
showed of the fields written with what they hold now, so a change to a part no
write touches (a follower count, the content version) does not refuse it. A
body that shows such fields carries them in its ETag, `"<version>.<fields>"`
(the second part a digest of the fields, `fields`), so the row alone answers
If-Match, whatever the cache kept or lost; a write's answer carries its body's
(write_validators()), for the next write to send.

Last-Modified is when this version was first seen: the content version is a
timestamp itself, and a fingerprint is stamped when an address (a reader's own,
for private reads) first meets it after another, which is after the change that
made it. Stamped per address, not per fingerprint: an undone change (a save
taken back) brings an earlier fingerprint back, whose first stamp would move
Last-Modified backwards and answer a changed list with a 304.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any
from typing import cast

from django.core.cache import cache
from django.http import HttpResponse
from django.utils.cache import get_conditional_response
from django.utils.http import http_date
from django.utils.http import parse_etags
from django.utils.http import parse_http_date_safe
from drf_spectacular.utils import OpenApiParameter
from drf_spectacular.utils import OpenApiResponse
from rest_framework import exceptions
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request

from core.api.errors import ErrorSerializer
from core.release import RELEASE
from core.release import release_first_seen

# The content version: a timestamp that every content change moves on.
VERSION_KEY = "pages:version"
# Bodies are keyed by version, so they never go stale; this only bounds memory.
BODY_TIMEOUT = 10 * 60
# Marks a body built at a digest (kept longer than the body): the address names
# something in that version, so a date may answer a 304 there. Its value is what
# the body showed of the fields a write changes (its `fields`, or ""): the
# second part of its ETag.
BUILT_KEY = "api:built:"
SEEN_TIMEOUT = 7 * 24 * 60 * 60


class PreconditionFailed(exceptions.APIException):
    status_code = 412
    default_detail = "The resource does not match If-Match / If-Unmodified-Since."
    default_code = "precondition_failed"


def content_version() -> int:
    """The pages' content version: a time in ns, moved on by every content change."""
    return cast(int, cache.get_or_set(VERSION_KEY, time.time_ns, None))


def conditional_response(
    request: Request,
    build: Callable[[], Any],
    *,
    fingerprint: str = "",
    private: bool = False,
    fields: Callable[[], str] | None = None,
) -> HttpResponse:
    """304 when the client's copy is current, else the body for this data version,
    from the cache or from `build()` (which may raise, e.g. Http404). `fields`,
    called after build(), says what the body showed of the fields a write
    changes (a digest, in letters and digits): the ETag carries it, for
    require_unchanged()."""
    version = content_version()
    address = request.build_absolute_uri()
    modified = _modified(
        version, fingerprint, f"{request.user.pk if private else ''}|{address}"
    )
    # A release's bodies are its own (core.release): its ETags too.
    digest = hashlib.sha256(
        f"{RELEASE}|{version}|{fingerprint}|{address}".encode()
    ).hexdigest()
    shown = None
    if fields is not None:
        # The ETag names the fields the body shows: known once it is built.
        shown = cast(str | None, cache.get(BUILT_KEY + digest))
        if shown is None:
            shown = _body(digest, build, fields)[1]
    headers = {
        "ETag": _etag(digest, shown),
        "Last-Modified": http_date(modified),
        "Cache-Control": "private, no-cache" if private else "no-cache",
    }
    probe = HttpResponse(headers=headers)
    answer = get_conditional_response(
        request._request,
        etag=headers["ETag"],
        last_modified=modified,
        response=probe,
    )
    assert answer is not None  # it is given a response: that one, or an answer
    if answer is not probe:
        # A date or `*` holds at any address, one that names nothing (a
        # mistyped slug: a 404) or has moved (a 301) included; build() says
        # which, once a version (BUILT_KEY). An ETag that matched was sent
        # with a body built here.
        if (
            not _etag_matched(request)
            and shown is None
            and cache.get(BUILT_KEY + digest) is None
        ):
            _body(digest, build, fields)
        if answer.status_code == 412:
            raise PreconditionFailed
        return answer
    body = _body(digest, build, fields)[0]
    return HttpResponse(body, content_type="application/json", headers=headers)


def write_validators(body: Any, *, fields: str, changed: datetime) -> dict[str, str]:
    """The ETag and Last-Modified of what a write answers, `body` (what the
    address it names shows after the write, whose own fields are `fields`), for
    the next write's If-Match / If-Unmodified-Since."""
    digest = hashlib.sha256(JSONRenderer().render(body)).hexdigest()
    return {
        "ETag": _etag(digest, fields),
        "Last-Modified": http_date(changed.timestamp()),
    }


def require_unchanged(request: Request, *, fields: str, changed: datetime) -> None:
    """Raise PreconditionFailed unless the write's If-Match names a body that
    showed `fields` as they are now (its ETag says, see conditional_response),
    or is `*`, or, without If-Match, its If-Unmodified-Since is not before
    `changed` (RFC 9110 13.1.1, 13.1.4, 13.2.2). Without either, the write goes
    ahead."""
    if_match = request.headers.get("If-Match", "").strip()
    if if_match:  # an empty field asks for nothing; one with no tag is no match
        etags = parse_etags(if_match)
        if etags == ["*"]:
            return
        # A strong comparison: a weak ETag (a compressed body's) never holds.
        shown = [
            tag.strip('"').partition(".")[2]
            for tag in etags
            if not tag.startswith("W/")
        ]
        if fields not in shown:
            raise PreconditionFailed
        return
    since = parse_http_date_safe(request.headers.get("If-Unmodified-Since", ""))
    # A date that is not one is ignored, as HTTP says.
    if since is not None and int(changed.timestamp()) > since:
        raise PreconditionFailed


def _body(
    digest: str, build: Callable[[], Any], fields: Callable[[], str] | None = None
) -> tuple[bytes, str]:
    """The body of this version at this address and what it showed of
    `fields` ("" without them): cached, or built (which may raise) and cached."""
    key = f"api:body:{digest}"
    built = cast(tuple[bytes, str] | None, cache.get(key))
    if built is None:
        # Rendered once: a hit costs one cache read and no serializing.
        body = JSONRenderer().render(build())
        built = (body, "" if fields is None else fields())
        cache.set(key, built, BODY_TIMEOUT)
        cache.set(BUILT_KEY + digest, built[1], SEEN_TIMEOUT)
    return built


def _etag(digest: str, shown: str | None) -> str:
    """A body's ETag: its digest, and what it showed of the fields a write
    changes where it shows them."""
    return f'"{digest[:32]}"' if shown is None else f'"{digest[:32]}.{shown}"'


def _etag_matched(request: Request) -> bool:
    """Whether the client sent ETags of its own (not `*`), so that a 304 is
    for one of them: they are only ever sent with a body."""
    etags = request.headers.get("If-None-Match", "").strip()
    return etags not in ("", "*")


def _modified(version: int, fingerprint: str, reader_address: str) -> int:
    """Seconds since the epoch at which this version of the data was first
    seen at this address, by this release (a deploy may change what a body
    shows)."""
    seen = max(version, release_first_seen())
    if fingerprint:
        key = (
            "api:seen:"
            + hashlib.sha256(f"{version}|{reader_address}".encode()).hexdigest()
        )
        stamped = cache.get(key)
        if stamped is None or stamped[0] != fingerprint:
            stamped = (fingerprint, time.time_ns())
            cache.set(key, stamped, SEEN_TIMEOUT)
        seen = max(seen, stamped[1])
    return seen // 1_000_000_000


# SCHEMA
# ------------------------------------------------------------------------------

CONDITIONAL_PARAMETERS = [
    OpenApiParameter(
        "If-None-Match",
        str,
        OpenApiParameter.HEADER,
        description="An ETag from an earlier response: 304 if nothing changed.",
    ),
    OpenApiParameter(
        "If-Modified-Since",
        str,
        OpenApiParameter.HEADER,
        description="An HTTP date (Last-Modified of an earlier response): 304 if "
        "nothing changed since. Second resolution; prefer If-None-Match.",
    ),
]
# What a conditional read answers besides its 200. If-Match and
# If-Unmodified-Since are HTTP's, honoured but not offered as parameters: a
# read has no use for them, and a request with them is not one the schema
# would call valid whatever they hold.
CONDITIONAL_RESPONSES = {
    304: OpenApiResponse(description="Not modified: the client's copy is current."),
    412: OpenApiResponse(
        ErrorSerializer,
        description="If-Match or If-Unmodified-Since does not hold: the data "
        "changed (code precondition_failed).",
    ),
}
# What a write made on what a read showed (require_unchanged) answers when
# it no longer holds. If-Match and If-Unmodified-Since are not offered as
# parameters, for the reason above.
WRITE_CONDITIONAL_RESPONSES = {
    412: OpenApiResponse(
        ErrorSerializer,
        description="If-Match or If-Unmodified-Since does not hold: another write "
        "changed it since it was read (code precondition_failed); nothing written.",
    ),
}
VALIDATOR_HEADERS = [
    OpenApiParameter(
        "ETag",
        str,
        OpenApiParameter.HEADER,
        response=[200, 304],
        description="Changes whenever the data shown changes.",
    ),
    OpenApiParameter(
        "Last-Modified",
        str,
        OpenApiParameter.HEADER,
        response=[200, 304],
        description="When this version of the data was first seen.",
    ),
]
# What a write that answers with the resource as it now is sends
# (write_validators), for the next write to send back.
WRITE_VALIDATOR_HEADERS = [
    OpenApiParameter(
        "ETag",
        str,
        OpenApiParameter.HEADER,
        response=[200, 201],
        required=True,
        description="The body's: the next write's If-Match, with no read between.",
    ),
    OpenApiParameter(
        "Last-Modified",
        str,
        OpenApiParameter.HEADER,
        response=[200, 201],
        required=True,
        description="When this write was made: the next write's "
        "If-Unmodified-Since. Second resolution; prefer If-Match.",
    ),
    OpenApiParameter(
        "Content-Location",
        str,
        OpenApiParameter.HEADER,
        response=[200, 201],
        required=True,
        description="The address the body shows the resource at, as the write "
        "left it (a changed slug's new one).",
    ),
]
