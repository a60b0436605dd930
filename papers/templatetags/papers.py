from __future__ import annotations

from django import template
from django.conf import settings
from django.utils.html import escape
from django.utils.html import format_html
from django.utils.html import format_html_join
from django.utils.safestring import SafeString

from papers import names
from papers import slots
from papers.latex import latex_to_text
from papers.links import linked
from papers.models import Author
from papers.models import Category
from papers.models import Paper
from papers.routes import author_address

register = template.Library()
register.filter("linked", linked)

# Chips on a paper row; the rest are "+N", linked to the paper's page.
CHIPS_SHOWN = 3


@register.filter
def latex(text: str) -> str:
    """A title or abstract with its LaTeX rendered as plain text (still escaped)."""
    return latex_to_text(text or "")


@register.filter
def absolute(path: str) -> str:
    """The site's address of a path (MOMENTUM_SITE_URL): what a shared link's
    preview and a canonical link name, the same in every cached copy."""
    return settings.MOMENTUM_SITE_URL + path


@register.filter
def category_label(category: Category) -> str:
    """A category as arXiv lists it, "Machine Learning (cs.LG)": its name in
    the text, not in a title only a pointer that hovers shows; its code alone
    when its name is not known."""
    return f"{category.name} ({category.code})" if category.name else category.code


@register.filter
def printed_authors(paper: Paper) -> list[str]:
    return names.printed_authors(paper.author_names)


@register.filter
def row_id(arxiv_id: str) -> str:
    return slots.row_id(arxiv_id)


@register.filter
def card_id(slug: str) -> str:
    return slots.card_id(slug)


@register.simple_tag
def first_names(
    names: list[object], shown: int, label: str, *, of: int, listed_at: str
) -> str:
    """The first few names of `of` and how many more there are, e.g. "A, B, C
    +9 more", the count linked to the paper's page (`listed_at`), which lists
    them all."""
    # Built here, not by a template: every row shows a few such lists.
    listed = format_html_join(", ", "<span>{}</span>", ((n,) for n in names[:shown]))
    return _with_more(listed, of, shown, label, listed_at)


@register.simple_tag
def author_links(authors: list[Author], shown: int, *, of: int, listed_at: str) -> str:
    """The first few authors of `of`, each linked to their page, and how many
    more, linked to the paper's page (`listed_at`)."""
    listed = format_html_join(
        ", ",
        '<a href="{}">{}</a>',
        ((author_address(author.pk), author.name) for author in authors[:shown]),
    )
    return _with_more(listed, of, shown, "authors", listed_at)


@register.simple_tag
def author_names(paper: Paper, shown: int) -> str:
    """The paper's first few printed authors, unlinked, and how many more."""
    printed = names.printed_authors(paper.author_names)
    listed = escape(names.AUTHOR_SEPARATOR.join(printed[:shown]))
    return _with_more(listed, len(printed), shown, "authors", paper.get_absolute_url())


def _with_more(listed: str, total: int, shown: int, label: str, listed_at: str) -> str:
    # The count is a link in words, not a "+9" explained in a tooltip, which a
    # phone never shows: to the paper's page, where every author is listed
    # (papers/detail.html), each with their affiliations.
    more = total - shown
    if more <= 0:
        return listed
    return format_html(
        '{} <a class="more" href="{}#authors">+{} more'
        '<span class="visually-hidden"> {}</span></a>',
        listed,
        listed_at,
        more,
        label,
    )


@register.simple_tag
def slot(kind: str, *args: object) -> SafeString:
    """Where a page rendered for everyone holds the reader's own (papers.slots)."""
    return slots.slot(kind, *args)


@register.filter
def why(tag: object) -> str:
    """Why a paper is in a topic, from its tag (topics.PaperTopic), in words."""
    source = getattr(tag, "source", "")
    score = getattr(tag, "score", None)
    if source == "pin":
        return "Pinned by a curator"
    if source == "judge":
        return "Judged to belong by a language model"
    if source == "model":
        return "Suggested by the model" + (
            f", score {score:.2f}" if score is not None else ""
        )
    terms = ", ".join(getattr(tag, "matched_terms", None) or [])
    reason = f"Matched {terms}" if terms else "Matched the topic's rule"
    return reason + (f" (model score {score:.2f})" if score is not None else "")


def _tags_in_order(paper: Paper, current: object) -> list[object]:
    """The paper's tags in active topics (`active_tags`, from
    papers.query.with_listing_data or row_papers): the page's own topic first,
    then by name."""
    current_id = getattr(current, "pk", None)
    # A stable sort: the current topic moves to the front, the rest keep name order.
    return sorted(paper.active_tags, key=lambda tag: tag.topic_id != current_id)  # type: ignore[attr-defined]


@register.inclusion_tag("partials/topic_chips.html")
def topic_chips(
    paper: Paper, current: object = None, url: str = ""
) -> dict[str, object]:
    """The paper's active topics as chips that say why on hover, the first
    CHIPS_SHOWN and the rest as "+N" (linked to the paper's page)."""
    tags = _tags_in_order(paper, current)
    url = url or paper.get_absolute_url()
    return {"url": url, "tags": tags[:CHIPS_SHOWN], "more": tags[CHIPS_SHOWN:]}


@register.inclusion_tag("partials/topic_reasons.html")
def topic_reasons(paper: Paper, current: object = None) -> dict[str, object]:
    """Every one of the paper's active topics, each with why the paper is in
    it in words: a chip's title is a tooltip, which a touch screen never shows."""
    return {"tags": _tags_in_order(paper, current)}
