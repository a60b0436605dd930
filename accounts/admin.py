from __future__ import annotations

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.http import HttpRequest
from rest_framework.authtoken.admin import TokenAdmin as DRFTokenAdmin
from rest_framework.authtoken.models import TokenProxy

from accounts.models import DigestPreferences
from accounts.models import User
from core.admin import CountedDeletion


@admin.register(User)
class UserAdmin(CountedDeletion, DjangoUserAdmin):
    ordering = ["email"]
    list_display = [
        "email",
        "first_name",
        "last_name",
        "is_staff",
        "is_active",
        "date_joined",
    ]
    list_filter = ["is_staff", "is_superuser", "is_active"]
    search_fields = ["email", "first_name", "last_name"]
    fieldsets = [
        (None, {"fields": ["email", "password"]}),
        ("Personal info", {"fields": ["first_name", "last_name"]}),
        (
            "Permissions",
            {
                "fields": [
                    "is_active",
                    "is_staff",
                    "is_superuser",
                    "groups",
                    "user_permissions",
                ]
            },
        ),
        ("Important dates", {"fields": ["last_login", "date_joined"]}),
    ]
    add_fieldsets = [
        (None, {"classes": ["wide"], "fields": ["email", "password1", "password2"]}),
    ]


@admin.register(DigestPreferences)
class DigestPreferencesAdmin(admin.ModelAdmin):
    list_display = ["user", "frequency", "weekday", "hour", "time_zone", "max_papers"]
    list_filter = ["frequency", "weekday"]
    list_select_related = ["user"]
    search_fields = ["user__email"]
    raw_id_fields = ["user"]


# DRF's token admin searches by username, which this user model does not have.
admin.site.unregister(TokenProxy)


@admin.register(TokenProxy)
class TokenAdmin(DRFTokenAdmin):
    """Who holds an API token, and since when. The key is a password, shown to
    its reader once: never here (DRF's admin lists it, and names each token's
    page, title and delete question by it). A reader revokes their own; an
    account made inactive is refused by the API whatever its token."""

    list_display = ["user", "created"]
    list_display_links = None
    search_fields = ["user__email"]
    search_help_text = "Email"
    ordering = ["user__email"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_view_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return obj is None and super().has_view_permission(request)
