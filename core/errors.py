"""The site's own pages for the requests it refuses before any view answers: a
malformed request (400), a form sent with an expired CSRF token (403), a method
an address does not take (405); and for a server error (500). Django's are bare
text outside the site (its CSRF page speaks of DEBUG); under /api/ the answer
is the API's JSON error."""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import DisallowedHost
from django.http import HttpRequest
from django.http import HttpResponse
from django.http import HttpResponseBadRequest
from django.http import JsonResponse
from django.shortcuts import render
from django.template.loader import get_template
from django.utils.http import url_has_allowed_host_and_scheme
from django_guid import get_guid

from core.api.errors import MALFORMED
from core.api.errors import error_body
from core.api.errors import server_error_body


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler400: too many parameters, a body too large, a host not served."""
    if isinstance(exception, DisallowedHost):
        # Not this site: none of its pages (their links name the host).
        return HttpResponseBadRequest(
            "This server does not answer for that host.", content_type="text/plain"
        )
    if _is_api(request):
        body = error_body("parse_error", MALFORMED)
        return JsonResponse(body, status=400)
    return render(request, "400.html", status=400)


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: the page says the request's id (REQUEST IDS in settings), which
    its log lines carry, for a reader to quote; under /api/ the body does. What
    failed may be anything, the database included: this reads nothing else."""
    if _is_api(request):
        return JsonResponse(server_error_body(), status=500)
    html = get_template("500.html").render({"reference": get_guid() or ""})
    return HttpResponse(html, status=500)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """CSRF_FAILURE_VIEW: most often a page opened before its reader logged in
    or out in another tab, whose forms carry the token of that session."""
    if _is_api(request):
        body = error_body("csrf_failed", f"CSRF check failed: {reason}")
        return JsonResponse(body, status=403)
    referer = request.headers.get("Referer", "")
    same_site = url_has_allowed_host_and_scheme(
        referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    context = {"back": referer if same_site else ""}
    return render(request, "403_csrf.html", context, status=403)


# What the site's pages take: opened, and their forms sent. The API has its own.
PAGE_METHODS = ("GET", "HEAD", "POST")


def method_pages(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    """Middleware: a page asked with another method (TRACE, OPTIONS, PUT) is
    refused before any view serves it as a GET; a 405 without a body
    (require_POST's, to a reload or a bookmark of a form's address) becomes a
    page that says what to do."""

    def middleware(request: HttpRequest) -> HttpResponse:
        if _is_api(request):
            return get_response(request)
        if request.method not in PAGE_METHODS:
            return _not_allowed(request, ", ".join(PAGE_METHODS))
        response = get_response(request)
        if response.status_code != 405 or response.content:
            return response
        return _not_allowed(request, response.get("Allow", ""))

    return middleware


def _not_allowed(request: HttpRequest, allowed: str) -> HttpResponse:
    page = render(request, "405.html", {"method": request.method}, status=405)
    page["Allow"] = allowed
    return page
