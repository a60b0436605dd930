"""What every API view shares: strict query parameters and strict page sizes."""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from typing import Any

from django.conf import settings
from django.http import HttpResponsePermanentRedirect
from rest_framework import serializers
from rest_framework.exceptions import ErrorDetail
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.errors import moved
from core.api.fields import QueryInteger
from core.api.fields import StrictSerializer

MAX_PAGE_SIZE = 100
# Far past any list's last page; bounded so that the schema can say so.
MAX_PAGE = 1_000_000


class StrictQueryParams:
    """Refuses query parameters the endpoint does not know (a typo in a filter
    name would otherwise return everything), and a DELETE's body (refuse_body)."""

    def allowed_query_params(self) -> AbstractSet[str]:
        return set()

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # type: ignore[misc]
        if getattr(self, (request.method or "").lower(), None) is None:
            return  # dispatch answers 405 for a method the endpoint lacks
        params = request.query_params
        unknown = sorted(set(params) - self.allowed_query_params())
        # Every parameter takes one value: of category=a&category=b, the last
        # alone was read, and the first never checked.
        repeated = sorted(name for name in params if len(params.getlist(name)) > 1)
        refused = {
            **dict.fromkeys(repeated, ("Given more than once.", "repeated_parameter")),
            **dict.fromkeys(unknown, ("Unknown query parameter.", "unknown_parameter")),
        }
        if refused:
            raise ValidationError(
                {name: [ErrorDetail(*why)] for name, why in refused.items()}
            )
        if request.method == "DELETE":
            refuse_body(request)  # a delete takes none

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        # A redirect made by code the API shares with the site's pages (a
        # former slug's, topics.query.follow_merges) is written as the API's.
        if isinstance(response, HttpResponsePermanentRedirect):
            response = moved(response["Location"])  # type: ignore[assignment]  # DRF takes any HttpResponse
        finalized: Response = super().finalize_response(  # type: ignore[misc]
            request, response, *args, **kwargs
        )
        return finalized


class _NoBody(StrictSerializer):
    """An operation's body that names nothing: none, or {}."""


def refuse_body(request: Request) -> None:
    """For an operation that takes no body: one sent is read, so that one not
    JSON is a 400 parse_error and any key in it unknown_field, as for the
    operations that take one (a parameter put in the body by mistake was
    dropped, and the call went on)."""
    _NoBody(data=request.data).is_valid(raise_exception=True)


def read_query(
    serializer_class: type[serializers.Serializer[Any]], request: Request
) -> dict[str, Any]:
    """The query parameters `serializer_class` declares, validated (400 if not)."""
    names = query_names(serializer_class)
    params = {k: v for k, v in request.query_params.items() if k in names}
    declared = serializer_class._declared_fields.values()
    if not params and not any(field.required for field in declared):
        return {}  # nothing given, nothing required: no serializer to build
    serializer = serializer_class(data=params)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def query_names(serializer_class: type[serializers.Serializer[Any]]) -> frozenset[str]:
    """The parameters a query serializer reads (its declared fields)."""
    return frozenset(serializer_class._declared_fields)


class PageSerializer(serializers.Serializer[Any]):
    page = QueryInteger(required=False, min_value=1, max_value=MAX_PAGE)
    page_size = QueryInteger(required=False, min_value=1, max_value=MAX_PAGE_SIZE)


class StrictPageNumberPagination(PageNumberPagination):
    """Page numbers with a count, for short lists; a page size over the maximum is
    refused rather than cut down, so a client learns its request was not met."""

    page_size = 25
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE
    # DRF's "Invalid page.", in the wording of the API's other 404s.
    invalid_page_message = "No page has the number “{page_number}”."

    def paginate_queryset(
        self, queryset: Any, request: Request, view: Any = None
    ) -> Any:
        # A page number that is not one is bad input (400); past the end is 404.
        read_query(PageSerializer, request)
        return super().paginate_queryset(queryset, request, view)

    def get_page_size(self, request: Request) -> int:
        size: int = read_query(PageSerializer, request).get("page_size", self.page_size)
        return size

    # The list's address (core.api.schema sets it), for the schema's examples.
    schema_path = ""

    def query_params(self) -> set[str]:
        return {self.page_query_param, self.page_size_query_param}

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        paged: dict[str, Any] = super().get_paginated_response_schema(schema)
        # DRF's examples name http://api.example.org/accounts/: this list's own.
        address = settings.MOMENTUM_SITE_URL.rstrip("/") + self.schema_path
        for name, page in (("next", 4), ("previous", 2)):
            example = f"{address}?{self.page_query_param}={page}"
            paged["properties"][name]["example"] = example
        return paged

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        return [
            {
                "name": self.page_query_param,
                "required": False,
                "in": "query",
                "description": "Page number, from 1; past the last page: 404.",
                "schema": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE},
            },
            {
                "name": self.page_size_query_param,
                "required": False,
                "in": "query",
                "description": f"Results per page, 1 to {MAX_PAGE_SIZE} "
                f"(default {self.page_size}).",
                "schema": {"type": "integer", "minimum": 1, "maximum": MAX_PAGE_SIZE},
            },
        ]
