"""A task logs, in a real worker process, under the id of the request that
queued it; one beat sends, under an id of its own (REQUEST IDS in settings)."""

from __future__ import annotations

import re

import pytest
from django_guid import clear_guid
from django_guid import set_guid

from config.celery_app import app
from tests.integration.celery_workers import worker_process
from tests.waiting import wait_for

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("broker"),
]

REQUEST_ID = "0123456789abcdef0123456789abcdef"


def test_a_task_logs_under_the_id_of_the_request_that_queued_it(tmp_path):
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        worker = worker_process("email", log=out)
    try:
        set_guid(REQUEST_ID)  # as the middleware does for a request
        app.send_task("heartbeat", args=["email"], queue="email")
        clear_guid()  # as beat, outside any request
        app.send_task("heartbeat", args=["email"], queue="email")
        wait_for(lambda: log.read_text().count("succeeded") == 2, timeout=60)
    finally:
        worker.terminate()
        worker.wait(timeout=30)

    done = [line for line in log.read_text().splitlines() if "succeeded" in line]
    # Django's LOGGING format: time, level, [id], logger, message.
    assert f" INFO [{REQUEST_ID}] celery.app.trace Task heartbeat[" in done[0]
    own = re.search(
        r" INFO \[([0-9a-f]{32})\] celery.app.trace Task heartbeat", done[1]
    )
    assert own is not None
    assert own.group(1) != REQUEST_ID
