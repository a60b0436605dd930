"""The view serving the schema (its making is core.api.schema's AutoSchema,
which DRF's settings name, so the two live apart: drf-spectacular's views module
reads those settings when imported)."""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from typing import Any

from django.http import Http404
from drf_spectacular.views import SpectacularAPIView
from rest_framework.exceptions import NotFound
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.views import StrictQueryParams


class FormatParameter(DefaultContentNegotiation):
    """DRF's negotiation, ?format= read: the settings leave it unread for the
    API's endpoints (URL_FORMAT_OVERRIDE), which come in JSON alone."""

    def select_renderer(
        self,
        request: Request,
        renderers: Iterable[BaseRenderer],
        format_suffix: str | None = None,
    ) -> tuple[BaseRenderer, str]:
        asked = format_suffix or request.query_params.get("format")
        chosen: tuple[BaseRenderer, str] = super().select_renderer(
            request, renderers, asked
        )
        return chosen


class SchemaView(StrictQueryParams, SpectacularAPIView):
    """The schema at /api/schema/, in YAML or JSON. Its errors come in the API's
    one JSON shape, as every endpoint's do: drf-spectacular's view wrote them in
    YAML, under the schema's media type, and a format it lacks as a bare "Not
    found."."""

    content_negotiation_class = FormatParameter

    def allowed_query_params(self) -> AbstractSet[str]:
        # What drf-spectacular's view reads but ?version=, which it wrote into
        # the schema's version and its file's name whatever it was.
        return {"format", "lang"}

    def perform_content_negotiation(
        self, request: Request, force: bool = False
    ) -> tuple[BaseRenderer, str]:
        try:
            return super().perform_content_negotiation(request, force)
        except Http404:
            formats = sorted({renderer.format for renderer in self.get_renderers()})
            asked = request.query_params.get("format")
            raise NotFound(
                f"The schema comes as {' or '.join(formats)}, not “{asked}”."
            ) from None

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        if getattr(response, "exception", False):
            request.accepted_renderer = JSONRenderer()
            request.accepted_media_type = JSONRenderer.media_type
        return super().finalize_response(request, response, *args, **kwargs)
