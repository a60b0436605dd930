"""Web addresses in a paper's text as links: an abstract's code and project pages.

linkify-it finds them (Django's urlize drops the full stop of "(https://x).",
as of 5.2.19). Written with a web scheme, an address is a link. Written
without one, it is a link when it cannot be mistaken for something else: with
a path ("github.com/a/b"), "www.", or a host of three names or more
("team.github.io"). A name of two ("setup.py", "AGENTS.md", "JD.com", "cs.AI",
"tasks.To" of a missing space) stays text.
"""

from __future__ import annotations

import re

from django.utils.html import escape
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.safestring import mark_safe
from linkify_it import LinkifyIt
from linkify_it.main import Match

ADDRESSES = LinkifyIt(options={"fuzzy_email": False})
WEB_SCHEMES = ("http:", "https:")
# What an address holds, scheme or not: most texts have none, and skip the matcher.
MAYBE_ADDRESS = re.compile(r"://|www\.|\w\.[a-z]{2,}(?:/|\.[a-z])", re.IGNORECASE)
LINK = '<a href="{}" rel="nofollow">{}</a>'


def linked(text: str) -> SafeString:
    """The plain text as HTML: escaped, with its web addresses as links."""
    found = ADDRESSES.match(text) if MAYBE_ADDRESS.search(text) else None
    parts, end = [], 0
    for address in found or ():
        if url := _web_url(address):
            parts.append(escape(text[end : address.index]))
            parts.append(format_html(LINK, url, address.raw))
            end = address.last_index
    parts.append(escape(text[end:]))
    return mark_safe("".join(parts))  # every part escaped above


def _web_url(address: Match) -> str | None:
    """Where the address found leads, or None when it is not taken as one."""
    schema, raw = address.schema.lower(), address.raw
    if schema in WEB_SCHEMES:
        return address.url
    if schema:  # ftp:, mailto:, or "//x.org" (schema "//"): not a web page
        return None
    host = raw.split("/", 1)[0]
    if "/" in raw or raw.lower().startswith("www.") or host.count(".") >= 2:
        # linkify-it reads it as http://; the sites papers name serve https.
        return "https://" + address.url.removeprefix("http://")
    return None
