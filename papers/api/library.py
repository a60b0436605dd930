"""The caller's library: saved papers and ratings (the signal For you learns
from)."""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from typing import Any

from django.db.models import F
from django.db.models import QuerySet
from django.http import Http404
from drf_spectacular.utils import OpenApiResponse
from drf_spectacular.utils import extend_schema
from rest_framework import mixins
from rest_framework import serializers
from rest_framework import status
from rest_framework import viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.requests import signed_in
from core.api.errors import ErrorSerializer
from core.api.errors import missing
from core.api.views import StrictPageNumberPagination
from core.api.views import StrictQueryParams
from papers.api.papers import PAPER_ID_PARAMETER
from papers.library import saved_papers
from papers.library import set_rating
from papers.library import set_saved
from papers.library import signal_papers
from papers.models import Paper
from papers.pagination import SignalCursorPagination
from papers.pagination import SignalCursorSerializer
from papers.query import get_paper_row
from papers.query import with_authors
from papers.query import with_listing_data
from papers.serializers import ARXIV_ID_PATH
from papers.serializers import RatingInputSerializer
from papers.serializers import RatingPageSerializer
from papers.serializers import RatingSerializer
from papers.serializers import SavedPaperSerializer
from papers.serializers import SaveInputSerializer

NO_SUCH_PAPER = OpenApiResponse(
    ErrorSerializer,
    description="There is no such paper (code not_found, with the field).",
)


class SavedViewSet(
    StrictQueryParams,
    mixins.ListModelMixin,
    viewsets.GenericViewSet,
):
    """The caller's saved papers (their library), most recently saved first."""

    serializer_class = SavedPaperSerializer
    pagination_class = StrictPageNumberPagination
    lookup_field = "arxiv_id"
    lookup_value_regex = ARXIV_ID_PATH

    def allowed_query_params(self) -> set[str]:
        return (
            StrictPageNumberPagination().query_params()
            if self.action == "list"
            else set()
        )

    def get_queryset(self) -> QuerySet[Paper]:
        return (
            with_listing_data(saved_papers(signed_in(self.request)))
            .annotate(saved_at=F("saves__created_at"))
            .prefetch_related("categories")
        )

    @extend_schema(summary="List saved papers")
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = with_authors(self.paginate_queryset(self.get_queryset()) or [])
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    @extend_schema(
        summary="Save a paper",
        description="Idempotent: saving a saved paper changes nothing (200, "
        "where a new save is a 201).",
        request=SaveInputSerializer,
        responses={
            201: SavedPaperSerializer,
            200: OpenApiResponse(SavedPaperSerializer, description="Already saved."),
            404: NO_SUCH_PAPER,
        },
    )
    def create(self, request: Request) -> Response:
        given = SaveInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        paper = _posted_paper(given)
        created = set_saved(signed_in(request), paper, True)
        [saved] = with_authors([self.get_queryset().get(pk=paper.pk)])
        return Response(
            SavedPaperSerializer(saved, context={"request": request}).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )

    @extend_schema(
        summary="Unsave a paper",
        description="Idempotent: unsaving a paper that is not saved changes nothing.",
        parameters=[PAPER_ID_PARAMETER],
        responses={204: None},
    )
    def destroy(self, request: Request, arxiv_id: str) -> Response:
        set_saved(signed_in(request), get_paper_row(arxiv_id), False)
        return Response(status=status.HTTP_204_NO_CONTENT)


class RatingViewSet(StrictQueryParams, viewsets.GenericViewSet):
    """The caller's thumbs up and down, with their saved papers counted as up:
    the signal their recommendations learn from (papers.library.signal_papers)."""

    serializer_class = RatingSerializer
    lookup_field = "arxiv_id"
    lookup_value_regex = ARXIV_ID_PATH

    def allowed_query_params(self) -> AbstractSet[str]:
        if self.action == "list":
            return SignalCursorPagination.query_params
        return set()

    @extend_schema(
        summary="List rated papers",
        description="The papers the caller rated, and those they saved without "
        "rating them (as 1), most recently rated or saved first, with cursor "
        "pagination: follow `next` until it is null.",
        parameters=[SignalCursorSerializer],
        responses={200: RatingPageSerializer},
    )
    def list(self, request: Request) -> Response:
        pagination = SignalCursorPagination(request)
        rows, next_url = pagination.page(signal_papers(signed_in(request)))
        data = RatingSerializer(rows, many=True).data
        return Response({"next": next_url, "results": data})

    @extend_schema(
        summary="Rate a paper",
        description="Thumbs up (1) or down (-1); a rating given again changes "
        "nothing, another replaces it. 201 for a paper not rated before, else 200.",
        request=RatingInputSerializer,
        responses={
            200: RatingSerializer,
            201: RatingSerializer,
            404: NO_SUCH_PAPER,
        },
    )
    def create(self, request: Request) -> Response:
        given = RatingInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        paper = _posted_paper(given)
        user = signed_in(request)
        before = set_rating(user, paper, given.validated_data["rating"])
        entry = signal_papers(user).get(pk=paper.pk)
        return Response(
            RatingSerializer(entry).data,
            status=status.HTTP_201_CREATED if before is None else status.HTTP_200_OK,
        )

    @extend_schema(
        summary="Clear a paper's rating",
        description="Idempotent: clearing a paper not rated changes nothing. A "
        "saved paper stays saved, and so still counts as 1 in the list.",
        parameters=[PAPER_ID_PARAMETER],
        responses={204: None},
    )
    def destroy(self, request: Request, arxiv_id: str) -> Response:
        set_rating(signed_in(request), get_paper_row(arxiv_id), None)
        return Response(status=status.HTTP_204_NO_CONTENT)


def _posted_paper(given: serializers.Serializer) -> Paper:
    """The paper a POST names, or the field's error when there is none."""
    try:
        return get_paper_row(given.validated_data["paper"])
    except Http404:
        raise serializers.ValidationError(
            {"paper": [missing("paper", "arXiv id", given.validated_data["paper"])]},
            code="does_not_exist",
        ) from None
