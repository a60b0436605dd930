"""Beat's heartbeats reach each queue's workers, and /healthz says which queue
no worker has answered."""

from __future__ import annotations

import logging

import pytest
from django.conf import settings
from django.test import Client

from config.celery_app import app
from tests.integration.celery_workers import worker_thread
from tests.waiting import wait_for

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("broker"),
]


def send_as_beat(name: str) -> None:
    entry = settings.CELERY_BEAT_SCHEDULE[name]
    app.send_task(entry["task"], args=entry["args"], **entry["options"])


def test_a_queue_with_a_worker_answers_and_one_without_is_reported():
    with worker_thread("email"):
        for queue in settings.HEARTBEAT_QUEUES:
            send_as_beat(f"heartbeat-{queue}")
        wait_for(lambda: Client().get("/healthz").json()["workers"]["email"] == "ok")

    workers = Client().get("/healthz").json()["workers"]
    # Each heartbeat went to its own queue: only the email worker's came back.
    assert workers["email"] == "ok"
    assert workers["ingest"].startswith("unknown: no heartbeat yet")
    assert workers["tagging"].startswith("unknown: no heartbeat yet")


def test_a_worker_in_this_process_leaves_the_logging_as_it_found_it():
    # Celery's test worker configures logging at its own level (ERROR): left so,
    # every later test in the run would see no warning the code logs.
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    with worker_thread("email"):
        pass
    assert root.level == logging.INFO
    assert logging.getLogger("topics").isEnabledFor(logging.WARNING)
