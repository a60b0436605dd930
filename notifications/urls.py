from __future__ import annotations

from django.urls import path

from notifications import views

app_name = "notifications"

urlpatterns = [
    path("preview/", views.preview, name="preview"),
    path("test/", views.test_digest, name="test"),
    path("mute/<slug:slug>/", views.mute, name="mute"),
]
