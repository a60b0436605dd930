"""Signed unsubscribe tokens: they name a user and work without logging in."""

from __future__ import annotations

from django.core import signing

from accounts.models import User

SALT = "notifications.unsubscribe"


class BadToken(Exception):
    """The token was not made by this site (tampered, truncated, other key)."""


def unsubscribe_token(user: User) -> str:
    # Never expires: a digest read months later must still unsubscribe.
    return signing.Signer(salt=SALT).sign_object({"u": user.pk})


def read_token(token: str) -> int:
    """The user id a token names; raises BadToken."""
    try:
        return int(signing.Signer(salt=SALT).unsign_object(token)["u"])
    except (signing.BadSignature, ValueError, KeyError, TypeError) as exc:
        raise BadToken(str(exc)) from exc
