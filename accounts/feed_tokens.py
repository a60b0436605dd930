"""The key in the address of a reader's private Atom feed: created, shown,
rotated, revoked, and read back into the reader it belongs to.

A feed reader cannot sign in, so the address is the credential. It has to be
copyable again (a second feed reader, a new phone) without being stored: the key
is an HMAC of a random nonce under SECRET_KEY, re-made whenever the settings page
shows it, and only its digest is kept for the lookup (FeedToken). A copy of the
database alone gives no working address; with SECRET_KEY as well an attacker
could sign in as anyone anyway. A SECRET_KEY change leaves the address working
(it is found by its digest) but no longer re-made: the page then asks to rotate.
"""

from __future__ import annotations

import re
import secrets

from django.db import transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac

from accounts.models import FeedToken
from accounts.models import User
from accounts.tokens import lock_user
from accounts.tokens import token_digest

SALT = "accounts.feed_tokens"
KEY_LENGTH = 40  # hex digits: 160 bits
KEY_PATTERN = re.compile(rf"[0-9a-f]{{{KEY_LENGTH}}}")


def get_feed_token(user: User) -> FeedToken | None:
    """The user's private feed, or None."""
    return FeedToken.objects.filter(user=user).first()


def key_of(token: FeedToken) -> str | None:
    """The key of this feed's address, re-made; None if it no longer can be
    (SECRET_KEY changed since it was made)."""
    key = _key(token.user_id, token.nonce)
    return key if token_digest(key) == token.digest else None


@transaction.atomic
def create_feed(user: User) -> str:
    """The user's feed key, made now if they had none; idempotent."""
    lock_user(user)
    token = get_feed_token(user)
    existing = key_of(token) if token is not None else None
    return existing or _renew(user)


@transaction.atomic
def rotate_feed(user: User) -> str:
    """A new key for the user's feed (made if they had none): the old address
    stops working at once."""
    lock_user(user)
    return _renew(user)


def revoke_feed(user: User) -> bool:
    """Delete the user's feed address; False if there was none. Safe to repeat."""
    deleted, _ = FeedToken.objects.filter(user=user).delete()
    return deleted > 0


def feed_reader(key: str) -> int | None:
    """The id of the active user whose feed this key opens, or None. The same
    None for a key never made, rotated away or revoked: the lookup is by digest,
    so no secret is compared and timing tells nothing of the key."""
    if not KEY_PATTERN.fullmatch(key):
        return None
    return (
        FeedToken.objects.filter(digest=token_digest(key), user__is_active=True)
        .values_list("user_id", flat=True)
        .first()
    )


def _renew(user: User) -> str:
    nonce = secrets.token_hex(16)
    key = _key(user.pk, nonce)
    FeedToken.objects.update_or_create(
        user=user,
        defaults={
            "nonce": nonce,
            "digest": token_digest(key),
            "created_at": timezone.now(),
        },
    )
    return key


def _key(user_id: int, nonce: str) -> str:
    mac = salted_hmac(SALT, f"{user_id}:{nonce}", algorithm="sha256")
    return mac.hexdigest()[:KEY_LENGTH]
