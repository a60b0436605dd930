"""Re-tagging one topic in the background (topics.tasks.retag_topic): progress,
completion, what it changed, and the requests lost on the way to a worker."""

from __future__ import annotations

import logging
from datetime import datetime
from datetime import timedelta

from django.db.models import F
from django.db.models import Q
from django.utils import timezone

from core.locks import held
from core.tasks import HARD_LIMIT_MARGIN
from papers.versions import TOPICS
from papers.versions import content_changed
from topics.models import PaperTopic
from topics.models import Topic
from topics.momentum import refresh_momentum
from topics.tagging import TagResult
from topics.tagging import retag_topics

logger = logging.getLogger(__name__)

RETAG_TIME_LIMIT = 60 * 60  # seconds (core.tasks.durable)
# A re-tag requested longer ago than a task may live, and not done, was lost (a
# broker down when it was asked for, a worker killed): it is sent again.
RETAG_LOST_AFTER = timedelta(seconds=RETAG_TIME_LIMIT + HARD_LIMIT_MARGIN + 5 * 60)
# A running re-tag counts its progress every few seconds (a chunk of papers):
# one that has not for this long stopped (its worker killed, its database
# connection cut) and is sent again, without waiting for RETAG_LOST_AFTER.
RETAG_STALLED_AFTER = timedelta(minutes=10)


def run_retag(topic_id: int) -> TagResult | None:
    """Re-tag every paper for one topic, recording progress on it, then mark it
    done, move the pages its papers (before and after) show on and refresh
    momentum; None when the topic is gone. Idempotent. One re-tag of a topic
    at a time: a second (its rule edited again meanwhile) waits for the first,
    then reads the rule, so the last rule decides, not the slower task."""
    with held("retag", topic_id):
        return _retag(topic_id)


def _retag(topic_id: int) -> TagResult | None:
    topic = Topic.objects.filter(pk=topic_id).prefetch_related("categories").first()
    if topic is None:
        logger.info("topic %s was deleted before its re-tag ran", topic_id)
        return None
    started = timezone.now()
    members = _members(topic_id)

    def progress(result: TagResult, total: int) -> None:
        Topic.objects.filter(pk=topic_id).update(
            retag_done=result.papers,
            retag_total=total,
            retag_progress_at=timezone.now(),
        )

    result = retag_topics([topic], progress=progress)
    # A newer request made while this ran gets its own task; don't mark it done.
    Topic.objects.filter(
        Q(retag_requested_at__isnull=True) | Q(retag_requested_at__lte=started),
        pk=topic_id,
    ).update(retagged_at=timezone.now())
    # Its papers, before and after, show why they are in it (or no longer).
    papers = members | _members(topic_id)
    content_changed(topics=[topic], papers=sorted(papers), lists=[TOPICS])
    refresh_momentum()
    logger.info("re-tagged %s: %s", topic, result)
    return result


def take_lost_retags(now: datetime) -> list[int]:
    """The topics whose re-tag is not done and was requested too long ago to
    be still running, or stopped counting its progress a while ago; each
    request moves to `now` with a conditional UPDATE, so a topic is taken once
    however many callers ask at the same time."""
    stalled = Q(
        retag_progress_at__lt=now - RETAG_STALLED_AFTER,
        retag_progress_at__gte=F("retag_requested_at"),
    )
    lost = Topic.objects.filter(
        Q(retag_requested_at__lt=now - RETAG_LOST_AFTER) | stalled, is_active=True
    ).filter(Q(retagged_at__isnull=True) | Q(retagged_at__lt=F("retag_requested_at")))
    taken = []
    for topic_id, requested in lost.values_list("pk", "retag_requested_at"):
        if Topic.objects.filter(pk=topic_id, retag_requested_at=requested).update(
            retag_requested_at=now
        ):
            logger.warning("re-tag of topic %s was lost; sending it again", topic_id)
            taken.append(topic_id)
    return taken


def _members(topic_id: int) -> set[int]:
    return set(
        PaperTopic.objects.filter(topic_id=topic_id).values_list("paper_id", flat=True)
    )
