"""manage.py digests run / preview."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC
from datetime import date
from datetime import datetime
from io import StringIO

import pytest
from django.core import mail
from django.core.management import CommandError
from django.core.management import call_command

from accounts.models import DigestPreferences
from accounts.models import User
from notifications.models import Digest
from tests.notifications.factories import FAILING_BACKEND
from tests.notifications.factories import FailingBackend
from tests.notifications.factories import add_papers

pytestmark = pytest.mark.django_db


@pytest.fixture
def subscriber(subscriber, agents):
    """The subscriber, who joined July 1st, and a paper for their first digest."""
    User.objects.filter(pk=subscriber.pk).update(
        date_joined=datetime(2026, 7, 1, tzinfo=UTC)
    )
    subscriber.refresh_from_db()
    add_papers(agents, date(2026, 7, 10), title="Agents that plan")
    return subscriber


def digests(*args: str) -> str:
    out = StringIO()
    call_command("digests", *args, stdout=out)
    return out.getvalue()


def test_run_at_an_instant_opens_and_sends_what_is_due_and_is_safe_to_repeat(
    subscriber,
):
    first = digests("run", "--at", "2026-07-13T09:00:00Z")
    again = digests("run", "--at", "2026-07-13T10:00:00+00:00")

    assert "1 digest(s) opened; 1 sent" in first
    assert "0 digest(s) opened; 0 sent" in again
    assert len(mail.outbox) == 1
    assert Digest.objects.get().status == "sent"


def test_run_catches_up_a_period_missed_while_workers_were_down(subscriber):
    # Due Monday 08:00; nothing ran until Thursday.
    out = digests("run", "--at", "2026-07-16T15:00")

    assert "1 sent" in out
    assert Digest.objects.get().period_start == date(2026, 7, 13)


def test_a_run_that_delivered_not_every_digest_fails_so_that_cron_sees_it(
    subscriber, settings
):
    """A mail server out of reach, or a password gone wrong, left every digest
    to retry, and the run exited 0 all the same: a cron job never told."""
    settings.EMAIL_BACKEND = FAILING_BACKEND
    FailingBackend.error = ConnectionRefusedError(111, "Connection refused")
    out = StringIO()

    with pytest.raises(CommandError, match="1 digest\\(s\\) not delivered"):
        call_command("digests", "run", "--at", "2026-07-13T09:00Z", stdout=out)

    assert "1 digest(s) opened; 0 sent, 0 skipped, 0 failed, 1 to retry" in (
        out.getvalue()
    )
    assert Digest.objects.get().status == "pending"


def test_preview_prints_the_next_digest_as_text(subscriber):
    out = digests("preview", "ALICE@example.com", "--at", "2026-07-13T09:00Z")

    assert "Subject: 1 new paper in Agents" in out
    assert "* Agents that plan" in out
    assert not Digest.objects.exists()


def test_preview_with_nothing_new_says_so(subscriber):
    out = digests("preview", "alice@example.com", "--at", "2026-09-01T09:00Z")

    assert "Nothing new for alice@example.com" in out


def test_preview_of_a_reader_no_digest_goes_to_says_so(subscriber):
    preferences = DigestPreferences.objects.for_user(subscriber)
    preferences.frequency = "off"
    preferences.save()
    off = digests("preview", "alice@example.com", "--at", "2026-07-13T09:00Z")
    User.objects.filter(pk=subscriber.pk).update(is_active=False)
    inactive = digests("preview", "alice@example.com", "--at", "2026-07-13T09:00Z")

    assert off.strip() == "alice@example.com has turned digests off: none goes to them."
    assert inactive.strip() == (
        "alice@example.com's account is inactive: no digest goes to it."
    )


def test_bad_input_is_a_clear_error(subscriber):
    with pytest.raises(CommandError, match="not an ISO 8601"):
        digests("run", "--at", "next monday")
    with pytest.raises(CommandError, match="No user"):
        digests("preview", "nobody@example.com")


def test_a_run_in_the_future_is_refused_and_opens_nothing(subscriber):
    """A digest opened for a later period would hold back every real one until
    then (the settings page promising one meanwhile)."""
    with pytest.raises(CommandError, match="--at is in the future"):
        digests("run", "--at", "2099-07-13T09:00Z")

    assert not Digest.objects.exists()


def test_a_run_at_a_past_instant_holds_only_papers_announced_by_then(
    subscriber, agents
):
    add_papers(agents, date(2026, 7, 14), title="Agents announced later")

    digests("run", "--at", "2026-07-13T09:00Z")
    first = mail.outbox[-1].body
    digests("run", "--at", "2026-07-20T09:00Z")
    second = mail.outbox[-1].body

    assert "Agents that plan" in first
    assert "Agents announced later" not in first
    # Not lost: it is new in the next one.
    assert "Agents announced later" in second


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("next monday", "'next monday' is not an ISO 8601 date-time"),
        ("0001-01-01", "'0001-01-01' is before arXiv began (1991)"),
    ],
)
def test_a_bad_instant_is_a_usage_error_without_a_traceback(value, why):
    done = subprocess.run(
        [sys.executable, "manage.py", "digests", "run", "--at", value],
        capture_output=True,
        text=True,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"},
        check=False,
    )

    assert done.returncode == 2
    assert f"error: argument --at: {why}" in done.stderr
    assert "Traceback" not in done.stderr


def test_preview_after_the_periods_digest_went_says_so_and_names_the_next(
    subscriber,
):
    """It printed that digest again, which `digests run` would never send."""
    digests("run", "--at", "2026-07-13T09:00Z")

    out = digests("preview", "alice@example.com", "--at", "2026-07-13T10:00Z")

    assert out.strip() == (
        "alice@example.com's digest of the period from Jul 13, 2026 was sent: "
        "`digests run` sends nothing more for it. The next is due 2026-07-20 08:00 "
        "UTC: `digests preview alice@example.com --at 2026-07-20T08:00Z` shows it."
    )


def test_preview_before_a_later_periods_digest_says_none_opens(subscriber):
    digests("run", "--at", "2026-07-20T09:00Z")

    out = digests("preview", "alice@example.com", "--at", "2026-07-14T10:00Z")

    assert out.strip() == (
        "alice@example.com has a digest of a later period (from Jul 20, 2026) "
        "already: `digests run` at this instant opens none."
    )
