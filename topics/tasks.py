"""Celery tasks for topics: thin interfaces over topics.tagging, topics.momentum,
topics.relevance and topics.judging."""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import F
from django.db.models import Q
from django.utils import timezone

from core.queue import send_after_commit
from core.tasks import HARD_LIMIT_MARGIN
from core.tasks import durable
from papers.versions import TOPICS
from papers.versions import content_changed
from topics import relevance
from topics.ask.fulltext import download_pdf
from topics.curation import training_due_key
from topics.judging import Judge
from topics.judging import judge_pending
from topics.models import PaperTopic
from topics.models import Topic
from topics.momentum import refresh_momentum
from topics.queue import awaiting_counts
from topics.queue import model_summary
from topics.tagging import TagResult
from topics.tagging import retag_topics

logger = logging.getLogger(__name__)

PDF_TIME_LIMIT = 5 * 60  # retries with backoff included
RETAG_TIME_LIMIT = 60 * 60  # seconds (core.tasks.durable)
TRAIN_TIME_LIMIT = 30 * 60
# A batch of verdicts, each bounded by MOMENTUM_JUDGE_TIMEOUT.
JUDGE_TIME_LIMIT = 60 * 60
# A re-tag requested longer ago than a task may live, and not done, was lost (a
# broker down when it was asked for, a worker killed): it is sent again.
RETAG_LOST_AFTER = timedelta(seconds=RETAG_TIME_LIMIT + HARD_LIMIT_MARGIN + 5 * 60)


@shared_task(**durable(RETAG_TIME_LIMIT))
def retag_topic(topic_id: int) -> None:
    """Re-tag every paper for one topic, recording progress on it; idempotent."""
    topic = Topic.objects.filter(pk=topic_id).prefetch_related("categories").first()
    if topic is None:
        logger.info("topic %s was deleted before its re-tag ran", topic_id)
        return
    started = timezone.now()
    members = _members(topic_id)

    def progress(result: TagResult, total: int) -> None:
        Topic.objects.filter(pk=topic_id).update(
            retag_done=result.papers, retag_total=total
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
    # The rule's matches are the model's positives: a new rule, a new model.
    train_topic_model(topic_id)


def _members(topic_id: int) -> set[int]:
    return set(
        PaperTopic.objects.filter(topic_id=topic_id).values_list("paper_id", flat=True)
    )


@shared_task(**durable(TRAIN_TIME_LIMIT))
def train_topic_model(topic_id: int, force: bool = False) -> None:
    """Retrain one topic's relevance model and apply it; a no-op when nothing it
    learns from has changed (unless forced)."""
    # Decisions from now on are not in this training's data: they ask for another.
    cache.delete(training_due_key(topic_id))
    with transaction.atomic():
        # One training per topic at a time: a second waits, then finds no change.
        topic = (
            Topic.objects.select_for_update()
            .filter(pk=topic_id, is_active=True)
            .first()
        )
        if topic is None:
            logger.info("topic %s is gone or inactive; no model trained", topic_id)
            return
        model = relevance.train(topic, force=force)
        # The band is redrawn: the judge gets its new pending papers.
        if Judge.from_settings() and awaiting_counts([topic_id]):
            send_after_commit(judge_pending_papers, topic_id)
    logger.info("%s: %s", topic, model_summary(model))


@shared_task(ignore_result=True)
def train_topic_models() -> None:
    """Nightly: queue a training for every active topic."""
    for topic_id in Topic.objects.filter(is_active=True).values_list("pk", flat=True):
        train_topic_model.delay(topic_id)


@shared_task(**durable(JUDGE_TIME_LIMIT))
def judge_pending_papers(topic_id: int) -> None:
    """Ask the judge (topics.judging) about one topic's pending papers, a batch
    at a time; each paper is claimed, so a repeated task judges none twice."""
    topic = Topic.objects.filter(pk=topic_id, is_active=True).first()
    if topic is None:
        logger.info("topic %s is gone or inactive; nothing judged", topic_id)
        return
    decided = judge_pending(topic, limit=settings.MOMENTUM_JUDGE_BATCH)
    logger.info("judge decided %s pending paper(s) of %s", decided, topic)


@shared_task(ignore_result=True)
def judge_topics() -> None:
    """Beat: send the judge every active topic's pending papers, if a judge is
    configured."""
    if Judge.from_settings() is None:
        return
    topic_ids = Topic.objects.filter(is_active=True).values_list("pk", flat=True)
    for topic_id in awaiting_counts(topic_ids):
        judge_pending_papers.delay(topic_id)


@shared_task(ignore_result=True)
def resend_lost_retags() -> int:
    """Beat: send again each re-tag requested too long ago to be still running
    and not done; its request moves to now with a conditional UPDATE, so each is
    sent once however many beats fire."""
    now = timezone.now()
    lost = Topic.objects.filter(
        retag_requested_at__lt=now - RETAG_LOST_AFTER, is_active=True
    ).filter(Q(retagged_at__isnull=True) | Q(retagged_at__lt=F("retag_requested_at")))
    sent = 0
    for topic_id, requested in lost.values_list("pk", "retag_requested_at"):
        taken = Topic.objects.filter(pk=topic_id, retag_requested_at=requested).update(
            retag_requested_at=now
        )
        if taken:
            logger.warning("re-tag of topic %s was lost; sending it again", topic_id)
            retag_topic.delay(topic_id)
            sent += 1
    return sent


@shared_task(ignore_result=True, soft_time_limit=PDF_TIME_LIMIT)
def fetch_paper_pdf(arxiv_id: str) -> None:
    """AskPDF's full text: the paper's PDF, fetched politely into
    MOMENTUM_ASK_PDF_DIR (topics.ask.fulltext)."""
    download_pdf(arxiv_id)
