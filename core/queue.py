"""Sending Celery tasks from requests and domain code, after the commit, without
failing the request when the broker is down.

Every task sent this way stands for work the database already records as due (a
source's next run, a pending digest, a topic's re-tag request); a periodic
sweep sends it again from there. So a broker that refuses a task defers the
work to that sweep: the request goes on, and the deferral is logged. Account
mail has no sweep (swept=False): its sender tells the reader to try again.

Without a broker (the embedded default: CELERY_TASK_ALWAYS_EAGER) a task runs
in the process that sends it, at once; one sent with a countdown (a training
after a burst of decisions) runs on a timer thread of that process when the
countdown is over, as a worker would run it then, not in the request that
sent it. So does one sent `apart` (the judge's calls to a language model), at
once: a curator's click never waits on it.

What is sent on a schedule to a queue whose worker may never have started (the
judge's, AskPDF's fetch) is sent only while no message `waiting` there: Redis
keeps each message until a worker takes it, one past its `expires` too.
"""

from __future__ import annotations

import contextvars
import logging
import threading
from typing import Any

from celery import Task
from celery import current_app
from django.conf import settings
from django.db import connections
from django.db import transaction
from kombu.exceptions import ChannelError
from kombu.exceptions import OperationalError

logger = logging.getLogger(__name__)


def send_after_commit(task: Task[Any, Any], *args: Any, **options: Any) -> None:
    """Send `task(*args)` once the current transaction commits (at once outside
    one); if the broker cannot take it, log that its sweep will send it."""
    transaction.on_commit(lambda: send(task, *args, **options))


def send(
    task: Task[Any, Any],
    *args: Any,
    swept: bool = True,
    apart: bool = False,
    **options: Any,
) -> bool:
    """Send now; False (logged) if the broker could not take it. `swept`: the
    work is recorded and its sweep sends it later (account mail's is not).
    `apart`: never run in the sender's request or task, even without a broker."""
    if settings.CELERY_TASK_ALWAYS_EAGER and (apart or options.get("countdown")):
        _run_later(options.get("countdown", 0), task, args)
        return True
    try:
        task.apply_async(args, **options)
    except OperationalError as exc:
        # Ids are shown, not a payload (an account mail's text and address).
        shown = ", ".join(
            repr(a) if isinstance(a, int) else type(a).__name__ for a in args
        )
        logger.warning(
            "broker unavailable, %s(%s) %s: %s",
            task.name,
            shown,
            "deferred to its sweep" if swept else "not sent",
            exc,
        )
        return False
    return True


def waiting(queue: str) -> int:
    """How many messages in `queue` no worker has taken yet (none without a
    broker, or with one that does not answer: a send then fails as it would,
    logged, and its sweep sends it again)."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return 0
    try:
        with current_app.connection_for_read() as connection:
            # Kombu's types name only the abstract channel, which declares nothing.
            channel: Any = connection.default_channel
            declared = channel.queue_declare(queue, passive=True)
    except ChannelError:  # never declared: nothing was ever sent to it
        return 0
    except OperationalError as exc:
        logger.warning("broker unavailable: %s queue not counted (%s)", queue, exc)
        return 0
    return int(declared.message_count)


def _run_later(seconds: float, task: Task[Any, Any], args: tuple[Any, ...]) -> None:
    """Run the task in this process once `seconds` are over (a daemon thread:
    lost if the process stops first, as a broker-less setup loses any task)."""

    def run() -> None:
        try:
            task.apply(args, throw=True)
        except Exception:
            logger.exception("in-process task %s%r failed", task.name, args)
        finally:
            connections.close_all()  # this thread's own

    # In the request's context: the task's log lines carry its request's id.
    timer = threading.Timer(seconds, contextvars.copy_context().run, args=(run,))
    timer.daemon = True
    timer.start()
