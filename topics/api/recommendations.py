"""The caller's For you recommendations, in cursor pages."""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from datetime import date
from functools import partial
from typing import Any

from django.core.validators import RegexValidator
from django.db.models import QuerySet
from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.utils.urls import replace_query_param
from rest_framework.views import APIView

from accounts.requests import signed_in
from core.api.caching import CONDITIONAL_PARAMETERS
from core.api.caching import CONDITIONAL_RESPONSES
from core.api.caching import VALIDATOR_HEADERS
from core.api.caching import conditional_response
from core.api.fields import Text
from core.api.views import StrictQueryParams
from core.api.views import query_names
from core.api.views import read_query
from papers.models import Paper
from papers.pagination import PaperCursorPagination
from papers.pagination import after
from papers.pagination import encode_cursor
from papers.pagination import page_size_field
from papers.query import with_authors
from papers.query import with_listing_data
from papers.serializers import PaperSerializer
from topics.reader_feed import Following
from topics.reader_feed import cached_following
from topics.reader_feed import newest_feed_papers
from topics.recommend import list_version
from topics.recommend import reasons
from topics.recommend import recommended

# The recommendations' cursor: its order's letter, the last item's rank and its
# paper id, `<f|n><rank>.<id>`. In For you order (f) the rank is its score in
# millionths (scores are kept to six places); in newest order (n: no model yet)
# its day as an ordinal, 0 or less for none, as papers.pagination's. Every
# string of this form is a position in its order; one of the other order (the
# model was trained, or dropped, between two pages) starts the page's order
# from its top, which `order` says, rather than read a score as a day.
RECOMMENDATION_CURSOR = RegexValidator(
    r"\A[fn]-?[0-9]{1,12}\.[0-9]{1,18}\Z",
    message="Invalid cursor; use the next link as given.",
    code="invalid_cursor",
)
FOR_YOU_CURSOR = "f"
NEWEST_CURSOR = "n"


class RecommendationQuerySerializer(serializers.Serializer):
    cursor = Text(
        pattern=RECOMMENDATION_CURSOR,
        required=False,
        help_text="Where the page starts: take it from the `next` link of the "
        "previous page.",
    )
    page_size = page_size_field()

    def validate_cursor(self, value: str) -> tuple[str, int, int]:
        rank, pk = (int(part) for part in value[1:].rsplit(".", 1))
        return value[0], rank, pk


class ReasonSerializer(serializers.Serializer):
    paper = serializers.CharField(
        source="arxiv_id", help_text="The caller's paper it is most like."
    )
    title = serializers.CharField()
    saved = serializers.BooleanField(
        help_text="Whether the caller saved that paper (else: rated it up)."
    )


class RecommendationSerializer(serializers.Serializer):
    paper = PaperSerializer()
    score = serializers.FloatField(
        allow_null=True,
        help_text="The caller's model's score: higher is more like their papers; "
        "comparable between the caller's recommendations only. Null in newest "
        "order.",
    )
    reason = ReasonSerializer(allow_null=True)


class RecommendationOrder:
    FOR_YOU = "for-you"
    NEWEST = "newest"


@extend_schema_serializer(many=False)
class RecommendationPageSerializer(serializers.Serializer):
    order = serializers.ChoiceField(
        choices=[RecommendationOrder.FOR_YOU, RecommendationOrder.NEWEST],
        help_text="`for-you`: ranked by the caller's model, best first. `newest`: "
        "the caller has no model yet, so these are the papers of the topics and "
        "authors they follow and their saved searches, newest first, as the "
        "home feed shows them.",
    )
    next = serializers.URLField(allow_null=True)
    results = RecommendationSerializer(many=True)


