"""Who a signed-in request is, read from the cache (AUTHENTICATION_BACKENDS).

Django asks the backend a session was signed in with for its user on every
request: one query each. These backends keep the user in the cache instead, and
every save or delete of a user drops that entry (accounts.apps), so a changed
password (which signs the other sessions out), a deactivation or a new address
counts from the next request on. Without the cache they read the database, as
Django's own do.
"""

from __future__ import annotations

import logging

from allauth.account.auth_backends import AuthenticationBackend
from django.contrib.auth.backends import ModelBackend
from django.core.cache import cache
from django.db.models import Model

logger = logging.getLogger(__name__)

USER_TIMEOUT = 60 * 60


def user_key(user_id: object) -> str:
    return f"auth:user:{user_id}"


def forget_user(sender: object, instance: Model, **kwargs: object) -> None:
    """post_save and post_delete of a user: the next request reads it anew."""
    try:
        cache.delete(user_key(instance.pk))
    except Exception:
        # Its cached copy lives until it expires; log loudly.
        logger.exception("could not drop a cached user")


class CachedUserMixin:
    def get_user(self, user_id: object):
        try:
            user = cache.get(user_key(user_id))
        except Exception:
            user = None
        if user is None:
            user = super().get_user(user_id)  # type: ignore[misc]
            if user is None:
                return None
            try:
                cache.set(user_key(user_id), user, USER_TIMEOUT)
            except Exception:
                logger.warning("could not cache a user", exc_info=True)
        # As ModelBackend: an inactive user is nobody.
        return user if self.user_can_authenticate(user) else None  # type: ignore[attr-defined]


class CachedModelBackend(CachedUserMixin, ModelBackend):
    """Django's ModelBackend (admin's password log-in), with the cached user."""


class CachedAuthenticationBackend(CachedUserMixin, AuthenticationBackend):
    """allauth's backend (the site's email log-in), with the cached user."""
