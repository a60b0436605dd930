"""Which refusals of a mail server are worth trying again (core.mail): for
digests (notifications.mailer) and account mail (accounts.tasks) alike."""

from __future__ import annotations

import smtplib

import pytest

from core.mail import is_permanent


@pytest.mark.parametrize(
    ("refusal", "permanent"),
    [
        (ConnectionRefusedError(111, "Connection refused"), False),
        (TimeoutError("timed out"), False),
        (smtplib.SMTPServerDisconnected("gone"), False),
        (smtplib.SMTPResponseException(421, b"try later"), False),
        (smtplib.SMTPRecipientsRefused({"a@example.org": (450, b"busy")}), False),
        # The operator's to fix: tried again once it is.
        (smtplib.SMTPAuthenticationError(535, b"bad login"), False),
        (smtplib.SMTPRecipientsRefused({"a@example.org": (550, b"no such")}), True),
        (smtplib.SMTPResponseException(554, b"rejected"), True),
    ],
)
def test_only_a_5xx_about_the_message_itself_is_permanent(refusal, permanent):
    assert is_permanent(refusal) is permanent
