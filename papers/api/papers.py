"""The papers resource: lists (filtered, searched, a topic's), a paper, its
similar papers; the parameters and responses other apps' lists share."""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from typing import Any

from django.db.models import Count
from django.db.models import Max
from django.db.models import Q
from django.http import Http404
from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter
from drf_spectacular.utils import OpenApiResponse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotAuthenticated
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.requests import signed_in
from core.api.caching import CONDITIONAL_PARAMETERS
from core.api.caching import CONDITIONAL_RESPONSES
from core.api.caching import VALIDATOR_HEADERS
from core.api.caching import conditional_response
from core.api.errors import ErrorSerializer
from core.api.errors import missing
from core.api.views import StrictQueryParams
from core.api.views import query_names
from core.api.views import read_query
from papers.filters import PaperFilterSerializer
from papers.filters import search_arguments
from papers.ingest.records import ParseError
from papers.ingest.records import split_arxiv_id
from papers.models import Paper
from papers.models import SavedPaper
from papers.pagination import CursorSerializer
from papers.pagination import PaperCursorPagination
from papers.query import find_paper
from papers.query import get_paper
from papers.query import similar_ids
from papers.query import with_authors
from papers.query import with_listing_data
from papers.search import matching_papers
from papers.serializers import ARXIV_ID_PATH
from papers.serializers import PaperDetailSerializer
from papers.serializers import PaperPageSerializer
from papers.serializers import PaperSerializer
from papers.serializers import SimilarPapersSerializer

PAPER_ID_PARAMETER = OpenApiParameter(
    "arxiv_id",
    str,
    OpenApiParameter.PATH,
    pattern=rf"^(?:{ARXIV_ID_PATH})$",
    description="An arXiv id with or without its version: 2606.01234, "
    "2606.01234v2, math/0601001.",
)

AUTHOR_ID_PARAMETER = OpenApiParameter(
    "author_id",
    str,
    OpenApiParameter.PATH,
    pattern=r"^[0-9]{1,18}$",
    description="The author's id, as in their page's address /authors/<id>/.",
)
PAPER_LIST_PARAMETERS = [PaperFilterSerializer, CursorSerializer]
PAPER_LIST_ERRORS = {
    401: OpenApiResponse(
        ErrorSerializer,
        description="`saved` without signing in (code not_authenticated), or a "
        "token that is not one (authentication_failed).",
    ),
}


def paper_list_response(
    request: Request, *, topic: str | None = None
) -> Response | HttpResponse:
    """A page of papers for the request's filters; with `topic` (a path's slug),
    that topic's. A topic that is not active is a 404 either way."""
    filters = read_query(PaperFilterSerializer, request)
    pagination = PaperCursorPagination(request)
    saved = filters.get("saved")
    if saved is not None and not request.user.is_authenticated:
        raise NotAuthenticated("The saved filter needs authentication.")
    if topic is not None:
        filters["topic"] = topic

    def build() -> dict[str, Any]:
        # Checked when the page is built: a cached page implies the topic was
        # active, and deactivating one moves the content version on.
        if filters.get("topic"):
            # A merged-away slug names the topic it went into: in the query at
            # once, in the path by a redirect (topics.query.follow_merges).
            active = active_topic_slug(filters["topic"])
            if topic is not None and active != topic:
                raise Http404(missing("topic", "slug", topic))
            if active is None:
                raise serializers.ValidationError(
                    {"topic": [missing("topic", "slug", filters["topic"])]},
                    code="does_not_exist",
                )
            filters["topic"] = active
        # Matches newest first, cursor paged: nothing is ranked or counted.
        papers = matching_papers(filters.get("q", ""), **search_arguments(filters))
        if saved is not None:
            mine = {"saves__user": request.user}
            papers = papers.filter(**mine) if saved else papers.exclude(**mine)
        rows, next_url = pagination.page(
            with_listing_data(papers).prefetch_related("categories")
        )
        data = PaperSerializer(
            with_authors(rows), many=True, context={"request": request}
        ).data
        return pagination.wrap(data, next_url)  # type: ignore[arg-type]  # many=True: a list

    if saved is None:
        return conditional_response(request, build)
    return conditional_response(
        request, build, fingerprint=library_fingerprint(request), private=True
    )


