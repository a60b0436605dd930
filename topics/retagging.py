"""Re-tagging one topic in the background (topics.tasks.retag_topic): progress,
completion, what it changed, and the requests lost on the way to a worker."""

from __future__ import annotations

import logging
from contextlib import ExitStack
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


def run_retag(*topic_ids: int) -> TagResult | None:
    """Re-tag every paper for these topics (the task's one, or the command's
    many, in one pass over the papers), recording progress on them, then mark
    them done, move the pages their papers (before and after) show on and
    refresh momentum; None when they are gone. Idempotent. One re-tag of a
    topic at a time: a second (its rule edited again meanwhile) waits for the
    first, then reads the rule, so the last rule decides, not the slower one.
    Locks are taken in id order, so two callers never wait on each other."""
    ids = sorted(set(topic_ids))
    with ExitStack() as locks:
        for topic_id in ids:
            locks.enter_context(held("retag", topic_id))
        return _retag(ids)


def _retag(topic_ids: list[int]) -> TagResult | None:
    topics = list(Topic.objects.filter(pk__in=topic_ids).prefetch_related("categories"))
    if not topics:
        logger.info("topics %s were deleted before their re-tag ran", topic_ids)
        return None
    members = _members(topic_ids)

    def progress(result: TagResult, total: int) -> None:
        Topic.objects.filter(pk__in=topic_ids).update(
            retag_done=result.papers,
            retag_total=total,
            retag_progress_at=timezone.now(),
        )

    result = retag_topics(topics, progress=progress)  # dates them done
    # Their papers, before and after, show why they are in them (or no longer).
    papers = members | _members(topic_ids)
    content_changed(topics=topics, papers=sorted(papers), lists=[TOPICS])
    refresh_momentum()
    logger.info("re-tagged %s: %s", ", ".join(map(str, topics)), result)
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


def _members(topic_ids: list[int]) -> set[int]:
    return set(
        PaperTopic.objects.filter(topic_id__in=topic_ids).values_list(
            "paper_id", flat=True
        )
    )
