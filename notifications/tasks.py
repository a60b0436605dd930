"""Celery tasks for digests: thin interfaces over notifications.delivery.

No long ETAs: the schedule lives in beat (a tick every quarter hour) and in the
outbox (Digest rows), so a lost or redelivered message costs nothing. The one
countdown is a failed send's retry, at most MOMENTUM_DIGEST_RETRY_MAX_SECONDS
(below the broker's visibility timeout); the outbox keeps its pause (no send
claims the digest before Digest.retry_at, whatever message comes), and if the
retry is lost, the tick hands the digest out again.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime

from celery import shared_task
from celery.signals import worker_process_shutdown
from django.utils import timezone

from core.queue import send
from core.tasks import durable
from notifications.delivery import hand_out
from notifications.delivery import open_due_digests
from notifications.delivery import send_digests
from notifications.mailer import Mailer

logger = logging.getLogger(__name__)

# One mail connection per worker thread, reused from one task to the next.
_local = threading.local()


def worker_mailer() -> Mailer:
    if getattr(_local, "mailer", None) is None:
        _local.mailer = Mailer()
    return _local.mailer


@worker_process_shutdown.connect
def _close_mailer(**kwargs: object) -> None:
    mailer = getattr(_local, "mailer", None)
    if mailer is not None:
        mailer.close()


@shared_task(ignore_result=True)
def send_due_digests(at: str | None = None) -> int:
    """Beat, every quarter hour: open the digests now due (or due at `at`, ISO
    8601) and send a task for each digest that needs one; safe to repeat.
    Returns tasks sent."""
    moment = datetime.fromisoformat(at) if at else timezone.now()
    opened = open_due_digests(at=moment)
    ids = hand_out()
    for digest_id in ids:
        send_digest.delay(digest_id)
    logger.info("digests: %s due, %s handed out", opened, len(ids))
    return len(ids)


@shared_task(
    bind=True,
    max_retries=None,  # bounded by the outbox (delivery._gives_up)
    **durable(),
)
def send_digest(self, digest_id: int) -> str:
    """Send one digest unless another sender holds it, it is done, or its retry
    time has not come; idempotent."""
    outcomes = send_digests([digest_id], mailer=worker_mailer())
    if not outcomes:
        logger.info(
            "digest %s: not claimed (done, held, waiting for its retry time, "
            "or deleted)",
            digest_id,
        )
        return "not claimed"
    outcome = outcomes[0]
    if outcome.retry_in is not None:
        if self.request.is_eager:
            # No worker to retry it (the embedded default): this process's
            # timer does, not the request that sent it (core.queue).
            send(send_digest, digest_id, countdown=outcome.retry_in)
            return outcome.status
        raise self.retry(countdown=outcome.retry_in)
    return outcome.status
