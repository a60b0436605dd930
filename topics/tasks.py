"""Celery tasks for topics: each loads what it needs by id and calls a service
(topics.retagging, topics.relevance, topics.judging, topics.ask.fulltext)."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from core.queue import send_after_commit
from core.queue import waiting
from core.tasks import durable
from topics import recommend
from topics import relevance
from topics import saved_searches
from topics import similar
from topics.ask.fulltext import download_pdf
from topics.judging import Judge
from topics.judging import judge_pending
from topics.models import Topic
from topics.momentum import refresh_momentum
from topics.prefilter import refresh_rule_documents
from topics.queue import awaiting_counts
from topics.queue import model_summary
from topics.retagging import RETAG_TIME_LIMIT
from topics.retagging import run_retag
from topics.retagging import take_lost_retags

logger = logging.getLogger(__name__)

PDF_TIME_LIMIT = 5 * 60  # retries with backoff included
TRAIN_TIME_LIMIT = 30 * 60
# A batch of verdicts, each bounded by MOMENTUM_JUDGE_TIMEOUT.
JUDGE_TIME_LIMIT = 60 * 60
# A full build of similar papers: about two minutes at 25,000 papers.
SIMILAR_TIME_LIMIT = 60 * 60
# New papers against every saved search: seconds for a day's papers.
SAVED_SEARCH_TIME_LIMIT = 30 * 60
# Every paper's rule terms after a release that changed them: about 12 minutes
# a 100,000 papers; a sweep stopped by the limit keeps what it derived.
RULE_TERMS_TIME_LIMIT = 2 * 60 * 60
RULE_TERMS_SWEEP_KEY = "topics:rule-terms-sweep"


@shared_task(**durable(RETAG_TIME_LIMIT))
def retag_topic(topic_id: int) -> None:
    """Re-tag every paper for one topic (topics.retagging); idempotent."""
    if run_retag(topic_id) is not None:
        # The rule's matches are the model's positives: a new rule, a new model.
        train_topic_model(topic_id)


@shared_task(**durable(TRAIN_TIME_LIMIT))
def train_topic_model(topic_id: int, force: bool = False) -> None:
    """Retrain one topic's relevance model and apply it; a no-op when nothing it
    learns from has changed (unless forced)."""
    trained = relevance.retrain(topic_id, force=force)
    if trained is None:
        return
    topic, model = trained
    logger.info("%s: %s", topic, model_summary(model))
    # The decisions it learned from and the band it drew change the topic's
    # papers: its chart and related topics follow now, not at the next ingest.
    refresh_momentum([topic_id])
    # The band is redrawn: the judge gets its new pending papers (the next sweep
    # does, should its queue still hold work: see judge_topics), never in the
    # request that trained, as tasks in process would run it (docs/membership.md).
    if Judge.from_settings() and awaiting_counts([topic_id]) and not waiting("judge"):
        send_after_commit(judge_pending_papers, topic_id, apart=True)


@shared_task(**durable(SIMILAR_TIME_LIMIT))
def update_similar_papers() -> None:
    """After ingest, and on a schedule for a send that was lost: the similar
    papers of the papers changed since the last pass, and those papers scored
    for every reader's For you (topics.similar); idempotent, and a no-op when
    nothing changed."""
    result = similar.update_after_ingest()
    logger.info("similar papers %s", result)


@shared_task(**durable(TRAIN_TIME_LIMIT))
def train_reader_model(user_id: int) -> None:
    """A reader's For you model, once their signal changed (recommend);
    a no-op when it did not."""
    recommend.train(user_id)


@shared_task(**durable(TRAIN_TIME_LIMIT))
def train_reader_models() -> None:
    """Nightly: train the readers whose signal changed since their last
    training (a send lost with the broker down), one after the other."""
    for user_id in recommend.readers_with_signal():
        recommend.train(user_id)


@shared_task(**durable(SAVED_SEARCH_TIME_LIMIT))
def match_saved_searches() -> None:
    """After ingest, and on a schedule for a send that was lost: every saved
    search matched against the papers stored since it last was
    (topics.saved_searches); idempotent, a no-op when no paper is new."""
    logger.info("saved searches: %s new matches", saved_searches.match_new_papers())


@shared_task
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
    if decided:
        refresh_momentum([topic_id])


@shared_task(**durable(RULE_TERMS_TIME_LIMIT))
def derive_rule_terms() -> int:
    """Beat: derive the rule previews' index terms of the papers whose terms
    are stale (topics.prefilter), which a preview leaves to this sweep when
    they are many; a no-op most days. One sweep at a time: another finds the
    sweep's mark (a killed sweep's expires with its time limit) and stops."""
    if not cache.add(RULE_TERMS_SWEEP_KEY, True, RULE_TERMS_TIME_LIMIT):
        return 0
    try:
        derived = refresh_rule_documents()
    finally:
        cache.delete(RULE_TERMS_SWEEP_KEY)
    if derived:
        logger.info("derived the rule terms of %d papers", derived)
    return derived


@shared_task
def judge_topics() -> None:
    """Beat: send the judge every active topic's pending papers, if a judge is
    configured and its queue took what the last sweep sent (a judge worker that
    never started would find a sweep's worth of messages a tick)."""
    if Judge.from_settings() is None:
        return
    if left := waiting("judge"):
        logger.info("judge queue still holds %s topic(s); none sent", left)
        return
    topic_ids = Topic.objects.filter(is_active=True).values_list("pk", flat=True)
    for topic_id in awaiting_counts(topic_ids):
        judge_pending_papers.delay(topic_id)


@shared_task
def resend_lost_retags() -> int:
    """Beat: send again each re-tag lost on its way (topics.retagging)."""
    lost = take_lost_retags(timezone.now())
    for topic_id in lost:
        retag_topic.delay(topic_id)
    return len(lost)


@shared_task(**durable(PDF_TIME_LIMIT))
def fetch_paper_pdf(arxiv_id: str) -> None:
    """AskPDF's full text: the paper's PDF, fetched politely into
    MOMENTUM_ASK_PDF_DIR (topics.ask.fulltext)."""
    download_pdf(arxiv_id)
