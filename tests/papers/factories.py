from __future__ import annotations

from datetime import UTC
from datetime import datetime

from papers.ingest.records import AuthorRecord
from papers.ingest.records import PaperRecord


def paper_record(
    arxiv_id: str = "2606.00001",
    version: int | None = 1,
    *,
    title: str = "A Study of Agents",
    updated: datetime | None = None,
    published: datetime | None = None,
    authors: tuple[str, ...] = ("Ada Lovelace", "Alan Turing"),
    categories: tuple[str, ...] = ("cs.LG", "cs.AI"),
    **fields: object,
) -> PaperRecord:
    """A parsed record as any parser would yield it."""
    published = published or datetime(2026, 6, 8, 15, 0, tzinfo=UTC)
    return PaperRecord(
        arxiv_id=arxiv_id,
        version=version,
        title=title,
        abstract=fields.pop("abstract", "We train agents with reinforcement learning."),
        authors=tuple(AuthorRecord(name) for name in authors),
        categories=categories,
        primary_category=categories[0] if categories else None,
        published=published,
        updated=updated or published,
        **fields,
    )
