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
from papers.pagecache import NAMES
from papers.pagecache import cached_fragments
from papers.pagecache import paper_key
from papers.query import with_listing_data

ROW = "partials/paper_row.html"
Prepare = Callable[[QuerySet[Paper]], QuerySet[Paper]]


def paper_rows(
    arxiv_ids: Sequence[str],
    *,
    topic: object | None = None,
    prepare: Prepare | None = None,
) -> list[SafeString]:
    """The rows of these papers, in order; on a topic's page (`topic`), its chip
    first and what `prepare` annotates (the model's score)."""
    slug = getattr(topic, "slug", "")
    items = {
        f"row:{slug}:{arxiv_id}": (paper_key(arxiv_id), NAMES) for arxiv_id in arxiv_ids
    }

    def render(missing: list[str]) -> dict[str, str]:
        wanted = [item.split(":", 2)[2] for item in missing]
        papers = with_listing_data(Paper.objects.filter(arxiv_id__in=wanted))
        papers = list(prepare(papers) if prepare is not None else papers)
        rendered = render_rows(papers, topic=topic)
        return {
            f"row:{slug}:{paper.arxiv_id}": html
            for paper, html in zip(papers, rendered, strict=True)
        }

    found = cached_fragments(items, render)
    return [mark_safe(found[f"row:{slug}:{arxiv_id}"]) for arxiv_id in arxiv_ids]


def render_rows(papers: Iterable[Paper], *, topic: object | None = None) -> list[str]:
    """Rows rendered now (search results, with their highlights)."""
    template = get_template(ROW)
    return [
        template.render({"paper": paper, "current_topic": topic}) for paper in papers
    ]
