"""The site's URLs plus the minimal view bench.pages measures the pages against."""

from __future__ import annotations

from django.http import HttpRequest
from django.http import HttpResponse
from django.urls import path

from config.urls import urlpatterns as site_urlpatterns


def minimal(request: HttpRequest) -> HttpResponse:
    """The least a Django view can do, behind the site's full middleware stack."""
    return HttpResponse("ok")


urlpatterns = [path("bench/minimal/", minimal, name="bench-minimal"), *site_urlpatterns]
