"""The Celery app; the Procfile starts its workers and beat."""

from __future__ import annotations

import logging
import os
import time
import uuid
from logging.config import dictConfig
from typing import Any

from celery import Celery
from celery import Task
from celery.beat import PersistentScheduler
from celery.beat import ScheduleEntry
from celery.signals import before_task_publish
from celery.signals import setup_logging
from celery.signals import task_postrun
from celery.signals import task_prerun
from django_guid import clear_guid
from django_guid import get_guid
from django_guid import set_guid

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

app = Celery("momentum")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
logger = logging.getLogger(__name__)


# Where a queue's last heartbeat is kept, in the shared cache.
HEARTBEAT_KEY = "heartbeat:{queue}"


@app.task(name="heartbeat", ignore_result=True)
def heartbeat(queue: str) -> None:
    """A worker of this queue is alive and taking tasks (beat sends one to
    each queue: config/settings/tasks.py); /healthz reads when one last was."""
    from django.core.cache import cache

    cache.set(HEARTBEAT_KEY.format(queue=queue), time.time(), timeout=None)


class Scheduler(PersistentScheduler):
    """Beat (CELERY_BEAT_SCHEDULER): a heartbeat or a frequent sweep
    (BEAT_SKIPPED_WHILE_QUEUED) is not sent to a queue that still holds a
    message, as one whose worker is down or never started does: they would pile
    up there (Redis keeps an expired one too). A heartbeat left unanswered
    already tells /healthz; the sweep's message waiting there does its work."""

    def apply_async(self, entry: ScheduleEntry, *args: Any, **kwargs: Any) -> Any:
        from django.conf import settings

        from core.queue import waiting

        if entry.task in settings.BEAT_SKIPPED_WHILE_QUEUED:
            route = self.app.amqp.router.route(
                entry.options or {}, entry.task, entry.args or (), entry.kwargs or {}
            )
            queue = route["queue"].name
            if waiting(queue):
                logger.info("%s: %s still holds a message; not sent", entry.name, queue)
                return None
        return super().apply_async(entry, *args, **kwargs)


# REQUEST IDS (settings): a task logs under the id of the request or task that
# queued it, or an id of its own (beat's). A task run in process (no broker)
# is inside its request already, and keeps its id.
REQUEST_ID_HEADER = "request_id"


@setup_logging.connect
def log_as_the_site(loglevel: int | str | None = None, **kwargs: Any) -> None:
    """Workers and beat log through LOGGING, as the web does: each line with its
    request's id, credentials hidden, to stderr (--logfile is not read), at
    their --loglevel."""
    from django.conf import settings

    dictConfig(settings.LOGGING)
    if loglevel:
        logging.getLogger().setLevel(loglevel)


@before_task_publish.connect
def send_request_id(headers: dict[str, Any], **kwargs: Any) -> None:
    if request_id := get_guid():
        headers[REQUEST_ID_HEADER] = request_id


@task_prerun.connect
def take_request_id(task: Task, **kwargs: Any) -> None:
    if not task.request.is_eager:
        set_guid(task.request.get(REQUEST_ID_HEADER) or uuid.uuid4().hex)


@task_postrun.connect
def drop_request_id(task: Task, **kwargs: Any) -> None:
    if not task.request.is_eager:
        clear_guid()
