from __future__ import annotations

from allauth.account.models import EmailAddress

from accounts.models import User


def verified(user: User) -> User:
    """The user, with the verified primary address that mandatory verification
    asks for."""
    EmailAddress.objects.get_or_create(
        user=user, email=user.email, defaults={"verified": True, "primary": True}
    )
    return user
