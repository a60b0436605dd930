"""Signed links in a digest, which work without logging in: unsubscribe
tokens, which name a user, and view keys, which open one sent digest ("View in
your browser").

A token carries the user's link generation (DigestPreferences.link_generation),
which moves on when digests are turned back on: a link from a digest sent before
then no longer unsubscribes. Until then a link never expires, so a digest read
months later still unsubscribes. The List-Unsubscribe header's token is marked
as the header's: a mail client's one-click request with it is kept whatever its
generation (notifications.views.unsubscribe), since a header stays in the
mailbox it was sent to, where the body's footer link goes with a forwarded mail.
A token also carries a mark of the address it was mailed to (not the address,
which whoever holds the link could read): once the account has moved to another
address, the old mailbox is no longer the reader's, and its links, the header's
one-click too, no longer unsubscribe.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core import signing
from django.utils.crypto import constant_time_compare
from django.utils.crypto import salted_hmac

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
    header: bool = False  # made for the List-Unsubscribe header
    # address_mark() of the address mailed; None in a token made before marks.
    address: str | None = None

    def mailed_elsewhere(self, user: User) -> bool:
        """Whether it was mailed to an address the account no longer has."""
        return self.address is not None and self.address != address_mark(user.email)


def address_mark(email: str) -> str:
    return salted_hmac(SALT, email.lower()).hexdigest()[:12]


def unsubscribe_token(user: User, *, header: bool = False) -> str:
    generation = DigestPreferences.objects.for_user(user).link_generation
    claim = {"u": user.pk, "g": generation, "a": address_mark(user.email)}
    claim |= {"h": 1} if header else {}
    return signing.Signer(salt=SALT).sign_object(claim)


def read_token(token: str) -> TokenClaim:
    """Whom a token names, of which link generation, and whether it is the
    header's; raises BadToken."""
    try:
        claim = signing.Signer(salt=SALT).unsign_object(token)
        address = claim.get("a")
        return TokenClaim(
            int(claim["u"]),
            int(claim.get("g", 0)),
            claim.get("h") == 1,
            str(address) if address is not None else None,
        )
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
