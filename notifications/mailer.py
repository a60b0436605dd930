"""Digest emails: the subject, text and HTML triplet rendered from one context,
and a mail connection kept open across a batch."""

from __future__ import annotations

import logging
import re
import smtplib
from dataclasses import dataclass
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.core.mail import get_connection
from django.core.mail.backends.base import BaseEmailBackend
from django.core.mail.backends.smtp import EmailBackend as SMTPBackend
from django.template.loader import render_to_string
from django.urls import reverse

from accounts.models import User
from core.mail import describe
from core.mail import is_permanent
from notifications.content import Content
from notifications.tokens import digest_view_key
from notifications.tokens import unsubscribe_token

logger = logging.getLogger(__name__)

BLANK_LINES = re.compile(r"\n{3,}")
# The HTML template's indentation: a quarter of a large digest's bytes, which
# count towards the 102 KB after which Gmail clips an email (DIGEST_MAX_PAPERS).
INDENTATION = re.compile(r"\n\s+")


class SendError(Exception):
    """The mail server did not take a message."""


class TransientSendError(SendError):
    """Worth trying again later: 4xx replies, timeouts, dropped connections.
    `server_down`: the server was out of reach or refused the connection or
    login, whatever the message (SERVER_REPLIES), not this message refused."""

    def __init__(self, reason: str, *, server_down: bool = False) -> None:
        super().__init__(reason)
        self.server_down = server_down


class PermanentSendError(SendError):
    """Will not work however often we try: 5xx replies such as "no such user"."""


@dataclass(frozen=True)
class Rendered:
    subject: str
    text: str
    html: str


def site_url() -> str:
    return settings.MOMENTUM_SITE_URL.rstrip("/")


def unsubscribe_url(user: User, *, header: bool = False) -> str:
    """The footer's link, or with `header` the List-Unsubscribe header's
    (notifications.tokens)."""
    token = unsubscribe_token(user, header=header)
    return site_url() + reverse("unsubscribe", args=[token])


TEST_NOTE = (
    "This is a test digest: what your digest holds from the latest week "
    "harvested, whether or not a digest sent it before."
)


def render_digest(
    *,
    user: User,
    content: Content,
    digest_id: int | None,
    test: bool = False,
    note: str = "",
    in_browser: bool = False,
) -> Rendered:
    """The digest's subject, text and HTML, from one context; `note` heads the
    body (a test digest has its own). `in_browser`: for the page that shows it,
    which needs no link to itself, and opens without a login to whoever has
    its link: its footer has no unsubscribe link, which would let them turn
    the reader's digests off (settings does it, signed in)."""
    base = site_url()
    preview = base + reverse("notifications:preview")
    if in_browser:
        preview = ""
    elif digest_id:
        preview += f"?digest={digest_id}&key={digest_view_key(digest_id)}"
    context: dict[str, Any] = {
        "user": user,
        "content": content,
        "test": test,
        "note": note or (TEST_NOTE if test else ""),
        "site_url": base,
        "preview_url": preview,
        "settings_url": base + reverse("accounts:settings"),
        "unsubscribe_url": "" if in_browser else unsubscribe_url(user),
    }
    context["subject"] = " ".join(
        render_to_string("emails/digest-subject.txt", context).split()
    )
    text = render_to_string("emails/digest-body.txt", context)
    return Rendered(
        subject=context["subject"],
        text=BLANK_LINES.sub("\n\n", text).strip() + "\n",
        html=INDENTATION.sub(
            "\n", render_to_string("emails/digest-body.html", context)
        ),
    )


def build_message(
    *, to: str, rendered: Rendered, unsubscribe: str, message_id: str
) -> EmailMultiAlternatives:
    """The email, with RFC 8058 one-click unsubscribe headers."""
    message = EmailMultiAlternatives(
        subject=rendered.subject,
        body=rendered.text,
        to=[to],
        headers={
            "Message-ID": message_id,
            "List-Unsubscribe": f"<{unsubscribe}>",
            "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
            # Out-of-office replies should not answer a digest.
            "Auto-Submitted": "auto-generated",
        },
    )
    message.attach_alternative(rendered.html, "text/html")
    return message


