"""What a new password ends besides the reader's other sessions (Django ends
those): the keys that open the account without one, the API token and the
private feed's address. Someone who had the account for a while may have made
them; the reader makes new ones on the settings page."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest

from accounts.feed_tokens import revoke_feed
from accounts.models import User
from accounts.tokens import revoke_token

REVOKED = (
    "Your API token and your private feed's address, made before, no longer "
    "work: make new ones on your settings page if you need them."
)


def end_keys(
    sender: Any,
    request: HttpRequest | None = None,
    user: User | None = None,
    **kwargs: Any,
) -> None:
    """allauth's password_changed and password_reset."""
    if user is None:
        return
    token = revoke_token(user=user)
    feed = revoke_feed(user)
    if (token or feed) and request is not None:
        messages.info(request, REVOKED)
