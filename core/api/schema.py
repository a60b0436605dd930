"""drf-spectacular's AutoSchema, plus the error responses every operation can give.

Views declare their success responses, and the errors only they give (a 404 for
a query parameter, a 409); the errors that follow from how the view is built
(authentication, permissions, path parameters, request bodies, throttling) are
added here once instead of on every view, always in the shared error shape.
"""

from __future__ import annotations

from typing import Any
from typing import Literal

from django.core.validators import ProhibitNullCharactersValidator
from django.core.validators import RegexValidator
from drf_spectacular import openapi
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.utils import OpenApiResponse
from rest_framework.permissions import SAFE_METHODS
from rest_framework.permissions import AllowAny

from core.api.errors import ErrorSerializer
from core.api.fields import NO_NUL_PATTERN
from core.api.fields import KeptChoice
from core.api.views import StrictPageNumberPagination

ERRORS = {
    "400": "Bad input: invalid parameters or body, an unknown query parameter, "
    "malformed JSON (code parse_error).",
    "401": "Not signed in: send `Authorization: Token <key>` or a session cookie.",
    "403": "Signed in but not allowed (staff only), or a session request "
    "without its CSRF token (code csrf_failed).",
    "404": "No such resource (or a page past the last).",
    "406": "The Accept header asks for something other than JSON.",
    "415": "The body is not JSON.",
    "429": "Too many requests; the Retry-After header says when to try again.",
}
# Open to anyone, but a token that is not one is still refused.
PUBLIC_401 = (
    "An `Authorization` header with a token that is not one, or a key sent "
    "as `Bearer <key>` (code authentication_failed); send none to read "
    "anonymously."
)


class AutoSchema(openapi.AutoSchema):
    def _get_response_bodies(
        self, direction: Literal["request", "response"] = "response"
    ) -> dict[str, Any]:
        responses = super()._get_response_bodies(direction)
        for code in self._error_codes():
            if code not in responses:
                description = ERRORS[code]
                if code == "401" and self._is_public():
                    description = PUBLIC_401
                response = OpenApiResponse(ErrorSerializer, description=description)
                responses[code] = self._get_response_for_code(
                    response, code, direction=direction
                )
        return responses

    def get_auth(self) -> list[dict[str, Any]]:
        auths = super().get_auth()
        # Open to anonymous callers too (reads of papers and topics).
        if self._is_public() and {} not in auths:
            auths.append({})
        return auths

    def _map_basic_serializer(self, serializer: Any, direction: str) -> dict[str, Any]:
        schema: dict[str, Any] = super()._map_basic_serializer(serializer, direction)
        if direction == "request":
            for name, field in serializer.fields.items():
                refuse_nul(schema["properties"].get(name), field)
            # Every body serializer refuses other keys (KnownFieldsOnly).
            schema["additionalProperties"] = False
        return schema

    def _get_paginator(self) -> Any:
        paginator = super()._get_paginator()
        if isinstance(paginator, StrictPageNumberPagination):
            paginator.schema_path = self.path  # its examples name this list
        return paginator

    def _error_codes(self) -> list[str]:
        # Any operation refuses a bad token (401), even one open to anyone.
        codes = ["400", "401", "406", "429"]
        if not self._is_public():
            codes.append("403")
        paged = (
            getattr(self.view, "pagination_class", None) is StrictPageNumberPagination
        )
        if "{" in self.path or (paged and self._is_list_view()):
            codes.append("404")
        if self.method in ("POST", "PUT", "PATCH"):
            codes.append("415")
        return sorted(codes)

    def _is_public(self) -> bool:
        permissions = self.view.get_permissions()
        return all(
            isinstance(permission, AllowAny)
            or (
                getattr(permission, "public_read", False)
                and self.method in SAFE_METHODS
            )
            for permission in permissions
        )


def refuse_nul(schema: Any, field: Any) -> None:
    """DRF refuses NUL in every string it reads: say so where no pattern of the
    field's own does (those refuse NUL too, see core.api.fields). Added after
    drf-spectacular's own rules, which would make a blank-allowing field with a
    pattern a oneOf that "" matches twice."""
    if (
        isinstance(schema, dict)
        and schema.get("type") == "string"
        and not {"format", "enum", "pattern"} & set(schema)
        and any(
            isinstance(v, ProhibitNullCharactersValidator) for v in field.validators
        )
        and not any(isinstance(v, RegexValidator) for v in field.validators)
    ):
        schema["pattern"] = NO_NUL_PATTERN


class KeptChoiceSchema(OpenApiSerializerFieldExtension):
    """KeptChoice: its choices (an enum) for writes; read, any string."""

    target_class = KeptChoice

    def map_serializer_field(
        self, auto_schema: Any, direction: Literal["request", "response"]
    ) -> dict[str, Any]:
        if direction == "response":
            return {"type": "string"}
        schema: dict[str, Any] = auto_schema._map_serializer_field(
            self.target, direction, bypass_extensions=True
        )
        return schema
