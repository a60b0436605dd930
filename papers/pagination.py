"""Cursor pagination for paper lists, newest first.

Papers are ordered by (first_announced DESC NULLS FIRST, id DESC), PostgreSQL's
order for the paper_announced_idx index, and a cursor is the last row's pair:
the next page starts right after it, so pages are stable while papers arrive
and a deep page costs what the first one does. (One move a walk may meet: a
paper stored without a day, listed first, that a later harvest gives its day
moves down to it, and a walk under way lists it again there.) It is written
`<day>.<id>`, the day as its proleptic ordinal (0 for none), so that every
string the schema's pattern admits is a position to start from and the schema
can say exactly which cursors are refused. DRF's CursorPagination keys on one
column and pages through ties by offset, which is slow with thousands of
papers per announcement day and breaks on papers with no date.
"""

from __future__ import annotations

from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import timedelta
from typing import Any

from django.core.validators import RegexValidator
from django.db.models import F
from django.db.models import Q
from django.db.models import QuerySet
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.utils.urls import replace_query_param

from core.api.fields import QueryInteger
from core.api.fields import Text
from core.api.views import MAX_PAGE_SIZE
from core.api.views import query_names
from core.api.views import read_query
from papers.models import Paper

ORDERING = (F("first_announced").desc(nulls_first=True), F("id").desc())
# Six digits of day reach the year 2738, all valid dates (date.fromordinal).
CURSOR = RegexValidator(
    r"\A[0-9]{1,6}\.[0-9]{1,18}\Z",
    message="Invalid cursor; use the next link as given.",
    code="invalid_cursor",
)


def encode_cursor(paper: Paper) -> str:
    day = paper.first_announced.toordinal() if paper.first_announced else 0
    return f"{day}.{paper.pk}"


def decode_cursor(cursor: str) -> tuple[date | None, int]:
    """(first_announced, id) of the row a page starts after, from a cursor that
    CURSOR accepts."""
    day, pk = (int(part) for part in cursor.split("."))
    return (date.fromordinal(day) if day else None), pk


def after(papers: QuerySet[Paper], day: date | None, pk: int) -> QuerySet[Paper]:
    if day is None:
        # Undated papers come first; after one of them: the older undated, then all.
        return papers.filter(Q(first_announced__isnull=False) | Q(id__lt=pk))
    # `<= day` lets PostgreSQL start the index scan at the cursor's day.
    return papers.filter(
        Q(first_announced__lte=day) & (Q(first_announced__lt=day) | Q(id__lt=pk))
    )


def page_size_field(entries: str = "Papers") -> QueryInteger:
    """The `page_size` parameter of a cursor-paged list."""
    return QueryInteger(
        required=False,
        min_value=1,
        max_value=MAX_PAGE_SIZE,
        help_text=f"{entries} per page, 1 to {MAX_PAGE_SIZE} (default 25).",
    )


class CursorSerializer(serializers.Serializer):
    cursor = Text(
        pattern=CURSOR,
        required=False,
        help_text="Where the page starts: take it from the `next` link of the "
        "previous page (any cursor of this form is a valid position).",
    )
    page_size = page_size_field()

    def validate_cursor(self, value: str) -> tuple[date | None, int]:
        return decode_cursor(value)


class PaperCursorPagination:
    """Reads `cursor` and `page_size` up front (so bad ones are refused before any
    work), then cuts one page out of a paper query."""

    page_size = 25
    query_params = query_names(CursorSerializer)

    def __init__(self, request: Request) -> None:
        params = read_query(CursorSerializer, request)
        self.request = request
        self.size: int = params.get("page_size", self.page_size)
        self.start: tuple[date | None, int] | None = params.get("cursor")

    def page(self, papers: QuerySet[Paper]) -> tuple[list[Paper], str | None]:
        """The page's papers and the address of the next page (None on the last)."""
        papers = papers.order_by(*ORDERING)
        if self.start is not None:
            papers = after(papers, *self.start)
        rows = list(papers[: self.size + 1])
        if len(rows) <= self.size:
            return rows, None
        rows = rows[: self.size]
        url = self.request.build_absolute_uri()
        return rows, replace_query_param(url, "cursor", encode_cursor(rows[-1]))

    @staticmethod
    def wrap(results: list[Any], next_url: str | None) -> dict[str, Any]:
        return {"next": next_url, "results": results}


# A reader's signal (papers.library.signal_papers), most recent first: the cursor
# is the last row's `<microseconds since the epoch>.<paper id>`. Sixteen digits
# of microseconds reach the year 2286, all valid times.
SIGNAL_CURSOR = RegexValidator(
    r"\A[0-9]{1,16}\.[0-9]{1,18}\Z",
    message="Invalid cursor; use the next link as given.",
    code="invalid_cursor",
)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class SignalCursorSerializer(serializers.Serializer):
    cursor = Text(
        pattern=SIGNAL_CURSOR,
        required=False,
        help_text="Where the page starts: take it from the `next` link of the "
        "previous page (any cursor of this form is a valid position).",
    )
    page_size = page_size_field("Entries")

    def validate_cursor(self, value: str) -> tuple[datetime, int]:
        micros, pk = (int(part) for part in value.split("."))
        return EPOCH + timedelta(microseconds=micros), pk


class SignalCursorPagination:
    """Pages of signal_papers(), in its order (-signal_at, -pk); bad parameters
    are refused before any work, as PaperCursorPagination does."""

    page_size = 25
    query_params = query_names(SignalCursorSerializer)

    def __init__(self, request: Request) -> None:
        params = read_query(SignalCursorSerializer, request)
        self.request = request
        self.size: int = params.get("page_size", self.page_size)
        self.start: tuple[datetime, int] | None = params.get("cursor")

    def page(self, papers: QuerySet[Paper]) -> tuple[list[Paper], str | None]:
        if self.start is not None:
            at, pk = self.start
            papers = papers.filter(Q(signal_at__lt=at) | Q(signal_at=at, pk__lt=pk))
        rows = list(papers[: self.size + 1])  # in signal_papers' order
        if len(rows) <= self.size:
            return rows, None
        rows = rows[: self.size]
        last = rows[-1]
        micros = (last.signal_at - EPOCH) // timedelta(microseconds=1)  # type: ignore[attr-defined]
        url = self.request.build_absolute_uri()
        return rows, replace_query_param(url, "cursor", f"{micros}.{last.pk}")