# What says the mail server is out of reach or wrongly set up, not that one
# message was refused: a socket's errors (refused, unreachable, timed out, an
# unknown host, TLS), a dropped connection, a refusal to connect, a failed login.
SERVER_REPLIES = (
    smtplib.SMTPServerDisconnected,
    smtplib.SMTPConnectError,
    smtplib.SMTPAuthenticationError,
)


def _is_server_failure(exc: Exception) -> bool:
    # smtplib's own errors are OSErrors too: only these are the server's.
    if isinstance(exc, smtplib.SMTPException):
        return isinstance(exc, SERVER_REPLIES)
    return isinstance(exc, OSError)


class Mailer:
    """Sends messages over one connection, opened on first use and kept open
    between sends (reopened once if the server dropped it while idle)."""

    def __init__(self, connection: BaseEmailBackend | None = None) -> None:
        self.connection = connection or get_connection(fail_silently=False)
        self.opened = False
        self.server_failed = False

    @property
    def reuses_connection(self) -> bool:
        # The file backend writes one file per connection: keep one per message.
        return isinstance(self.connection, SMTPBackend)

    def send(self, message: EmailMultiAlternatives) -> None:
        """Send one message; raises TransientSendError or PermanentSendError."""
        idle = self.opened
        try:
            self._send(message)
            if self.server_failed:
                logger.warning(
                    "mail server %s: taking messages again", _server(self.connection)
                )
                self.server_failed = False
        except smtplib.SMTPServerDisconnected as exc:
            self.close()
            if not idle:
                # A connection just opened: a server that never answered,
                # whose timeout a second try would only wait out again.
                raise self._classify(exc) from exc
            # An idle connection the server closed: nothing was sent on it.
            self._send_classified(message)
        except SoftTimeLimitExceeded:
            # The task's time limit, no failure of the server's (no retry's
            # reason, no giving up): the task stops, its claim expires and the
            # next tick resumes; the connection, maybe mid-message, is closed.
            self.close()
            raise
        except Exception as exc:
            self.close()
            raise self._classify(exc) from exc

    def _send_classified(self, message: EmailMultiAlternatives) -> None:
        try:
            self._send(message)
        except SoftTimeLimitExceeded:
            self.close()
            raise
        except Exception as exc:
            self.close()
            raise self._classify(exc) from exc

    def _classify(self, exc: Exception) -> SendError:
        """`classify(exc)`; an error that is no mail failure logged with its
        traceback; and, when the server could not be reached, was
        lost or refused the login, a warning naming it (which a digest's
        reason never does): once, until a message goes again."""
        if not isinstance(exc, OSError | smtplib.SMTPException):
            # No mail failure but a bug (a header refused): its traceback,
            # which the digest's reason and the retries' lines do not carry.
            logger.error("sending a message failed unexpectedly", exc_info=exc)
        elif _is_server_failure(exc) and not self.server_failed:
            self.server_failed = True
            logger.warning(
                "mail server %s: %s; messages wait until it takes them",
                _server(self.connection),
                describe(exc),
            )
        return classify(exc)

    def _send(self, message: EmailMultiAlternatives) -> None:
        if not self.reuses_connection:
            message.connection = get_connection(fail_silently=False)
            message.send()
            return
        if not self.opened:
            self.connection.open()
            self.opened = True
        message.connection = self.connection
        message.send()

    def close(self) -> None:
        if self.opened:
            try:
                self.connection.close()
            except Exception:  # a broken connection is closed either way
                logger.debug("closing the mail connection failed", exc_info=True)
            self.opened = False


def _server(connection: BaseEmailBackend) -> str:
    host, port = getattr(connection, "host", None), getattr(connection, "port", None)
    return f"{host}:{port}" if host else type(connection).__name__


def classify(exc: Exception) -> SendError:
    """Sort a sending error into worth-retrying or not, by the SMTP reply code."""
    if is_permanent(exc):
        return PermanentSendError(describe(exc))
    return TransientSendError(describe(exc), server_down=_is_server_failure(exc))
