"""Staff in the API hold what Django admin grants them, and no more."""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import DjangoModelPermissions
from rest_framework.request import Request

VIEW = "%(app_label)s.view_%(model_name)s"


class AdminPermissions(DjangoModelPermissions):
    """A staff account holding the model permission admin asks for the same
    thing: view to read, add to create, change to edit, delete to delete. A
    staff account given only some of them (say, to watch the feed sources) is
    refused the rest here as in admin."""

    perms_map = {**DjangoModelPermissions.perms_map, "GET": [VIEW], "HEAD": [VIEW]}

    def has_permission(self, request: Request, view: Any) -> bool:
        if request.method not in view.allowed_methods:
            return True  # the view answers 405, whoever asks
        staff = bool(request.user and request.user.is_staff)
        return staff and super().has_permission(request, view)
