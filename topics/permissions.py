"""Who may do what to topics through the API: anyone reads; curators write, as
admin lets them (core.api.permissions)."""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request

from core.api.permissions import AdminPermissions


class CuratorsWrite(AdminPermissions):
    # Read by core.api.schema: safe methods need no authentication.
    public_read = True

    def has_permission(self, request: Request, view: Any) -> bool:
        if request.method in SAFE_METHODS:
            return True
        if getattr(view, "action", None) == "retag":
            # A POST, but a change of a topic that exists, not a new one.
            staff = bool(request.user and request.user.is_staff)
            return staff and request.user.has_perm("topics.change_topic")
        return super().has_permission(request, view)


def sees_inactive_topics(request: Request) -> bool:
    """Staff whom admin shows topics to (as view or change permission does)
    read inactive topics too, which they may change; to anyone else such a
    topic is not there."""
    user = request.user
    return bool(user and user.is_staff) and (
        user.has_perm("topics.view_topic") or user.has_perm("topics.change_topic")
    )
