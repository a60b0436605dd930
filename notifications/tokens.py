"""Signed links in a digest, which work without logging in: unsubscribe
tokens, which name a user, and view keys, which open one sent digest ("View in
your browser").

A token carries the user's link generation (DigestPreferences.link_generation),
which moves on when digests are turned back on: a link from a digest sent before
then no longer unsubscribes from its page (a mail client's one-click request
still does: notifications.views.unsubscribe). Until then a link never
expires, so a digest read months later still unsubscribes.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core import signing
from django.utils.crypto import constant_time_compare

from accounts.models import DigestPreferences
from accounts.models import User

SALT = "notifications.unsubscribe"
VIEW_SALT = "notifications.digest-view"


class BadToken(Exception):
    """The token was not made by this site (tampered, truncated, other key)."""


@dataclass(frozen=True)
class TokenClaim:
    user_id: int
    generation: int


def unsubscribe_token(user: User) -> str:
    generation = DigestPreferences.objects.for_user(user).link_generation
    return signing.Signer(salt=SALT).sign_object({"u": user.pk, "g": generation})


def read_token(token: str) -> TokenClaim:
    """Whom a token names, and of which link generation; raises BadToken."""
    try:
        claim = signing.Signer(salt=SALT).unsign_object(token)
        return TokenClaim(int(claim["u"]), int(claim.get("g", 0)))
    except (signing.BadSignature, ValueError, KeyError, TypeError) as exc:
        raise BadToken(str(exc)) from exc


def digest_view_key(digest_id: int) -> str:
    """The key in a digest's "View in your browser" link: whoever holds the mail
    can read it in a browser, as they can read the mail itself."""
    return signing.Signer(salt=VIEW_SALT).signature(str(digest_id))


def opens_digest(key: str, digest_id: int) -> bool:
    return constant_time_compare(key, digest_view_key(digest_id))


def masked(email: str) -> str:
    """An address shown on a page anyone with the link can open: "a•••@example.org"."""
    local, at, domain = email.partition("@")
    return f"{local[:1]}•••{at}{domain}" if at else "•••"
