"""The digest part of the settings page, drawn by this app so that accounts does
not import the apps built on it."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils import timezone

from accounts.models import DigestPreferences
from notifications.delivery import next_due
from notifications.models import Digest
from notifications.preferences import NOTHING_HELD
from notifications.preferences import digest_sources
from notifications.schedule import OFF
from notifications.schedule import Schedule
from papers.authors import followed_authors
from topics.models import Follow
from topics.models import SavedSearch

register = template.Library()


@register.inclusion_tag("notifications/settings_panel.html", takes_context=True)
def digest_settings(context: template.Context) -> dict[str, Any]:
    user = context["user"]
    preferences = DigestPreferences.objects.for_user(user)
    schedule = Schedule.of(preferences)
    now = timezone.now()
    next_at = None if schedule.frequency == OFF else next_due(user, schedule, now)
    follows = list(
        Follow.objects.filter(user=user)
        .select_related("topic")
        .order_by("created_at", "pk")
    )
    return {
        "csrf_token": context.get("csrf_token"),
        "follows": [f for f in follows if f.topic.is_active],
        # Deactivated by the curators: in no digest, their pages gone.
        "paused": [f.topic for f in follows if not f.topic.is_active],
        "authors": followed_authors(user.pk),
        # Said with the authors when no topic is in the digest.
        "searches": SavedSearch.objects.filter(user=user).exists(),
        "last": Digest.objects.filter(user=user, kind=Digest.Kind.SCHEDULED)
        .exclude(status__in=[Digest.Status.PENDING, Digest.Status.SENDING])
        .order_by("-due_at")
        .first(),
        # A test digest asked for here, on its way or sent: said, and linked.
        "last_test": Digest.objects.filter(user=user, kind=Digest.Kind.TEST)
        .order_by("-due_at")
        .first(),
        "next_at": next_at,
        # The current period's, which has none yet: the outbox opens it next.
        "next_now": next_at is not None and next_at <= now,
        "nothing_held": None if digest_sources(user) else NOTHING_HELD,
        "time_zone": schedule.zone,
    }
