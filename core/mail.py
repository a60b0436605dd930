"""What a mail server's refusal says (what it answered, whether trying again
can help), and the site's own mail domain."""

from __future__ import annotations

import smtplib
from email.utils import make_msgid

from django.conf import settings


def message_id(name: str | None = None) -> str:
    """A Message-ID in the domain the site sends from (DEFAULT_FROM_EMAIL), not
    the host's name, which Django's default takes."""
    domain = settings.DEFAULT_FROM_EMAIL.rsplit("@", 1)[-1].rstrip(">").strip()
    return make_msgid(name, domain=domain or "momentum.localhost")


def reply_code(exc: Exception) -> int | None:
    """The SMTP reply code of a refusal (the lowest of a refused recipients'),
    or None: no answer, a dropped connection."""
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        codes = [code for code, _ in exc.recipients.values()]
        return min(codes) if codes else None
    if isinstance(exc, smtplib.SMTPResponseException):
        return int(exc.smtp_code)
    return None


def describe(exc: Exception) -> str:
    """What the server answered, for a digest's record and a reader's page:
    "recipient refused: 550 no such user", "451 try later"."""
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        replies = [
            f"{code} {_text(message)}" for code, message in exc.recipients.values()
        ]
        return f"recipient refused: {'; '.join(replies)}"[:500]
    if isinstance(exc, smtplib.SMTPResponseException):
        return f"{exc.smtp_code} {_text(exc.smtp_error)}"[:500]
    return f"{type(exc).__name__}: {exc}"[:500]


def _text(reply: bytes | str) -> str:
    return reply.decode(errors="replace") if isinstance(reply, bytes) else reply


def is_permanent(exc: Exception) -> bool:
    """A refusal that says the message itself will not go (a 5xx reply); not
    a bad login (535), which is the operator's to fix, nor no answer at all."""
    code = reply_code(exc)
    return (
        code is not None
        and 500 <= code < 600
        and not isinstance(exc, smtplib.SMTPAuthenticationError)
    )
