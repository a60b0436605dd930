"""Rows of papers as every list shows them, each rendered once per version of
its paper (papers.pagecache) and shared by every page and reader that lists it:
a list made stale by one paper renders one row anew."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence

from django.db.models import QuerySet
from django.template.loader import get_template
from django.utils.safestring import SafeString
from django.utils.safestring import mark_safe

from papers.models import Paper
from papers.pagecache import cached_fragments
from papers.query import row_papers
from papers.versions import NAMES
from papers.versions import paper_key

ROW = "partials/paper_row.html"
# Where a search row takes its query's highlighted title and snippet: comments,
# which escaped paper text can never contain.
TITLE_HOLE = mark_safe("<!--search:title-->")
SNIPPET_HOLE = mark_safe("<!--search:snippet-->")
Prepare = Callable[[QuerySet[Paper]], QuerySet[Paper]]


def paper_rows(
    arxiv_ids: Sequence[str],
    *,
    topic: object | None = None,
    prepare: Prepare | None = None,
) -> list[SafeString]:
    """The rows of these papers, in order; on a topic's page (`topic`), its chip
    first and what `prepare` annotates (the model's score)."""

    def render(papers: list[Paper]) -> list[str]:
        return render_rows(papers, topic=topic)

    return _cached_rows(arxiv_ids, getattr(topic, "slug", ""), render, prepare)


def search_rows(papers: Sequence[Paper]) -> list[SafeString]:
    """The rows of search results (papers.highlight.highlight gave each its
    `highlighted_title` and `snippet`): each paper's shared search row, with
    those two filled in for this query."""

    def render(found: list[Paper]) -> list[str]:
        for paper in found:
            paper.highlighted_title = TITLE_HOLE  # type: ignore[attr-defined]
            paper.snippet = SNIPPET_HOLE  # type: ignore[attr-defined]
        return render_rows(found)

    rows = _cached_rows([paper.arxiv_id for paper in papers], "search", render)
    # Escaped paper text cannot spell a hole: the first of each is the one.
    return [
        mark_safe(
            row.replace(TITLE_HOLE, paper.highlighted_title, 1).replace(  # type: ignore[attr-defined]
                SNIPPET_HOLE,
                paper.snippet,  # type: ignore[attr-defined]
                1,
            )
        )
        for paper, row in zip(papers, rows, strict=True)
    ]


def _cached_rows(
    arxiv_ids: Sequence[str],
    variant: str,
    render_papers: Callable[[list[Paper]], list[str]],
    prepare: Prepare | None = None,
) -> list[SafeString]:
    items: dict[str, tuple[str, ...]] = {
        f"row:{variant}:{arxiv_id}": (paper_key(arxiv_id), NAMES)
        for arxiv_id in arxiv_ids
    }

    def render(missing: list[str]) -> dict[str, str]:
        wanted = [item.split(":", 2)[2] for item in missing]
        found = Paper.objects.filter(arxiv_id__in=wanted)
        papers = row_papers(prepare(found) if prepare is not None else found)
        return {
            f"row:{variant}:{paper.arxiv_id}": html
            for paper, html in zip(papers, render_papers(papers), strict=True)
        }

    found = cached_fragments(items, render)
    return [mark_safe(found[f"row:{variant}:{arxiv_id}"]) for arxiv_id in arxiv_ids]


def render_rows(papers: Iterable[Paper], *, topic: object | None = None) -> list[str]:
    """Rows rendered now."""
    template = get_template(ROW)
    return [
        template.render({"paper": paper, "current_topic": topic}) for paper in papers
    ]
