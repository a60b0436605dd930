"""A queue whose worker never started (the judge's, AskPDF's fetch) holds at most
one message of each scheduled job, in the real broker: Redis keeps a message
until a worker takes it, an expired one too, and the ticks go on."""

from __future__ import annotations

import pytest
from celery.utils.imports import symbol_by_name
from django.conf import settings

from config.celery_app import app
from core.queue import waiting
from tests.integration.celery_workers import waiting_in
from tests.topics.test_judging import pending  # noqa: F401 (fixture)
from tests.topics.test_three_way import papers  # noqa: F401 (fixture)
from tests.topics.test_three_way import topic  # noqa: F401 (fixture)
from topics.tasks import judge_topics

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("broker"),
]


def test_judge_sweeps_send_nothing_while_the_last_ones_wait(
    topic,  # noqa: F811
    pending,  # noqa: F811
    settings,
):
    settings.MOMENTUM_JUDGE_API_BASE = "http://127.0.0.1:9/v1"
    settings.MOMENTUM_JUDGE_MODEL = "m"

    for _ in range(3):
        judge_topics()

    assert waiting_in("judge") == 1


@pytest.mark.parametrize("queue", ["judge", "fetch"])
def test_beat_sends_no_heartbeat_while_the_last_one_waits(tmp_path, queue):
    scheduler = symbol_by_name(app.conf.beat_scheduler)(
        app, schedule_filename=str(tmp_path / "beat"), lazy=True
    )
    entry = scheduler.Entry(
        name=f"heartbeat-{queue}",
        task="heartbeat",
        args=[queue],
        **settings.HEARTBEAT,
        app=app,
    )
    entry.options = {**settings.HEARTBEAT["options"], "queue": queue}

    for _ in range(3):
        scheduler.apply_entry(entry, producer=scheduler.producer)

    assert waiting_in(queue) == 1


def test_beat_sends_no_digest_sweep_while_the_last_one_waits(tmp_path):
    """An email worker down a day would otherwise find 1,440 sweeps waiting."""
    scheduler = symbol_by_name(app.conf.beat_scheduler)(
        app, schedule_filename=str(tmp_path / "beat"), lazy=True
    )
    sweep = settings.CELERY_BEAT_SCHEDULE["send-waiting-digests"]
    entry = scheduler.Entry(name="send-waiting-digests", app=app, **sweep)

    for _ in range(3):
        scheduler.apply_entry(entry, producer=scheduler.producer)

    assert waiting_in("email") == 1


def test_a_broker_that_does_not_answer_counts_nothing_waiting(monkeypatch, caplog):
    """The judge sweep or a training then sends as it would have, and the send
    fails, logged, for the sweep to send again (core.queue.send)."""
    # Celery reads the broker's address from the environment first.
    monkeypatch.setenv("CELERY_BROKER_URL", "redis://127.0.0.1:9/0")

    assert waiting("judge") == 0
    assert "broker unavailable: judge queue not counted" in caplog.text
