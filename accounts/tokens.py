"""API tokens: one DRF token per user, created, rotated and revoked here.

The settings page and the REST API (`me/token/`) both call these functions.
`token_digest` is how a secret is kept when only its hash is stored (the
private feed's key, accounts.feed_tokens).
"""

from __future__ import annotations

import hashlib

from django.db import transaction
from rest_framework.authtoken.models import Token

from accounts.models import User


class TokenExistsError(Exception):
    """The user already has a token; rotate it instead of creating another."""


def token_digest(key: str) -> str:
    """The SHA-256 of a secret key, as stored and looked up instead of the key.
    A random key of 160 bits or more needs no salt or slow hash: nothing can be
    guessed from the digest, and a lookup by it compares no secret in Python."""
    return hashlib.sha256(key.encode()).hexdigest()


def get_token(*, user: User) -> Token | None:
    """The user's API token, or None."""
    return Token.objects.filter(user=user).first()


def lock_user(user: User) -> None:
    # Two requests for one user (double submit, two tabs) must not both pass the
    # existence check; the user row is the lock. SQLite ignores FOR UPDATE, but
    # its IMMEDIATE transactions already serialise writers.
    User.objects.select_for_update().filter(pk=user.pk).first()


@transaction.atomic
def create_token(*, user: User) -> Token:
    """Create the user's API token; raise TokenExistsError if they have one."""
    lock_user(user)
    if Token.objects.filter(user=user).exists():
        raise TokenExistsError
    return Token.objects.create(user=user)


@transaction.atomic
def rotate_token(*, user: User) -> Token:
    """Replace the user's token with a new key (creating one if none); the old
    key stops working at once."""
    lock_user(user)
    # The key is the primary key, so a new key is a new row.
    Token.objects.filter(user=user).delete()
    return Token.objects.create(user=user)


def revoke_token(*, user: User) -> bool:
    """Delete the user's token; False if there was none. Safe to repeat."""
    deleted, _ = Token.objects.filter(user=user).delete()
    return deleted > 0
