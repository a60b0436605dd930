"""The tasks whose work must not be lost share their options (core.tasks)."""

from __future__ import annotations

import zoneinfo
from datetime import UTC
from datetime import datetime
from datetime import timedelta

import pytest

from config.celery_app import app
from core.tasks import HARD_LIMIT_MARGIN
from notifications.tasks import send_digest
from papers.tasks import ingest_source
from topics.retagging import RETAG_LOST_AFTER
from topics.tasks import retag_topic
from topics.tasks import train_topic_model


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
