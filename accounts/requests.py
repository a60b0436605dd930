"""The signed-in user of a request, for code behind a login check."""

from __future__ import annotations

from typing import cast

from django.http import HttpRequest
from rest_framework.request import Request

from accounts.models import User


def signed_in(request: HttpRequest | Request) -> User:
    """`request.user` where only a signed-in user gets this far (login_required,
    DRF's IsAuthenticated, the admin, a toggle past its login check). A cast for
    the type checker, which sees User | AnonymousUser: nothing is checked."""
    return cast(User, request.user)
