from __future__ import annotations

from django.contrib import admin
from django.urls import include
from django.urls import path

from config.health import healthz
from papers import views as paper_views
from topics.views import home

urlpatterns = [
    path("", home, name="home"),
    path("topics/", include("topics.urls")),
    path("papers/", include("papers.urls")),
    path("search/", paper_views.search, name="search"),
    path("accounts/", include("allauth.urls")),
    path("saved/", paper_views.saved, name="saved"),
    path("saved/bibtex/", paper_views.saved_bibtex, name="saved_bibtex"),
    path("settings/", include("accounts.urls")),
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
]
