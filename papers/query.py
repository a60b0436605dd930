"""Read-side queries over papers, shared by pages, API and digests."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Prefetch
from django.db.models import QuerySet
from django.http import Http404

from papers.ingest.records import ParseError
from papers.ingest.records import split_arxiv_id
from papers.models import Authorship
from papers.models import IngestRun
from papers.models import Paper


def with_listing_data(papers: QuerySet[Paper]) -> QuerySet[Paper]:
    """Everything a paper row shows, in a fixed number of queries."""
    return papers.select_related("primary_category").prefetch_related(
        Prefetch(
            "authorships",
            queryset=Authorship.objects.select_related("author")
            .prefetch_related("affiliations")
            .order_by("position"),
        ),
        "topics",
    )


def latest_papers() -> QuerySet[Paper]:
    return with_listing_data(Paper.objects.order_by("-first_announced", "-id"))


def get_paper(identifier: str) -> Paper:
    """The paper for an arXiv id with or without its version suffix, or Http404."""
    try:
        arxiv_id, _ = split_arxiv_id(identifier)
    except ParseError as exc:
        raise Http404(str(exc)) from exc
    paper = (
        with_listing_data(Paper.objects.filter(arxiv_id=arxiv_id))
        .prefetch_related("categories")
        .first()
    )
    if paper is None:
        raise Http404(f"No paper {arxiv_id}")
    return paper


def last_harvest() -> datetime | None:
    """When the last ingest run that stored anything finished, or None."""
    return (
        IngestRun.objects.filter(
            status__in=[IngestRun.Status.SUCCEEDED, IngestRun.Status.PARTIAL]
        )
        .order_by("-finished_at")
        .values_list("finished_at", flat=True)
        .first()
    )
