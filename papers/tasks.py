"""Celery tasks for ingestion: thin interfaces over papers.ingest.harvest."""

from __future__ import annotations

import logging
import socket
from datetime import date

from celery import shared_task
from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from core.queue import send
from core.tasks import durable
from papers.ingest.harvest import harvest_source
from papers.ingest.harvest import leave_to_the_next_tick
from papers.ingest.harvest import take_due_sources
from papers.models import FeedSource
from papers.recent_index import refresh_recent_index
from papers.search import WINDOWS_KEY

logger = logging.getLogger(__name__)


@shared_task(ignore_result=True)
def enqueue_due_sources() -> int:
    """Beat: enqueue every enabled source whose next run is due, and every source
    a dead worker abandoned (to resume from its checkpoint); safe to repeat.
    Those the broker does not take stay due, for the next tick."""
    source_ids = take_due_sources(timezone.now())
    deferred = [pk for pk in source_ids if not send(ingest_source, pk)]
    leave_to_the_next_tick(deferred)
    return len(source_ids) - len(deferred)


@shared_task(**durable(settings.MOMENTUM_INGEST_TIME_LIMIT))
def ingest_source(
    source_id: int, since: str | None = None, until: str | None = None
) -> None:
    """Harvest one source, tagging what changed; idempotent, one worker at a time."""
    source = FeedSource.objects.filter(pk=source_id).first()
    if source is None:
        logger.warning("feed source %s no longer exists", source_id)
        return
    harvest_source(
        source,
        owner=f"{socket.gethostname()}:{ingest_source.request.id}",
        since=date.fromisoformat(since) if since else None,
        until=date.fromisoformat(until) if until else None,
    )


@shared_task(ignore_result=True)
def refresh_recent_search_index() -> str:
    """Beat, daily: the full-text index of the newest papers, rebuilt once
    those past its cutoff have doubled (papers.recent_index)."""
    done = refresh_recent_index()
    # The searches' cached windows say which of them this index holds: read
    # them again (here, as papers.search imports papers.recent_index).
    cache.delete(WINDOWS_KEY)
    return done
