from __future__ import annotations

from django import template

from papers.latex import latex_to_text
from papers.models import Author
from papers.models import Paper

register = template.Library()


@register.filter
def latex(text: str) -> str:
    """A title or abstract with its LaTeX rendered as plain text (still escaped)."""
    return latex_to_text(text or "")


@register.filter
def author_list(paper: Paper) -> list[Author]:
    """Authors in order, from the prefetched authorships."""
    return [authorship.author for authorship in paper.authorships.all()]


@register.filter
def affiliation_names(paper: Paper) -> list[str]:
    """Distinct affiliations in author order, from the prefetched authorships."""
    names: dict[str, None] = {}
    for authorship in paper.authorships.all():
        for affiliation in authorship.affiliations.all():
            names.setdefault(affiliation.name)
    return list(names)


@register.inclusion_tag("partials/name_list.html")
def first_names(
    names: list[object], shown: int = 3, label: str = "authors"
) -> dict[str, object]:
    """The first few names and how many more there are, e.g. "A, B, C +9"."""
    return {"shown": names[:shown], "more": max(len(names) - shown, 0), "label": label}