def active_topic_slug(slug: str) -> str | None:
    """The slug of the active topic this slug names: its own, or that of the
    topic it was merged into; None for any other."""
    # Topics come from the topics app, which builds on this one: reached
    # through the relation, not imported.
    topics = Paper._meta.get_field("topics").related_model._default_manager
    named = topics.filter(Q(slug=slug) | Q(aliases__slug=slug), is_active=True)
    return named.values_list("slug", flat=True).first()


def library_fingerprint(request: Request) -> str:
    """Changes whenever the caller saves or unsaves a paper (ids only grow)."""
    mine = SavedPaper.objects.filter(user=signed_in(request)).aggregate(
        count=Count("id"), last=Max("id")
    )
    return f"{request.user.pk}:{mine['count']}:{mine['last']}"


class PaperViewSet(StrictQueryParams, viewsets.GenericViewSet):
    """Papers, newest first; anyone may read them."""

    permission_classes = [AllowAny]
    lookup_field = "arxiv_id"
    lookup_value_regex = ARXIV_ID_PATH
    queryset = Paper.objects.none()
    serializer_class = PaperSerializer

    def allowed_query_params(self) -> AbstractSet[str]:
        if self.action == "list":
            return (
                query_names(PaperFilterSerializer) | PaperCursorPagination.query_params
            )
        return set()

    @extend_schema(
        summary="List papers",
        description="Newest first (by the day arXiv first announced them), with "
        "cursor pagination: follow `next` until it is null. Filters combine.",
        parameters=[
            *PAPER_LIST_PARAMETERS,
            *CONDITIONAL_PARAMETERS,
            *VALIDATOR_HEADERS,
        ],
        responses={
            200: PaperPageSerializer,
            **CONDITIONAL_RESPONSES,
            **PAPER_LIST_ERRORS,
            404: OpenApiResponse(
                ErrorSerializer,
                description="`topic` is no active topic's slug (code not_found, "
                "with the field), as topics/<slug>/ answers.",
            ),
        },
    )
    def list(self, request: Request) -> Response | HttpResponse:
        return paper_list_response(request)

    @extend_schema(
        summary="One paper",
        description="Authors in order with affiliations, categories, the topics it "
        "is in and why, versions, links and a BibTeX entry.",
        parameters=[PAPER_ID_PARAMETER, *CONDITIONAL_PARAMETERS, *VALIDATOR_HEADERS],
        responses={200: PaperDetailSerializer, **CONDITIONAL_RESPONSES},
    )
    def retrieve(self, request: Request, arxiv_id: str) -> Response | HttpResponse:
        def build() -> dict[str, Any]:
            paper = get_paper(arxiv_id)
            context = {"request": request}
            return PaperDetailSerializer(paper, context=context).data

        return conditional_response(request, build)

    @extend_schema(
        summary="Similar papers",
        description="The papers nearest to this one by the text of their title and "
        "abstract (tf-idf cosine), nearest first: at most 10, never another "
        "version of itself or a paper with the same title. Precomputed after "
        "ingest; a paper just ingested may have none yet.",
        parameters=[PAPER_ID_PARAMETER, *CONDITIONAL_PARAMETERS, *VALIDATOR_HEADERS],
        responses={200: SimilarPapersSerializer, **CONDITIONAL_RESPONSES},
    )
    @action(detail=True, methods=["get"])
    def similar(self, request: Request, arxiv_id: str) -> Response | HttpResponse:
        def build() -> dict[str, Any]:
            try:
                base_id, _ = split_arxiv_id(arxiv_id)
            except ParseError as exc:
                raise Http404(str(exc)) from exc
            paper = find_paper(base_id)
            if paper is None:
                raise Http404(missing("paper", "arXiv id", base_id))
            ids = similar_ids(paper)
            found = with_listing_data(Paper.objects.filter(arxiv_id__in=ids))
            papers = found.prefetch_related("categories").in_bulk(field_name="arxiv_id")
            nearest = with_authors(
                papers[similar] for similar in ids if similar in papers
            )
            context = {"request": request}
            return {
                "results": PaperSerializer(nearest, many=True, context=context).data
            }

        return conditional_response(request, build)
