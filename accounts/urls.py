from __future__ import annotations

from django.urls import path

from accounts import views

app_name = "accounts"

urlpatterns = [
    path("", views.settings_page, name="settings"),
    path("token/create/", views.token_create, name="token_create"),
    path("token/rotate/", views.token_rotate, name="token_rotate"),
    path("token/revoke/", views.token_revoke, name="token_revoke"),
    path("feed/create/", views.feed_create, name="feed_create"),
    path("feed/rotate/", views.feed_rotate, name="feed_rotate"),
    path("feed/revoke/", views.feed_revoke, name="feed_revoke"),
    path("data/", views.data_download, name="data"),
    path("delete/", views.delete_page, name="delete"),
]
