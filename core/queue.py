"""Sending Celery tasks from requests and domain code, after the commit, without
failing the request when the broker is down.

Every task sent this way stands for work the database already records as due (a
source's next run, a pending digest, a topic's re-tag request); a periodic
sweep sends it again from there. So a broker that refuses a task defers the
work to that sweep: the request goes on, and the deferral is logged.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Task
from django.db import transaction
from kombu.exceptions import OperationalError

logger = logging.getLogger(__name__)


def send_after_commit(task: Task[Any, Any], *args: Any, **options: Any) -> None:
    """Send `task(*args)` once the current transaction commits (at once outside
    one); if the broker cannot take it, log that its sweep will send it."""
    transaction.on_commit(lambda: send(task, *args, **options))


def send(task: Task[Any, Any], *args: Any, **options: Any) -> bool:
    """Send now; False (logged) if the broker could not take it."""
    try:
        task.apply_async(args, **options)
    except OperationalError as exc:
        logger.warning(
            "broker unavailable, %s%r deferred to its sweep: %s", task.name, args, exc
        )
        return False
    return True
