"""Whose an email address is, for allauth's forms (ACCOUNT_FORMS).

An account owns its own address (`User.email`) and any address it has
confirmed. An address it has only asked to change to (unconfirmed, allauth's
ACCOUNT_CHANGE_EMAIL) is a request, not a claim: anyone can type any address
there. So it does not stop the address's owner signing up, and no password
reset goes to it; allauth's own forms count every stored address, which let a
reader who typed someone else's address be reset into by that person, or keep
them from signing up at all.

Which addresses have an account the site never tells: a sign-up with one is
answered as any sign-up, a reset for one without as any reset, and a change to
another's address as any change (its owner is mailed a notice instead of the
link that would confirm it: accounts.adapter).
"""

from __future__ import annotations

from typing import Any

from allauth.account.adapter import get_adapter
from allauth.account.forms import ResetPasswordForm
from allauth.account.forms import SignupForm
from allauth.account.models import EmailAddress
from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.db import IntegrityError
from django.db import transaction
from django.db.models import Q
from django.db.models import QuerySet
from django.http import HttpResponse

from accounts.models import User


def owners(email: str) -> QuerySet[User]:
    """The accounts whose own or confirmed address this is (at most one, as
    addresses are unique among owners)."""
    confirmed = EmailAddress.objects.filter(email__iexact=email, verified=True)
    return User.objects.filter(
        Q(email__iexact=email) | Q(pk__in=confirmed.values("user_id"))
    )


class OwnersSignupForm(SignupForm):
    def validate_unique_email(self, value: str) -> str:
        if owners(value).exists():
            # allauth's answer: the same page as any sign-up, and a mail to the
            # address saying it has an account.
            return super().validate_unique_email(value)
        self.account_already_exists = False
        return value

    def try_save(self, request: Any) -> tuple[User | None, HttpResponse | None]:
        if self.account_already_exists:
            # The time a new account's password takes to hash, spent here too:
            # the answer's delay would tell which addresses have an account.
            make_password(self.cleaned_data.get("password1"))
        # Two sign-ups with one address at once (a double click) both find it
        # free; the second to store it is answered as a taken address is.
        try:
            with transaction.atomic():
                return super().try_save(request)
        except IntegrityError:
            if not owners(self.cleaned_data["email"]).exists():
                raise
        self.account_already_exists = True
        return super().try_save(request)

    def save(self, request: Any) -> User:
        user: User = super().save(request)
        withdraw_requests(user.email, owner=user)
        return user


def withdraw_requests(email: str, *, owner: User) -> None:
    """The address is `owner`'s now: other accounts' requests to change to it
    are withdrawn (confirming one would give two accounts one address, and its
    "Resend verification" kept mailing the owner about another account)."""
    EmailAddress.objects.filter(email__iexact=email, verified=False).exclude(
        user=owner
    ).delete()


def address_confirmed(sender: type, email_address: EmailAddress, **kwargs: Any) -> None:
    """allauth's email_confirmed: a change to this address, or a sign-up's."""
    withdraw_requests(email_address.email, owner=email_address.user)


class OwnersResetPasswordForm(ResetPasswordForm):
    def clean_email(self) -> str:
        email = super().clean_email()
        # allauth's list: every account that stores the address in any state.
        found: list[User] = self.users  # type: ignore[has-type]  # allauth sets it untyped
        owning = set(owners(email).values_list("pk", flat=True))
        # Nobody's: allauth mails the address that it has no account.
        self.users = [user for user in found if user.pk in owning]
        return email

    def save(self, request: Any, **kwargs: Any) -> str:
        email = self.cleaned_data["email"]
        # allauth looks among active accounts only: the owner of one the
        # operator made inactive was mailed that the address has none (and, when
        # signing up, that it has one), never whom to ask.
        if not self.users and owners(email).filter(is_active=False).exists():
            get_adapter().send_mail(
                "account/email/inactive_account",
                email,
                {"contact_email": settings.MOMENTUM_CONTACT_EMAIL},
            )
            return email
        return super().save(request, **kwargs)
