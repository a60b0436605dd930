"""The tasks whose work must not be lost share their options (core.tasks)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import zoneinfo
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from itertools import pairwise
from pathlib import Path

import pytest

from config.celery_app import app
from core.tasks import HARD_LIMIT_MARGIN
from notifications.tasks import send_digest
from papers.tasks import ingest_source
from topics.retagging import RETAG_LOST_AFTER
from topics.tasks import fetch_paper_pdf
from topics.tasks import retag_topic
from topics.tasks import train_topic_model

BASE_DIR = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "task", [ingest_source, retag_topic, train_topic_model, send_digest]
)
def test_a_killed_workers_task_runs_again(task):
    assert task.acks_late
    assert task.reject_on_worker_lost
    assert task.ignore_result


@pytest.mark.parametrize("task", [ingest_source, retag_topic, train_topic_model])
def test_a_long_task_is_told_to_stop_before_it_is_killed(task):
    assert task.time_limit - task.soft_time_limit == HARD_LIMIT_MARGIN


def test_a_retag_is_not_taken_for_lost_while_it_may_still_run():
    assert timedelta(seconds=retag_topic.time_limit) < RETAG_LOST_AFTER


def test_every_beat_entry_names_a_task_the_workers_know(settings):
    app.loader.import_default_modules()

    unknown = {
        name: entry["task"]
        for name, entry in settings.CELERY_BEAT_SCHEDULE.items()
        if entry["task"] not in app.tasks
    }

    assert "derive-rule-terms" in settings.CELERY_BEAT_SCHEDULE
    assert unknown == {}


def test_digests_are_opened_at_every_zones_whole_hour(settings):
    """A reader's hour is a whole local hour; in UTC it is :30 in India and
    :45 in Nepal. An hourly tick sent theirs that much late."""
    ticks = settings.CELERY_BEAT_SCHEDULE["send-due-digests"]["schedule"].minute
    now = datetime.now(UTC)
    offsets = {
        now.astimezone(zoneinfo.ZoneInfo(name)).utcoffset()
        for name in zoneinfo.available_timezones()
    }
    minutes = {int(offset.total_seconds()) // 60 % 60 for offset in offsets}

    assert minutes <= ticks


def test_askpdfs_fetch_has_a_queue_of_its_own():
    """On the ingest queue, whose one worker may harvest for hours
    (MOMENTUM_INGEST_TIME_LIMIT), a reader's PDF was "coming" all that while."""
    assert queue_of(fetch_paper_pdf.name) == "fetch"


def test_every_queue_a_task_goes_to_has_a_worker_in_the_procfile_and_make():
    """A queue no worker takes keeps its tasks for good. Its heartbeat is kept
    honest by tests/test_smoke_settings.py (one per routed queue)."""
    app.loader.import_default_modules()
    routed = {
        queue_of(name)
        for name in app.tasks
        # Celery's own, tests' own, and the heartbeat, which beat sends to
        # each queue by name.
        if not name.startswith(("celery.", "tests.")) and name != "heartbeat"
    }
    procfile = (BASE_DIR / "Procfile").read_text().splitlines()
    makefile = (BASE_DIR / "Makefile").read_text()
    make_worker = re.search(r"^worker:.*\n\t(.*)$", makefile, re.MULTILINE)

    assert {"ingest", "fetch", "tagging", "email", "judge"} <= routed
    assert routed - {q for line in procfile for q in worker_queues(line)} == set()
    assert make_worker is not None
    assert routed - worker_queues(make_worker[1]) == set()


@pytest.mark.parametrize("target", ["worker", "beat"])
def test_make_worker_and_beat_link_to_the_server_make_run_serves(tmp_path, target):
    """Beside `make run PORT=8123`, `make worker PORT=8123` mailed digests and
    sign-up confirmations linking to port 8000: only `run` derived the site's
    address from HOST and PORT."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    # A celery that says which address it was given, in an installed venv.
    celery = venv / "bin" / "celery"
    celery.write_text('#!/bin/sh\necho "$MOMENTUM_SITE_URL"\n')
    celery.chmod(0o755)
    (venv / ".installed").touch()
    environment = {k: v for k, v in os.environ.items() if k != "MOMENTUM_SITE_URL"}

    given = subprocess.run(
        ["make", "-s", target, f"VENV={venv}", "PORT=8123"],
        cwd=BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    )

    assert given.stdout.strip() == "http://127.0.0.1:8123"


def queue_of(task_name: str) -> str:
    return app.amqp.router.route({}, task_name, (), {})["queue"].name


def worker_queues(command: str) -> set[str]:
    """The queues a `celery worker` command line takes (-Q a,b)."""
    words = shlex.split(command)
    if "worker" not in words:
        return set()
    return {
        queue
        for option, value in pairwise(words)
        if option in ("-Q", "--queues")
        for queue in value.split(",")
    }
