from __future__ import annotations

from django.urls import path

from accounts import views

app_name = "accounts"

urlpatterns = [
    path("", views.settings_page, name="settings"),
    path("token/create/", views.token_create, name="token_create"),
    path("token/rotate/", views.token_rotate, name="token_rotate"),
    path("token/revoke/", views.token_revoke, name="token_revoke"),
    path("delete/", views.delete_page, name="delete"),
]
