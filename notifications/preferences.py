"""A reader's say over their digest: unsubscribing, muting a topic, asking for
a test digest."""

from __future__ import annotations

from datetime import date
from datetime import timedelta

from django.utils import timezone

from accounts.models import DigestPreferences
from accounts.models import User
from core.queue import send
from notifications.delivery import request_test_digest
from notifications.digest import preview_content
from notifications.models import Digest
from notifications.tasks import send_digest
from papers.models import AuthorFollow
from topics.models import Follow
from topics.models import SavedSearch
from topics.momentum import latest_announcement_day

TEST_DIGEST_INTERVAL = timedelta(minutes=2)


class TestDigestRefused(Exception):
    """Why a test digest cannot be sent now; the message is for the reader."""


def unsubscribe(*, user: User) -> bool:
    """Turn the user's digest off at once; False if it was off already."""
    preferences = DigestPreferences.objects.stored_for(user)
    if preferences.frequency == DigestPreferences.Frequency.OFF:
        return False
    # An update, not save(): the one field changes even if the row is edited
    # in the settings form at the same moment.
    DigestPreferences.objects.filter(pk=preferences.pk).update(
        frequency=DigestPreferences.Frequency.OFF
    )
    return True


def send_test_digest(*, user: User) -> bool:
    """Open a test digest and send it; raises TestDigestRefused. False when the
    broker is down: the digest waits in the outbox for the next tick to send."""
    follows_authors = AuthorFollow.objects.filter(user=user).exists()
    if (
        not follows_authors
        and not SavedSearch.objects.filter(user=user).exists()
        and not Follow.objects.filter(user=user, muted=False).exists()
    ):
        raise TestDigestRefused("Follow a topic (and leave it unmuted) first.")
    if not user.emailaddress_set.filter(verified=True).exists():  # type: ignore[attr-defined]  # allauth
        raise TestDigestRefused("Verify your email address first.")
    recent = timezone.now() - TEST_DIGEST_INTERVAL
    if Digest.objects.filter(
        user=user, kind=Digest.Kind.TEST, created_at__gte=recent
    ).exists():
        raise TestDigestRefused("A test digest is on its way; try again in a minute.")
    latest = preview_content(user, at=timezone.now(), site_url="", fresh=True)
    if not latest.sections:
        raise TestDigestRefused(_why_empty(latest.since))
    digest = request_test_digest(user=user)
    return send(send_digest, digest.pk)


def _why_empty(since: date) -> str:
    if latest_announcement_day() is None:
        return "No papers have been harvested yet, so a digest would be empty."
    return (
        "The topics you follow have no papers in the latest week harvested "
        f"(since {since:%b %-d, %Y}), so a test digest would be empty."
    )
