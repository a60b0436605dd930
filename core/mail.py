"""What a mail server's refusal says: whether trying again can help."""

from __future__ import annotations

import smtplib


def reply_code(exc: Exception) -> int | None:
    """The SMTP reply code of a refusal (the lowest of a refused recipients'),
    or None: no answer, a dropped connection."""
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        codes = [code for code, _ in exc.recipients.values()]
        return min(codes) if codes else None
    if isinstance(exc, smtplib.SMTPResponseException):
        return int(exc.smtp_code)
    return None


def is_permanent(exc: Exception) -> bool:
    """A refusal that says the message itself will not go (a 5xx reply); not
    a bad login (535), which is the operator's to fix, nor no answer at all."""
    code = reply_code(exc)
    return (
        code is not None
        and 500 <= code < 600
        and not isinstance(exc, smtplib.SMTPAuthenticationError)
    )
