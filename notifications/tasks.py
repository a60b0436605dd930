"""Celery tasks for digests: thin interfaces over notifications.delivery.

No ETAs: the schedule lives in beat and in the outbox (Digest rows), so a lost
or redelivered message, or a worker killed with messages in its hands, costs
nothing. Beat opens the digests due every quarter hour and sweeps the outbox
every minute (MOMENTUM_DIGEST_SWEEP_SECONDS) for those waiting for a task: a
failed send's retry among them, once its Digest.retry_at has come. Only the
embedded default, with no worker nor beat, retries on a timer of its process.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime

from celery import shared_task
from celery.signals import worker_process_shutdown
from django.conf import settings
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
    ids = _hand_out()
    logger.info("digests: %s due, %s handed out", opened, len(ids))
    return len(ids)


@shared_task(ignore_result=True)
def send_waiting_digests() -> int:
    """Beat, every minute: send a task for each digest that needs one (a
    deferred one whose retry time has come, one whose task or sender was lost);
    safe to repeat. Returns tasks sent."""
    ids = _hand_out()
    if ids:
        logger.info("digests: %s handed out", len(ids))
    return len(ids)


def _hand_out() -> list[int]:
    ids = hand_out()
    for digest_id in ids:
        send_digest.delay(digest_id)
    return ids


@shared_task(**durable())
def send_digest(digest_id: int) -> str:
    """Send one digest unless another sender holds it, it is done, or its retry
    time has not come; idempotent. A temporary failure leaves it deferred in
    the outbox, for beat's sweep to hand out again at its retry time."""
    outcomes = send_digests([digest_id], mailer=worker_mailer())
    if not outcomes:
        logger.info(
            "digest %s: not claimed (done, held, waiting for its retry time, "
            "or deleted)",
            digest_id,
        )
        return "not claimed"
    outcome = outcomes[0]
    if outcome.retry_in is not None and settings.CELERY_TASK_ALWAYS_EAGER:
        # No beat to retry it (the embedded default): this process's timer
        # does, not the request that sent it (core.queue).
        send(send_digest, digest_id, countdown=outcome.retry_in)
    return outcome.status
