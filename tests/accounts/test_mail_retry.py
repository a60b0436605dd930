"""Which refusals of account mail a worker tries again (accounts.tasks)."""

from __future__ import annotations

import smtplib

import pytest

from accounts.tasks import is_transient


@pytest.mark.parametrize(
    ("refusal", "again"),
    [
        (ConnectionRefusedError(111, "Connection refused"), True),
        (TimeoutError("timed out"), True),
        (smtplib.SMTPServerDisconnected("gone"), True),
        (smtplib.SMTPResponseException(421, b"try later"), True),
        (smtplib.SMTPRecipientsRefused({"a@example.org": (450, b"busy")}), True),
        (smtplib.SMTPRecipientsRefused({"a@example.org": (550, b"no such")}), False),
        (smtplib.SMTPResponseException(554, b"rejected"), False),
    ],
)
def test_a_worker_tries_again_only_what_may_go_later(refusal, again):
    assert is_transient(refusal) is again
