"""The site's URLs plus the minimal view bench.pages measures the pages against."""

from __future__ import annotations

from django.http import HttpRequest
from django.http import HttpResponse
from django.urls import path
from rest_framework.decorators import api_view
from rest_framework.decorators import permission_classes
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from config.urls import urlpatterns as site_urlpatterns


def minimal(request: HttpRequest) -> HttpResponse:
    """The least a Django view can do, behind the site's full middleware stack."""
    return HttpResponse("ok")


@api_view(["GET"])
@permission_classes([AllowAny])
def minimal_api(request: Request) -> Response:
    """The least a DRF view can do, with the API's authentication and throttling."""
    return Response({"ok": True})


urlpatterns = [
    path("bench/minimal/", minimal, name="bench-minimal"),
    path("bench/minimal-api/", minimal_api, name="bench-minimal-api"),
    *site_urlpatterns,
]
