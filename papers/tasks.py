"""Celery tasks for ingestion: thin interfaces over papers.ingest.harvest."""

from __future__ import annotations

import logging
import socket
from datetime import date

from celery import shared_task
from django.db.models import Q
from django.utils import timezone

from papers.ingest.harvest import run_source
from papers.ingest.schedule import next_run_after
from papers.models import FeedSource
from topics.momentum import refresh_momentum
from topics.tagging import IngestTagger

logger = logging.getLogger(__name__)


@shared_task(ignore_result=True)
def enqueue_due_sources() -> int:
    """Beat: enqueue every enabled source whose next run is due; safe to repeat.

    Each source's next_run_at is moved forward with a conditional UPDATE before
    its task is sent, so two beats (or a beat that fires twice) send it once.
    """
    now = timezone.now()
    due = FeedSource.objects.filter(
        Q(next_run_at__isnull=True) | Q(next_run_at__lte=now), enabled=True
    )
    sent = 0
    for source in due:
        moved = FeedSource.objects.filter(
            pk=source.pk, next_run_at=source.next_run_at
        ).update(next_run_at=next_run_after(source.kind, now))
        if moved == 1:
            ingest_source.delay(source.pk)
            sent += 1
    return sent


@shared_task(
    ignore_result=True,
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=3 * 60 * 60,
    time_limit=3 * 60 * 60 + 300,
)
def ingest_source(
    source_id: int, since: str | None = None, until: str | None = None
) -> None:
    """Harvest one source, tagging what changed; idempotent, one worker at a time."""
    source = FeedSource.objects.filter(pk=source_id).first()
    if source is None:
        logger.warning("feed source %s no longer exists", source_id)
        return
    run = run_source(
        source,
        owner=f"{socket.gethostname()}:{ingest_source.request.id}",
        tagger=IngestTagger(),
        since=date.fromisoformat(since) if since else None,
        until=date.fromisoformat(until) if until else None,
    )
    if run is not None and (run.new_count or run.updated_count):
        refresh_momentum()
