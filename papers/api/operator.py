"""Ingestion, for staff: the runs and the feed sources."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import mixins
from rest_framework import viewsets
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.permissions import AdminPermissions
from core.api.views import StrictPageNumberPagination
from core.api.views import StrictQueryParams
from papers.models import FeedSource
from papers.models import IngestRun
from papers.serializers import FeedSourceSerializer
from papers.serializers import IngestRunSerializer


class IngestRunViewSet(
    StrictQueryParams, mixins.ListModelMixin, viewsets.GenericViewSet
):
    """Ingest runs, newest first (staff only)."""

    permission_classes = [AdminPermissions]
    serializer_class = IngestRunSerializer
    pagination_class = StrictPageNumberPagination
    queryset = IngestRun.objects.select_related("feed").order_by("-started_at", "-id")

    def allowed_query_params(self) -> set[str]:
        return StrictPageNumberPagination().query_params()

    @extend_schema(summary="List ingest runs (staff)")
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)


class FeedSourceViewSet(
    StrictQueryParams, mixins.ListModelMixin, viewsets.GenericViewSet
):
    """Where papers come from, with their schedule and health (staff only)."""

    permission_classes = [AdminPermissions]
    serializer_class = FeedSourceSerializer
    pagination_class = StrictPageNumberPagination
    queryset = FeedSource.objects.order_by("name")

    def allowed_query_params(self) -> set[str]:
        return StrictPageNumberPagination().query_params()

    @extend_schema(summary="List feed sources (staff)")
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)
