"""A topic rule's terms as a reader reads them, on pages that say why a paper
is in a topic: "agentic" in the title, not ti:agentic."""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from topics.rules.syntax import FIELDS

register = template.Library()

# Where a field's term matched (all: anywhere, said by nothing).
WHERE = {
    "ti": " in the title",
    "abs": " in the abstract",
    "au": " among the authors",
    "co": " in the comments",
    "all": "",
}


@register.filter
def matched_term(source: str) -> SafeString:
    """A matched term as its rule spells it (`ti:agentic`, `"tool use"`,
    `cat:cs.RO`), worded: <q>agentic</q> in the title, category cs.RO."""
    field, value = term_parts(source)
    if field == "cat":
        return format_html("category {}", value)
    return format_html("<q>{}</q>{}", value, WHERE[field])


def term_in_words(source: str) -> str:
    """matched_term as plain text (admin's review queue): “agentic” in the
    title, category cs.RO."""
    field, value = term_parts(source)
    if field == "cat":
        return f"category {value}"
    return f"“{value}”{WHERE[field]}"


def term_parts(source: str) -> tuple[str, str]:
    """A term's field (all: none written) and its words without quotes."""
    field, colon, value = source.partition(":")
    if not colon or field not in FIELDS:
        field, value = "all", source
    return field, value.replace('"', "")
