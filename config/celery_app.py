"""The Celery app; the Procfile starts its workers and beat."""

from __future__ import annotations

import os
import time

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

app = Celery("momentum")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


# Where a queue's last heartbeat is kept, in the shared cache.
HEARTBEAT_KEY = "heartbeat:{queue}"


@app.task(name="heartbeat", ignore_result=True)
def heartbeat(queue: str) -> None:
    """A worker of this queue is alive and taking tasks (beat sends one to
    each queue: config/settings/tasks.py); /healthz reads when one last was."""
    from django.core.cache import cache

    cache.set(HEARTBEAT_KEY.format(queue=queue), time.time(), timeout=None)
