"""Stored papers as the rule language reads them: a Document and the category
codes of each, built in bulk (tagging and rule previews)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from django.db.models import Q
from django.db.models import QuerySet

from papers.models import Paper
from papers.names import printed_authors
from topics.rules import Document


def paper_documents(
    papers: QuerySet[Paper],
) -> list[tuple[int, Document, frozenset[str]]]:
    """(id, rule document, category codes) of each of these papers, in their order."""
    return list(iter_paper_documents(papers))


def iter_paper_documents(
    papers: QuerySet[Paper],
) -> Iterator[tuple[int, Document, frozenset[str]]]:
    """paper_documents, built one at a time as they are iterated over."""
    rows = list(
        papers.values_list("pk", "title", "abstract", "author_names", "comment")
    )
    if not rows:
        return
    categories = _categories_of([row[0] for row in rows])
    for pk, title, abstract, author_names, comment in rows:
        yield (
            pk,
            Document.from_fields(
                title=title,
                abstract=abstract,
                authors=printed_authors(author_names or ""),
                categories=sorted(categories[pk]),
                comment=comment,
            ),
            categories[pk],
        )


def _categories_of(paper_ids: list[int]) -> dict[int, frozenset[str]]:
    through = Paper.categories.through
    found: dict[int, set[str]] = defaultdict(set)
    for paper_id, code in through.objects.filter(
        among("paper_id", paper_ids)
    ).values_list("paper_id", "category__code"):
        found[paper_id].add(code)
    return defaultdict(frozenset, {pk: frozenset(codes) for pk, codes in found.items()})


def among(field: str, ids: list[int]) -> Q:
    """Rows whose `field` is one of ids."""
    # Papers ingested together have consecutive ids, and a range of them says
    # the same as the list without a query parameter per id to build and send.
    low, high = min(ids), max(ids)
    if high - low + 1 == len(set(ids)):
        return Q(**{f"{field}__gte": low, f"{field}__lte": high})
    return Q(**{f"{field}__in": ids})
