"""One JSON shape for every API error, with a machine-readable code.

    {"error": {"code": "invalid", "message": "...",
               "fields": {"rule": [{"code": "invalid_rule", "message": "...",
                                    "position": 12}]}}}

`fields` appears on validation errors; nested fields are joined with dots
("categories.0"). A request whose only fault is to name a row that does not
exist (a topic, a paper, a category) is a 404 not_found, and one whose only
fault is to take a name already taken a 409 conflict, both still with `fields`:
the request was well formed, as the schema says, and a client can tell "fix
your request" (400) from "that thing is not there" (404). 404s, throttling,
authentication, CSRF and server errors all come out in this shape, so clients
handle one thing.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from django.core.exceptions import BadRequest
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import SuspiciousOperation
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from django.http import HttpRequest
from django.http import HttpResponse
from django.http import HttpResponsePermanentRedirect
from django.urls import resolve
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django_guid import get_guid
from rest_framework import exceptions
from rest_framework import serializers
from rest_framework.fields import get_error_detail
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import set_rollback

logger = logging.getLogger(__name__)

VALIDATION_MESSAGE = "The request is not valid; see fields."
# Field error codes that are no fault of the request's form, and what they become.
MISSING_CODES = {"does_not_exist"}
CONFLICT_CODES = {"unique"}


def error_body(
    code: str, message: str, fields: dict[str, list[dict[str, Any]]] | None = None
) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if fields is not None:
        error["fields"] = fields
    return {"error": error}


def positioned_error(message: str, *, code: str, position: int) -> Any:
    """A field error that points into the value (a rule's error position)."""
    return serializers.ValidationError(
        # DRF keeps every detail as a string (_entry reads the number back).
        [{"message": message, "code": code, "position": str(position)}]
    )


def server_error_body() -> dict[str, Any]:
    """A server error's body, with the id of the request its log lines carry
    (REQUEST IDS in settings), for a client to quote."""
    body = error_body("server_error", "Something went wrong on our side.")
    body["error"]["reference"] = get_guid() or ""
    return body


MALFORMED = "The request is malformed: too many parameters, or too large a body."


def missing(thing: str, key: str, value: object) -> str:
    """A 404's message, in the one wording of every 404 the API gives for a
    name the client sent (in the address, the query or the body): "No topic has
    the slug “x”.", "No saved search has the id “7”."."""
    return f"No {thing} has the {key} “{value}”."


# get_object_or_404's message (DRF's get_object raises it): a class's name.
MODEL_404 = re.compile(r"No ([A-Za-z]+) matches the given query\.")
# An address's part, by its name in the URL pattern.
KEYS = {"pk": "id", "slug": "slug", "arxiv_id": "arXiv id", "author_id": "id"}


def _in_words(message: str, context: dict[str, Any]) -> str:
    """ "No SavedSearch matches the given query." (at me/searches/7/) as "No
    saved search has the id “7”.": what is missing named as the client named it.
    The lookups shared with the site's pages (topics.query, papers.query) word
    their 404s with `missing` already."""
    named = MODEL_404.fullmatch(message)
    view = context.get("view")
    if named is not None and view is not None:
        parts = context.get("kwargs") or {}
        # A viewset's lookup, or a view's one part (a topic's ask/).
        kwarg = getattr(view, "lookup_url_kwarg", None) or getattr(
            view, "lookup_field", next(iter(parts), "") if len(parts) == 1 else ""
        )
        value = parts.get(kwarg)
        if value is not None and kwarg in KEYS:
            thing = re.sub(r"(?<=.)(?=[A-Z])", " ", named.group(1)).lower()
            return missing(thing, KEYS[kwarg], value)
    return message


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    """DRF's EXCEPTION_HANDLER: every exception, expected or not, in one shape."""
    if isinstance(exc, DjangoValidationError):
        # With their codes ("unique" from full_clean is a conflict, see below).
        exc = exceptions.ValidationError(get_error_detail(exc))
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound(
            _in_words(str(exc.args[0]), context) if exc.args else None
        )
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(*exc.args)
    elif isinstance(exc, (SuspiciousOperation, BadRequest)):
        # Too many parameters, a body too large: the client's fault, and its
        # message may name settings.
        exc = exceptions.ParseError(MALFORMED)
    if not isinstance(exc, exceptions.APIException):
        logger.exception("API request failed", exc_info=exc)
        set_rollback()
        return Response(server_error_body(), status=500)

    headers = {}
    if auth_header := getattr(exc, "auth_header", None):
        headers["WWW-Authenticate"] = auth_header
    if wait := getattr(exc, "wait", None):
        headers["Retry-After"] = str(int(wait))
    set_rollback()
    if isinstance(exc, exceptions.ValidationError):
        return _validation_response(flatten(exc.detail))
    return Response(_body(exc), status=exc.status_code, headers=headers)


def _validation_response(fields: dict[str, list[dict[str, Any]]]) -> Response:
    codes = {entry["code"] for entries in fields.values() for entry in entries}
    if codes and codes <= MISSING_CODES:
        body = error_body(
            "not_found",
            "The request names something that does not exist; see fields.",
            fields,
        )
        return Response(body, status=404)
    if codes and codes <= MISSING_CODES | CONFLICT_CODES:
        body = error_body(
            "conflict", "The request takes a name already taken; see fields.", fields
        )
        return Response(body, status=409)
    return Response(error_body("invalid", VALIDATION_MESSAGE, fields), status=400)


def _body(exc: exceptions.APIException) -> dict[str, Any]:
    detail = exc.detail
    message = str(detail) if not isinstance(detail, (dict, list)) else str(exc)
    code = getattr(detail, "code", None) or exc.default_code
    if isinstance(exc, exceptions.PermissionDenied) and message.startswith("CSRF"):
        code = "csrf_failed"
    return error_body(str(code), message)


def flatten(detail: Any, prefix: str = "") -> dict[str, list[dict[str, Any]]]:
    """DRF's nested error detail as {"field.sub": [{"code", "message"}, ...]}."""
    if isinstance(detail, dict):
        if "message" in detail and "code" in detail:
            return {prefix or "non_field_errors": [_entry(detail)]}
        fields: dict[str, list[dict[str, Any]]] = {}
        for key, value in detail.items():
            name = f"{prefix}.{key}" if prefix else str(key or "non_field_errors")
            for field, entries in flatten(value, name).items():
                fields.setdefault(field, []).extend(entries)
        return fields
    if isinstance(detail, list):
        fields = {}
        for index, item in enumerate(detail):
            name = prefix
            if isinstance(item, (dict, list)) and not _is_entry(item):
                name = f"{prefix}.{index}" if prefix else str(index)
            for field, entries in flatten(item, name).items():
                fields.setdefault(field, []).extend(entries)
        return fields
    name = prefix or "non_field_errors"
    return {
        name: [
            {"code": str(getattr(detail, "code", "invalid")), "message": str(detail)}
        ]
    }


def _is_entry(item: Any) -> bool:
    return isinstance(item, dict) and "message" in item and "code" in item


def _entry(detail: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "code": str(detail["code"]),
        "message": str(detail["message"]),
    }
    if "position" in detail:
        entry["position"] = int(detail["position"])
    return entry


# Exempt: API clients authenticate by token; a 404 must not become a CSRF 403.
@csrf_exempt
def not_found(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
    """Any /api/ address that names no endpoint (/api/ and /api/v1/ too), with
    where the endpoints are listed. An endpoint's address without its final
    slash (which this catches before APPEND_SLASH could) leads to it: a GET
    redirected, as pages are; any other method told."""
    slashed = f"{request.path}/"
    if resolve(slashed).func is not not_found:
        if request.method in ("GET", "HEAD"):
            query = request.META.get("QUERY_STRING")
            return moved(f"{slashed}?{query}" if query else slashed)
        message = (
            f"No API endpoint at {request.path}; the address ends in a slash: {slashed}"
        )
    else:
        message = (
            f"No API endpoint at {request.path}; the endpoints: {reverse('api-docs')}."
        )
    # Rendered as DRF renders the API's other answers (compact, UTF-8).
    body = JSONRenderer().render(error_body("not_found", message))
    return HttpResponse(body, content_type="application/json", status=404)


def moved(location: str) -> HttpResponsePermanentRedirect:
    """A 301 under /api/, in JSON as every answer there (Django's are
    text/html): the new address in the body too."""
    body = JSONRenderer().render({"location": location})
    return HttpResponsePermanentRedirect(
        location, content=body, content_type="application/json"
    )


# SCHEMA
# ------------------------------------------------------------------------------


class ErrorEntrySerializer(serializers.Serializer[Any]):
    code = serializers.CharField(help_text="Machine-readable, e.g. invalid, required.")
    message = serializers.CharField()
    position = serializers.IntegerField(
        required=False,
        help_text="For topic rules: the 0-based offset of the problem in the rule.",
    )


class ErrorDetailSerializer(serializers.Serializer[Any]):
    code = serializers.CharField(
        help_text="Machine-readable: invalid, parse_error, not_authenticated, "
        "authentication_failed, permission_denied, csrf_failed, not_found, "
        "method_not_allowed, not_acceptable, unsupported_media_type, conflict, "
        "precondition_failed, token_exists, not_tagged, throttled, server_error."
    )
    message = serializers.CharField(help_text="For people; may change.")
    # A declared field: DRF's metaclass takes it off the class, so it does not
    # shadow Serializer.fields, which the stubs cannot know.
    fields = serializers.DictField(  # type: ignore[assignment]
        child=ErrorEntrySerializer(many=True),
        required=False,
        help_text="Errors per field (nested fields joined with dots): on 400s, "
        "and on 404s and 409s for a field naming something missing or taken.",
    )
    reference = serializers.CharField(
        required=False,
        help_text="On a 500: the request's id (also its X-Request-ID header), "
        "which the server's logs of it carry; quote it when you report the error.",
    )


class ErrorSerializer(serializers.Serializer[Any]):
    error = ErrorDetailSerializer()
