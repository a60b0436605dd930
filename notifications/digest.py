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
from topics.models import Follow
from topics.models import PaperTopic
from topics.models import Topic


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
    sections = _under_merged_topics(digest.user_id, digest.sections)
    return shape_digests([Plan(digest.since, sections)], site_url)[0]


def _under_merged_topics(
    user_id: int, sections: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The sections as the digest's page shows them now: a topic merged into
    another since (its papers and followers moved there) under the topic the
    reader follows that holds its papers, joining that topic's own section if
    the digest has one. A deleted topic's, whose papers no followed topic
    holds, is left out."""
    planned = {section["topic"] for section in sections if section["topic"]}
    gone = planned - set(
        Topic.objects.filter(pk__in=planned).values_list("pk", flat=True)
    )
    if not gone:
        return sections
    papers = {
        entry[0]
        for section in sections
        if section["topic"] in gone
        for entry in section["papers"]
    }
    followed = Follow.objects.filter(user_id=user_id, topic__is_active=True)
    holding = dict(
        PaperTopic.objects.filter(
            paper_id__in=papers, topic_id__in=followed.values("topic_id")
        ).values_list("paper_id", "topic_id")
    )
    shown: list[dict[str, Any]] = []
    by_topic: dict[int, dict[str, Any]] = {}
    for section in sections:
        topic = section["topic"]
        if topic in gone:
            topic = next(
                (holding[e[0]] for e in section["papers"] if e[0] in holding), topic
            )
            # A paper that was also in the topic it moved to is in it now,
            # not "also in" it.
            papers_now = [
                [entry[0], [t for t in entry[1] if t != topic], *entry[2:]]
                for entry in section["papers"]
            ]
            section = {**section, "papers": papers_now}
        if topic in by_topic:
            into = by_topic[topic]
            into["papers"] = into["papers"] + section["papers"]
            into["more"] += section["more"]
            if "since" in section:
                into["since"] = min(
                    into.get("since", section["since"]), section["since"]
                )
            continue
        section = {**section, "topic": topic}
        if topic is not None:
            by_topic[topic] = section
        shown.append(section)
    return shown
