"""A shared link's tracking parameters are not part of the page it names."""

from __future__ import annotations

import re
from collections.abc import Callable

from django.http import HttpRequest
from django.http import HttpResponse
from django.http import HttpResponsePermanentRedirect
from django.utils.encoding import escape_uri_path
from django.utils.http import escape_leading_slashes

# What chat apps, mail campaigns, search engines and ad networks add to a link
# they pass on, in any case (UTM_SOURCE).
TRACKING = re.compile(
    r"utm_\w+|fbclid|gclid|dclid|gbraid|wbraid|msclkid|yclid|igshid|mc_cid|mc_eid"
    r"|_hsenc|_hsmi|_gl|srsltid|ttclid|twclid|li_fat_id|mkt_tok",
    re.IGNORECASE,
)


def without_tracking(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    """Middleware: a GET whose address carries tracking parameters is sent on
    to the address without them. Each variant would otherwise render and cache
    a page of its own (papers.pagecache keys pages by their address: a flood
    of them pushes the rest out), and its links (pagination) carry them on."""

    def middleware(request: HttpRequest) -> HttpResponse:
        tracked = [name for name in request.GET if TRACKING.fullmatch(name)]
        if tracked and request.method in ("GET", "HEAD"):
            kept = request.GET.copy()
            for name in tracked:
                del kept[name]
            query = kept.urlencode()
            # A path starting "//" would be read as another host's address.
            path = escape_leading_slashes(escape_uri_path(request.path))
            return HttpResponsePermanentRedirect(path + (f"?{query}" if query else ""))
        return get_response(request)

    return middleware
