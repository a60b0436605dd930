"""allauth glue: the visitor's address as the site sees it behind its proxies,
the email addresses the site can store, and the notices of account changes."""

from __future__ import annotations

import logging
import smtplib
from typing import Any
from urllib.parse import urlsplit
from urllib.parse import urlunsplit

from allauth.account.adapter import DefaultAccountAdapter
from allauth.account.utils import passthrough_next_redirect_url
from allauth.core import context as allauth_context
from allauth.core import ratelimit
from django.conf import settings
from django.contrib import messages
from django.contrib.sites.shortcuts import get_current_site
from django.core.exceptions import ValidationError
from django.core.mail import EmailMessage
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from rest_framework.throttling import BaseThrottle

from accounts.addresses import owners
from accounts.models import DigestPreferences
from accounts.sites import site_url
from accounts.tasks import as_data
from accounts.tasks import send_account_mail
from core.mail import describe
from core.mail import is_permanent
from core.mail import message_id
from core.queue import send

logger = logging.getLogger(__name__)


def client_ip(request: HttpRequest) -> str:
    """The visitor's address: REMOTE_ADDR, or behind MOMENTUM_TRUSTED_PROXIES
    proxies the address in X-Forwarded-For that the outermost one saw (counted
    from the right, so a visitor cannot choose it). DRF's reading, which the
    API's throttles use too (NUM_PROXIES)."""
    # get_ident reads only request.META, which a Django request has too.
    return BaseThrottle().get_ident(request)  # type: ignore[arg-type]


def on_site(url: str) -> str:
    """The address with this site's scheme and host (MOMENTUM_SITE_URL)."""
    parts = urlsplit(url)
    return site_url(urlunsplit(("", "", parts.path, parts.query, parts.fragment)))


def confirmation_cooling_down(request: HttpRequest, email: str) -> bool:
    """Whether a confirmation link went to `email` too recently for another
    (allauth's confirm_email limit: CONFIRMATION_COOLDOWN_MINUTES)."""
    return not ratelimit.consume(
        request, action="confirm_email", key=email.lower(), dry_run=True
    )


def tell_no_new_link(request: HttpRequest, email: str, again: str) -> None:
    """Say that no confirmation link went to `email`, and when doing `again`
    sends one."""
    minutes = settings.CONFIRMATION_COOLDOWN_MINUTES
    messages.info(
        request,
        f"No new link was sent: the last went to {email} less than {minutes} "
        f"minutes ago, and its link still works. For another, {again} once "
        f"{minutes} minutes have passed since it.",
        fail_silently=True,
    )


EMAIL_MAX_LENGTH = 254
# The tag of the message saying an account mail did not go.
MAIL_NOT_SENT = "mail-not-sent"


