"""The caller's saved searches (topics.saved_searches is their service)."""

from __future__ import annotations

from typing import Any

from django.db.models import Count
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse
from drf_spectacular.utils import extend_schema
from rest_framework import mixins
from rest_framework import status
from rest_framework import viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.requests import signed_in
from core.api.errors import ErrorSerializer
from core.api.views import StrictQueryParams
from topics.models import SavedSearch
from topics.saved_searches import SavedSearchError
from topics.saved_searches import create_search
from topics.saved_searches import delete_search
from topics.saved_searches import update_search
from topics.serializers import SavedSearchCreateSerializer
from topics.serializers import SavedSearchInputSerializer
from topics.serializers import SavedSearchSerializer
from topics.serializers import saved_search_error

SEARCH_ERRORS = {
    400: OpenApiResponse(
        ErrorSerializer,
        description="The query is invalid (code invalid_query or invalid_rule on "
        "`query`, with the 0-based `position` of the problem), or the caller "
        "has MOMENTUM_SAVED_SEARCHES_MAX searches already (code limit), or a "
        "rule search waits while its index is rebuilt after a release (code "
        "index_rebuilding on non_field_errors: try again in a few minutes).",
    ),
    409: OpenApiResponse(
        ErrorSerializer,
        description="The caller has a search of this name (code unique on `name`).",
    ),
}


class SavedSearchViewSet(
    StrictQueryParams,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """The caller's saved searches: private alerts whose new matches enter their
    feed and digest (topics.saved_searches)."""

    serializer_class = SavedSearchSerializer
    pagination_class = None
    lookup_value_regex = "[0-9]+"  # any other id is a 404, not a server error

    def get_queryset(self) -> Any:
        if getattr(self, "swagger_fake_view", False):  # the schema's types
            return SavedSearch.objects.none()
        return (
            SavedSearch.objects.filter(user=signed_in(self.request))
            .annotate(match_count=Count("matches"))
            .order_by("created_at", "pk")
        )

    def _shown(self, search: SavedSearch, code: int = 200) -> Response:
        data = SavedSearchSerializer(self.get_queryset().get(pk=search.pk)).data
        return Response(data, status=code)

    @extend_schema(summary="List saved searches")
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(summary="A saved search")
    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().retrieve(request, *args, **kwargs)

    @extend_schema(
        summary="Save a search",
        description="Finds its newest matches at once; its new matches after "
        "each ingest. `name` and `query` are required.",
        request=SavedSearchCreateSerializer,
        responses={201: SavedSearchSerializer, **SEARCH_ERRORS},
    )
    def create(self, request: Request) -> Response:
        given = SavedSearchCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        try:
            search = create_search(
                signed_in(request),
                name=data["name"],
                query=data["query"],
                syntax=data.get("syntax", SavedSearch.Syntax.SEARCH),
            )
        except SavedSearchError as exc:
            raise saved_search_error(exc) from exc
        return self._shown(search, status.HTTP_201_CREATED)

    @extend_schema(
        summary="Rename a saved search or change its query",
        description="A changed query or syntax finds its matches again.",
        request=SavedSearchInputSerializer,
        responses={200: SavedSearchSerializer, **SEARCH_ERRORS},
    )
    def partial_update(self, request: Request, pk: str) -> Response:
        search = get_object_or_404(self.get_queryset(), pk=pk)
        given = SavedSearchInputSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            update_search(search, **given.validated_data)
        except SavedSearchError as exc:
            raise saved_search_error(exc) from exc
        return self._shown(search)

    @extend_schema(
        summary="Delete a saved search",
        responses={204: OpenApiResponse(description="Deleted.")},
    )
    def destroy(self, request: Request, pk: str) -> Response:
        delete_search(get_object_or_404(self.get_queryset(), pk=pk))
        return Response(status=status.HTTP_204_NO_CONTENT)
