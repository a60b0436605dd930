from __future__ import annotations

from django.urls import path

from papers import views

app_name = "papers"

urlpatterns = [
    # Old-style ids contain a slash (math/0601001v2), so actions come first.
    path("<path:arxiv_id>/save/", views.save, name="save"),
    path("<path:arxiv_id>/rate/", views.rate, name="rate"),
    path("<path:arxiv_id>/", views.paper_detail, name="detail"),
]