class RecommendationView(StrictQueryParams, APIView):
    """The caller's For you: the newest papers their model ranks highest; until
    they have one, their feed newest first."""

    def allowed_query_params(self) -> AbstractSet[str]:
        return query_names(RecommendationQuerySerializer)

    @extend_schema(
        summary="Recommended papers",
        description="The newest papers the caller's own model (trained on their "
        "saves and ratings) ranks highest, best first, each with the caller's "
        "paper it is most like. Until the caller has saved or rated up a paper "
        "(and the model, trained in the background, has run), their feed "
        "instead: what they follow, newest first (`order` says which). Cursor "
        "pages: follow `next` until it is null.",
        parameters=[
            RecommendationQuerySerializer,
            *CONDITIONAL_PARAMETERS,
            *VALIDATOR_HEADERS,
        ],
        responses={200: RecommendationPageSerializer, **CONDITIONAL_RESPONSES},
    )
    def get(self, request: Request) -> HttpResponse:
        params = read_query(RecommendationQuerySerializer, request)
        user = signed_in(request)
        # Built once per version of the list (and of the papers it shows), or
        # without a model of what the reader follows (and the papers).
        if version := list_version(user.pk):
            return conditional_response(
                request,
                lambda: self.recommended_page(request, params, user.pk),
                fingerprint=f"for-you:{user.pk}:{version}",
                private=True,
            )
        followed = cached_following(user.pk)
        return conditional_response(
            request,
            lambda: self.newest_page(request, params, followed),
            fingerprint=f"newest:{user.pk}:{followed.variant}",
            private=True,
        )

    def recommended_page(
        self, request: Request, params: dict[str, Any], user_id: int
    ) -> dict[str, Any]:
        size = params.get("page_size", PaperCursorPagination.page_size)
        ranks = [(round(score * 1e6), pk) for pk, score in recommended(user_id)]
        start = 0
        cursor = params.get("cursor")
        if cursor is not None and cursor[0] == FOR_YOU_CURSOR:
            # The list is best first: past every item ranked at or above it.
            start = sum(1 for rank in ranks if rank >= cursor[1:])
        page = ranks[start : start + size]
        shown = [pk for _, pk in page]
        papers = listed_papers(Paper.objects.filter(pk__in=shown))
        like = reasons(user_id, shown)
        items = [
            {"paper": papers[pk], "score": micros / 1e6, "reason": like.get(pk)}
            for micros, pk in page
            if pk in papers  # deleted since it was scored
        ]
        next_url = None
        if start + size < len(ranks):
            micros, pk = page[-1]
            url = request.build_absolute_uri()
            cursor = f"{FOR_YOU_CURSOR}{micros}.{pk}"
            next_url = replace_query_param(url, "cursor", cursor)
        return self.body(request, RecommendationOrder.FOR_YOU, items, next_url)

    def newest_page(
        self, request: Request, params: dict[str, Any], followed: Following
    ) -> dict[str, Any]:
        size = params.get("page_size", PaperCursorPagination.page_size)
        starting = None
        cursor = params.get("cursor")
        if cursor is not None and cursor[0] == NEWEST_CURSOR:
            _, day, pk = cursor
            latest = date.max.toordinal()
            day = date.fromordinal(min(day, latest)) if day > 0 else None
            starting = partial(after, day=day, pk=pk)
        shown, more = newest_feed_papers(followed, size, starting=starting)
        by_id = listed_papers(Paper.objects.filter(pk__in=[pk for pk, _ in shown]))
        rows = [by_id[pk] for pk, _ in shown if pk in by_id]
        next_url = None
        if more and rows:
            url = request.build_absolute_uri()
            cursor = NEWEST_CURSOR + encode_cursor(rows[-1])
            next_url = replace_query_param(url, "cursor", cursor)
        items = [{"paper": paper, "score": None, "reason": None} for paper in rows]
        return self.body(request, RecommendationOrder.NEWEST, items, next_url)

    @staticmethod
    def body(
        request: Request, order: str, items: list[dict], next_url: str | None
    ) -> dict[str, Any]:
        data = RecommendationSerializer(
            items, many=True, context={"request": request}
        ).data
        return {"order": order, "next": next_url, "results": data}


def listed_papers(papers: QuerySet[Paper]) -> dict[int, Paper]:
    """What a recommendation's paper shows, by id, in a fixed number of queries."""
    listed = with_listing_data(papers).prefetch_related("categories")
    return {paper.pk: paper for paper in with_authors(listed)}
