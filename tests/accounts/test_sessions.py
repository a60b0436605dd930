"""Sessions (accounts.sessions): what they hold, and how long."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.sessions.models import Session
from django.test import Client
from django.utils import timezone

from accounts.deletion import delete_account
from accounts.tasks import clear_expired_sessions

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"
ALICE = "alice@example.com"


def test_a_deleted_accounts_session_is_deleted_once_expired(verified_alice, bob):
    """A logged-in session holds the reader's address (allauth's record of how
    they logged in); one never logged out of stayed in the database for good,
    past its expiry, and after its account was deleted."""
    Client().post("/accounts/login/", {"login": ALICE, "password": PASSWORD})
    delete_account(user=verified_alice)
    (left,) = Session.objects.all()
    assert ALICE in str(left.get_decoded())
    Session.objects.filter(pk=left.pk).update(
        expire_date=timezone.now() - timedelta(seconds=1)
    )
    current = Client()
    current.force_login(bob)

    clear_expired_sessions()

    assert list(Session.objects.values_list("pk", flat=True)) == [
        current.session.session_key
    ]


def test_beat_clears_expired_sessions():
    entry = settings.CELERY_BEAT_SCHEDULE["clear-expired-sessions"]

    assert entry["task"] == clear_expired_sessions.name
