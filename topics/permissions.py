"""Who may do what to topics through the API: anyone reads, only staff write."""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import SAFE_METHODS
from rest_framework.permissions import BasePermission
from rest_framework.request import Request


class IsStaffOrReadOnly(BasePermission):
    # Read by core.api.schema: safe methods need no authentication.
    public_read = True

    def has_permission(self, request: Request, view: Any) -> bool:
        if request.method in SAFE_METHODS:
            return True
        return bool(request.user and request.user.is_staff)
