"""A user's digest: planned (notifications.plan) and shaped into what its
parts render (notifications.content), for previews, "view in browser" and
delivery (notifications.delivery)."""

from __future__ import annotations

from datetime import UTC
from datetime import date
from datetime import datetime
from typing import Any

from accounts.models import DigestPreferences
from accounts.models import User
from notifications.content import Content
from notifications.content import shape_digests
from notifications.models import Digest
from notifications.plan import Plan
from notifications.plan import PlanRequest
from notifications.plan import plan_digests
from notifications.schedule import Schedule


def request_for(
    user: User, period_start: date, due: datetime, **fields: Any
) -> PlanRequest:
    """The plan request for `user`'s digest of the period starting
    `period_start`, sent at `due`."""
    preferences = DigestPreferences.objects.for_user(user)
    return PlanRequest(
        user_id=user.pk,
        period_start=period_start,
        step=Schedule.of(preferences).step,
        max_papers=preferences.max_papers,
        until=due.astimezone(UTC).date(),
        due=due,
        **fields,
    )


def preview_content(
    user: User, *, at: datetime, site_url: str, fresh: bool = False
) -> Content:
    """The digest `user` would get if it were built at `at` (fresh: the digest of
    the latest week harvested, as a test digest holds); reads only."""
    day, due = Schedule.of(DigestPreferences.objects.for_user(user)).current_period(at)
    # A test digest is sent at once (request_test_digest): it holds what is
    # harvested by `at`, not only by the last send time, days before.
    sent = at if fresh else due
    plan = plan_digests([request_for(user, day, sent, fresh=fresh)])[user.pk]
    return shape_digests([plan], site_url)[0]


def stored_content(digest: Digest, site_url: str) -> Content | None:
    """What a planned digest held (for "view in browser"), or None if unplanned."""
    if digest.sections is None or digest.since is None:
        return None
    return shape_digests([Plan(digest.since, digest.sections)], site_url)[0]
