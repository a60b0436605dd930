from __future__ import annotations

from django.contrib import admin
from django.urls import include
from django.urls import path

from config.health import healthz
from topics.views import home

urlpatterns = [
    path("", home, name="home"),
    path("topics/", include("topics.urls")),
    path("papers/", include("papers.urls")),
    path("accounts/", include("allauth.urls")),
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
]
