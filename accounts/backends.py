"""Who a signed-in request is, read from the cache (AUTHENTICATION_BACKENDS).

Django asks the backend a session was signed in with for its user on every
request: one query each. These backends keep the user in the cache instead, and
every save or delete of a user drops that entry (accounts.apps), so a changed
password (which signs the other sessions out), a deactivation or a new address
counts from the next request on. Without the cache they read the database, as
Django's own do. A cached page reads the user's entry in its own round trip
(read_ahead); Django's get_user still checks it against the session.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from collections.abc import Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from allauth.account.auth_backends import AuthenticationBackend
from django.contrib.auth import SESSION_KEY
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Model
from django.http import HttpRequest

logger = logging.getLogger(__name__)

USER_TIMEOUT = 60 * 60
# Users' cache entries read with other keys in one round trip (read_ahead).
_read_ahead: ContextVar[Mapping[str, Any] | None] = ContextVar(
    "users_read_ahead", default=None
)


def user_key(user_id: object) -> str:
    return f"auth:user:{user_id}"


def forget_user(sender: object, instance: Model, **kwargs: object) -> None:
    """post_save and post_delete of a user: the next request reads it anew, now
    and again once the change commits (a request meanwhile, admin's change form
    being one transaction, read the row as it was and may have cached it)."""
    key = user_key(instance.pk)
    _drop(key)
    transaction.on_commit(lambda: _drop(key))


def _drop(key: str) -> None:
    try:
        cache.delete(key)
    except Exception:
        # Its cached copy lives until it expires; log loudly.
        logger.exception("could not drop a cached user")


def session_user_id(request: HttpRequest) -> Any:
    """The id of the user the request's session is signed in as (the session is
    read, the user not), or None; whether that user is still who the session
    says (active, same password) is for Django's get_user to tell."""
    if hasattr(request, "_cached_user"):  # already read
        return request.user.pk if request.user.is_authenticated else None
    try:
        return get_user_model()._meta.pk.to_python(request.session[SESSION_KEY])
    except (KeyError, ValidationError):
        return None


@contextmanager
def read_ahead(found: Mapping[str, Any]) -> Iterator[None]:
    """Within the block, a user whose key (user_key) is in `found` is taken from
    it (None: not cached) instead of read from the cache: a page that reads the
    cache anyway reads the user in the same round trip."""
    token = _read_ahead.set(found)
    try:
        yield
    finally:
        _read_ahead.reset(token)


class CachedUserMixin:
    def get_user(self, user_id: object):
        key = user_key(user_id)
        ahead = _read_ahead.get()
        try:
            user = ahead[key] if ahead is not None and key in ahead else cache.get(key)
        except Exception:
            user = None
        if user is None:
            user = super().get_user(user_id)  # type: ignore[misc]
            if user is None:
                return None
            try:
                cache.set(key, user, USER_TIMEOUT)
            except Exception:
                logger.warning("could not cache a user", exc_info=True)
        # As ModelBackend: an inactive user is nobody.
        return user if self.user_can_authenticate(user) else None  # type: ignore[attr-defined]


class CachedModelBackend(CachedUserMixin, ModelBackend):
    """Django's ModelBackend (admin's password log-in), with the cached user."""


class CachedAuthenticationBackend(CachedUserMixin, AuthenticationBackend):
    """allauth's backend (the site's email log-in), with the cached user."""
