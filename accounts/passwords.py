"""What a new password or a deactivation ends besides what Django ends.

A new password signs the account's other sessions out (Django). It also ends
the keys that open the account without one, the API token and the private
feed's address: someone who had the account for a while may have made them.
That holds whoever set the password: the reader (a change or a reset), or an
operator in admin or with `changepassword` answering a reader whose account was
taken. An account made inactive loses its keys and its sessions too, so that
making it active again brings back none of what someone else may hold. The
reader makes new keys on the settings page.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.models import Session
from django.http import HttpRequest
from django.utils import timezone

from accounts.feed_tokens import revoke_feed
from accounts.models import User
from accounts.tokens import revoke_token

REVOKED = (
    "Your API token and your private feed's address, made before, no longer "
    "work: make new ones on your settings page if you need them."
)


def end_keys_on_save(sender: Any, instance: User, created: bool, **kwargs: Any) -> None:
    """post_save of a user. Django marks a new password in `_password` until
    the save is over (and not a stored hash upgraded at log-in)."""
    made_inactive = not created and instance.stored_active and not instance.is_active
    new_password = not created and instance._password is not None  # type: ignore[attr-defined]
    ended = False
    if new_password or made_inactive:
        token = revoke_token(user=instance)
        feed = revoke_feed(instance)
        ended = token or feed
    instance.keys_ended = ended  # by this save
    if made_inactive:
        end_sessions(instance)
    instance.stored_active = instance.is_active


def end_sessions(user: User) -> None:
    """Delete the user's sessions (from the cache too). Sessions are not stored
    by user: each live one is read, which an operator's deactivation can afford."""
    store = import_module(settings.SESSION_ENGINE).SessionStore
    live = Session.objects.filter(expire_date__gt=timezone.now())
    for key, data in live.values_list("session_key", "session_data").iterator():
        if store().decode(data).get(SESSION_KEY) == str(user.pk):
            store(session_key=key).delete()


def say_keys_ended(
    sender: Any,
    request: HttpRequest | None = None,
    user: User | None = None,
    **kwargs: Any,
) -> None:
    """allauth's password_changed and password_reset: the reader is told."""
    if request is not None and user is not None and user.keys_ended:
        messages.info(request, REVOKED)
