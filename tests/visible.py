"""A page's text as a sighted reader sees it: what a phone, with no pointer to
hover, shows. Attributes (a `title` tooltip, an `aria-label`) are not text, nor
is what is hidden (`hidden`, .visually-hidden), the head, scripts or styles."""

from __future__ import annotations

import re
from html.parser import HTMLParser

UNSEEN_ELEMENTS = {"head", "script", "style", "template"}
# Elements with no end tag, which never hold text.
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta"}
VOID |= {"source", "track", "wbr"}


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        # The open elements, each with whether it hides what it holds.
        self.open: list[tuple[str, bool]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID:
            return
        found = dict(attrs)
        hides = (
            tag in UNSEEN_ELEMENTS
            or "hidden" in found
            or "visually-hidden" in (found.get("class") or "").split()
        )
        self.open.append((tag, hides))

    def handle_endtag(self, tag: str) -> None:
        # Up to the element closed: an unclosed <p> or <li> ends with it.
        for depth in range(len(self.open) - 1, -1, -1):
            if self.open[depth][0] == tag:
                del self.open[depth:]
                return

    def handle_data(self, data: str) -> None:
        if not any(hides for _, hides in self.open):
            self.parts.append(data)


def visible_text(html: str) -> str:
    """The text shown, its white space collapsed to single spaces (HTML's
    white space: a no-break space is kept, as a browser keeps it)."""
    parser = _Text()
    parser.feed(html)
    parser.close()
    return re.sub(r"[ \t\n\r\f]+", " ", "".join(parser.parts)).strip()
