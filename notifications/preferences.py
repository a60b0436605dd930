"""A reader's say over their digest: unsubscribing, muting a topic, asking for
a test digest."""

from __future__ import annotations

from datetime import date
from datetime import datetime
from datetime import timedelta
from math import ceil

from django.db import transaction
from django.template.defaultfilters import pluralize
from django.utils import timezone

from accounts.models import DigestPreferences
from accounts.models import User
from core.queue import send
from notifications.content import listed
from notifications.delivery import leave_to_the_sweep
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


def digest_sources(user: User) -> list[str]:
    """What the reader's digest is made of, named as it is when it is empty:
    none, and no digest can come (everything followed muted, say)."""
    held = {
        "the topics you follow": Follow.objects.filter(
            user=user, muted=False, topic__is_active=True
        ).exists(),
        "the authors you follow": AuthorFollow.objects.filter(user=user).exists(),
        "your saved searches": SavedSearch.objects.filter(user=user).exists(),
    }
    return [name for name, any_held in held.items() if any_held]


NOTHING_HELD = (
    "Your digest has nothing to hold: follow a topic (and leave it unmuted) or an "
    "author, or save a search. A topic the curators paused is in no digest."
)


def send_test_digest(*, user: User) -> tuple[Digest, bool]:
    """Open a test digest and send it; raises TestDigestRefused. The digest as
    it stands after sending (sent, or refused by the mail server, where the
    request sends it: the embedded default), and False when the broker is
    down: the digest waits in the outbox for beat's next sweep to send."""
    sources = digest_sources(user)
    if not sources:
        raise TestDigestRefused(NOTHING_HELD)
    if not user.emailaddress_set.filter(verified=True).exists():  # type: ignore[attr-defined]  # allauth
        raise TestDigestRefused("Verify your email address first.")
    # One request at a time per reader, from the check to the digest made: two
    # presses at once both found no test digest sent a moment ago.
    with transaction.atomic():
        User.objects.select_for_update().filter(pk=user.pk).exists()
        now = timezone.now()
        _refuse_another_so_soon(user, now)
        latest = preview_content(user, at=now, site_url="", fresh=True)
        if not latest.sections:
            raise TestDigestRefused(_why_empty(latest.since, sources))
        digest = request_test_digest(user=user)
    queued = send(send_digest, digest.pk)
    if not queued:
        leave_to_the_sweep(digest.pk)
    digest.refresh_from_db()
    return digest, queued


def _refuse_another_so_soon(user: User, now: datetime) -> None:
    """Raise TestDigestRefused when a test digest went (or waits to go) within
    TEST_DIGEST_INTERVAL."""
    # One that failed sent nothing: another may go at once.
    last = (
        Digest.objects.filter(
            user=user, kind=Digest.Kind.TEST, created_at__gte=now - TEST_DIGEST_INTERVAL
        )
        .exclude(status=Digest.Status.FAILED)
        .order_by("-created_at")
        .values_list("created_at", "status", "attempts")
        .first()
    )
    if last is not None:
        created_at, status, attempts = last
        wait = max(
            1, ceil((created_at + TEST_DIGEST_INTERVAL - now).total_seconds() / 60)
        )
        if status == Digest.Status.SENT:
            said = "A test digest was sent to you a moment ago"
        elif attempts:
            said = "Your last test digest waits to be tried again"
        else:
            said = "A test digest is on its way"
        raise TestDigestRefused(f"{said}; try again in {wait} minute{pluralize(wait)}.")


def _why_empty(since: date, sources: list[str]) -> str:
    if latest_announcement_day() is None:
        return "No papers have been harvested yet, so a digest would be empty."
    have = listed(sources)
    return (
        f"{have[0].upper()}{have[1:]} have no papers in the latest week harvested "
        f"(since {since:%b %-d, %Y}), so a test digest would be empty."
    )