class AccountAdapter(DefaultAccountAdapter):
    # allauth's own trusts the left-most X-Forwarded-For, which anyone can set:
    # its rate limits on logins and resets could be dodged by sending one.
    def get_client_ip(self, request: HttpRequest) -> str:
        return client_ip(request)

    # Forms let an address be 320 characters long; what stores it holds 254 (the
    # longest a mail's path allows), and allauth cut a longer one short
    # silently, so that its confirmation went to an address nobody typed.
    def clean_email(self, email: str) -> str:
        if len(email) > EMAIL_MAX_LENGTH:
            raise ValidationError(
                f"An email address has at most {EMAIL_MAX_LENGTH} characters.",
                code="max_length",
            )
        return super().clean_email(email)

    # A reset asked on the way somewhere (the login page's "Forgot your
    # password?" from a Follow button) comes back there: the mailed link keeps
    # the form's `next` (only one allauth finds safe, on this site), as the
    # page it leads to and the sign-in after it do.
    def get_reset_password_from_key_url(self, key: str) -> str:
        url = super().get_reset_password_from_key_url(key)
        request = allauth_context.request
        if request is None:
            return url
        return passthrough_next_redirect_url(request, url, "next")

    # A mail server that refuses or does not answer (a relay restarted) made
    # a sign-up a 500 once its account was made, and its mail was never sent:
    # the request goes on, and a worker sends the mail when the server takes it.
    #
    # allauth builds its links from the request's Host, which the visitor
    # chooses among ALLOWED_HOSTS: a password reset asked for someone else
    # could have mailed them a link to a host of the asker's choosing. Every
    # link an account mail gives names the site (MOMENTUM_SITE_URL).
    def send_mail(self, template_prefix: str, email: str, context: dict) -> None:
        request = allauth_context.request
        links = {
            name: on_site(value)
            for name, value in context.items()
            if name.endswith("_url") and isinstance(value, str)
        }
        message = self.render_mail(
            template_prefix,
            email,
            {
                "request": request,
                "email": email,
                "current_site": get_current_site(request),
                **context,
                **links,
            },
        )
        try:
            message.send()
        except (OSError, smtplib.SMTPException) as exc:
            if is_permanent(exc):
                logger.error("account mail to %s refused: %s", email, exc)
                self._not_sent(
                    request,
                    f"The mail server refused the email to {email} ({describe(exc)}):"
                    " check the address.",
                )
            elif not settings.CELERY_TASK_ALWAYS_EAGER and send(
                send_account_mail, as_data(message), swept=False
            ):
                logger.warning(
                    "account mail to %s not sent yet (%s): queued", email, exc
                )
            else:  # no worker to try again, or no broker to reach one
                logger.error("account mail to %s not sent: %s", email, exc)
                self._not_sent(
                    request,
                    f"We could not send the email to {email} just now (the mail "
                    f"server: {describe(exc)}): try again in a few minutes.",
                )

    # Logging in with an unconfirmed address sends a new link (the page after
    # says so), but not within the cooldown after the last, which allauth
    # skipped without a word: the reader is told that none went, and when one
    # will.
    def should_send_confirmation_mail(
        self, request: HttpRequest, email_address: Any, signup: bool
    ) -> bool:
        if not signup and confirmation_cooling_down(request, email_address.email):
            tell_no_new_link(request, email_address.email, again="log in again")
        return super().should_send_confirmation_mail(request, email_address, signup)

    # A change to an address another account owns is answered as any change
    # (the page would otherwise tell a reader whose addresses have accounts);
    # its owner is mailed a notice instead of the link that would confirm it,
    # on the first ask as on every "Resend".
    def send_confirmation_mail(
        self, request: HttpRequest, emailconfirmation: Any, signup: bool
    ) -> None:
        address = emailconfirmation.email_address
        if not owners(address.email).exclude(pk=address.user_id).exists():
            super().send_confirmation_mail(request, emailconfirmation, signup)
            return
        self.send_mail(
            "account/email/address_taken",
            address.email,
            {"password_reset_url": site_url(reverse("account_reset_password"))},
        )

    # A mail that did not go is said, and allauth's "Confirmation email sent"
    # is not, nor the next page's "We have sent you an email" (its templates
    # read the message's tag: accounts.templatetags.entrance).
    def _not_sent(self, request: HttpRequest | None, text: str) -> None:
        if request is None:
            return
        request.account_mail_not_sent = True  # type: ignore[attr-defined]
        messages.error(request, text, extra_tags=MAIL_NOT_SENT, fail_silently=True)

    def add_message(
        self,
        request: HttpRequest,
        level: int,
        message_template: str | None = None,
        message_context: dict[str, Any] | None = None,
        extra_tags: str = "",
        message: str | None = None,
    ) -> None:
        sent = message_template == "account/messages/email_confirmation_sent.txt"
        if sent and getattr(request, "account_mail_not_sent", False):
            return
        super().add_message(
            request, level, message_template, message_context, extra_tags, message
        )

    # Account mails go out as digests do: a reply reaches the operator (the
    # notices name them), out-of-office replies stay away, and the Message-ID
    # is in the site's mail domain.
    def render_mail(
        self,
        template_prefix: str,
        email: str | list[str],
        context: dict[str, Any],
        headers: dict[str, str] | None = None,
    ) -> EmailMessage:
        headers = {
            "Auto-Submitted": "auto-generated",
            "Message-ID": message_id(),
            **(headers or {}),
        }
        message = super().render_mail(template_prefix, email, context, headers)
        message.reply_to = [settings.MOMENTUM_CONTACT_EMAIL]
        return message

    # A notice of a change (base_notification.txt) says what to do if it was
    # not the reader: reset the password, or write to the operator; and when,
    # in the reader's time zone.
    def send_notification_mail(
        self,
        template_prefix: str,
        user: Any,
        context: dict[str, Any] | None = None,
        email: str | None = None,
    ) -> None:
        context = {
            **(context or {}),
            "password_reset_url": site_url(reverse("account_reset_password")),
            "contact_email": settings.MOMENTUM_CONTACT_EMAIL,
        }
        zone = DigestPreferences.objects.for_user(user).zone
        with timezone.override(zone):
            super().send_notification_mail(template_prefix, user, context, email)
