from __future__ import annotations

from dataclasses import replace
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


def collaboration(papers: int, size: int) -> list[PaperRecord]:
    """A collaboration's papers of `size` authors each: the first author with no
    affiliation, the second at two labs (shown by name), the k-th after them at
    "Lab k mod 20", so Lab 0 and Lab 1 first appear past the twelfth author."""
    authors = (
        AuthorRecord("Spokesperson"),
        AuthorRecord("Deputy", ("Zeta Lab", "Alpha Lab")),
        *[AuthorRecord(f"Member {k}", (f"Lab {k % 20}",)) for k in range(2, size)],
    )
    return [
        replace(
            paper_record(f"2606.{n:05d}", title=f"Collaboration result {n}"),
            authors=authors,
        )
        for n in range(1, papers + 1)
    ]
