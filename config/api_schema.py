"""drf-spectacular's AutoSchema, plus the error responses every operation can give.

Views declare their success responses; the errors follow from how the view is
built (permissions, path parameters, request bodies, throttling), so they are
added here once instead of on every view, always in the shared error shape.
"""

from __future__ import annotations

from drf_spectacular import openapi
from drf_spectacular.utils import OpenApiResponse
from rest_framework.permissions import SAFE_METHODS
from rest_framework.permissions import AllowAny

from config.api_errors import ErrorSerializer
from config.api_views import StrictPageNumberPagination

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


class AutoSchema(openapi.AutoSchema):
    def _get_response_bodies(self, direction: str = "response") -> dict:
        responses = super()._get_response_bodies(direction)
        for code in self._error_codes():
            if code not in responses:
                response = OpenApiResponse(ErrorSerializer, description=ERRORS[code])
                responses[code] = self._get_response_for_code(
                    response, code, direction=direction
                )
        return responses

    def get_auth(self) -> list[dict]:
        auths = super().get_auth()
        # Open to anonymous callers too (reads of papers and topics).
        if self._is_public() and {} not in auths:
            auths.append({})
        return auths

    def _error_codes(self) -> list[str]:
        codes = ["400", "406", "429"]
        if not self._is_public():
            codes += ["401", "403"]
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
