"""Web addresses in a paper's text as links: an abstract's code and project pages.

linkify-it finds them (Django's urlize drops the full stop of "(https://x).",
as of 5.2.19); only addresses written with a web scheme count, since without one
"setup.py" and "model.pt" would read as addresses.
"""

from __future__ import annotations

from django.utils.html import escape
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.safestring import mark_safe
from linkify_it import LinkifyIt

ADDRESSES = LinkifyIt(options={"fuzzy_link": False, "fuzzy_email": False})
WEB_SCHEMES = ("http:", "https:")
LINK = '<a href="{}" rel="nofollow">{}</a>'


def linked(text: str) -> SafeString:
    """The plain text as HTML: escaped, with its web addresses as links."""
    found = ADDRESSES.match(text) if "://" in text else None
    parts, end = [], 0
    for address in found or ():
        if address.schema.lower() in WEB_SCHEMES:
            parts.append(escape(text[end : address.index]))
            parts.append(format_html(LINK, address.url, address.raw))
            end = address.last_index
    parts.append(escape(text[end:]))
    return mark_safe("".join(parts))  # every part escaped above
