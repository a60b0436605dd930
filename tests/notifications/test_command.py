"""manage.py digests run / preview."""

from __future__ import annotations

from datetime import UTC
from datetime import date
from datetime import datetime
from io import StringIO

import pytest
from django.core import mail
from django.core.management import CommandError
from django.core.management import call_command

from accounts.models import User
from notifications.models import Digest
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


def test_preview_prints_the_next_digest_as_text(subscriber):
    out = digests("preview", "ALICE@example.com", "--at", "2026-07-13T09:00Z")

    assert "Subject: 1 new paper in Agents" in out
    assert "* Agents that plan" in out
    assert not Digest.objects.exists()


def test_preview_with_nothing_new_says_so(subscriber):
    out = digests("preview", "alice@example.com", "--at", "2026-09-01T09:00Z")

    assert "Nothing new for alice@example.com" in out


def test_bad_input_is_a_clear_error(subscriber):
    with pytest.raises(CommandError, match="not an ISO 8601"):
        digests("run", "--at", "next monday")
    with pytest.raises(CommandError, match="No user"):
        digests("preview", "nobody@example.com")
