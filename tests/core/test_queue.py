"""core.queue without a broker (the embedded default): a task runs in the
process that sends it, at once, or on a timer thread once its countdown is
over, never in the request that sent it with one."""

from __future__ import annotations

import logging
import threading

import pytest
from celery import shared_task
from django_guid import clear_guid
from django_guid import get_guid
from django_guid import set_guid

from core.queue import send

ran: list[tuple[int, str]] = []
request_ids: list[str | None] = []
done = threading.Event()


@shared_task(name="tests.core.test_queue.record")
def record(value: int) -> None:
    if value < 0:
        done.set()
        raise ValueError("a failing task")
    ran.append((value, threading.current_thread().name))
    request_ids.append(get_guid())
    done.set()


@pytest.fixture(autouse=True)
def in_process(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    ran.clear()
    request_ids.clear()
    done.clear()


def test_a_task_without_countdown_runs_at_once_in_the_sender():
    assert send(record, 1)

    assert ran == [(1, threading.current_thread().name)]


def test_a_countdown_runs_later_on_a_thread_of_its_own():
    assert send(record, 2, countdown=0.2)

    assert ran == []  # the sender goes on at once
    assert done.wait(10)
    [(value, thread)] = ran
    assert value == 2
    assert thread != threading.current_thread().name


def test_a_failing_countdown_task_is_logged_not_raised(caplog):
    with caplog.at_level(logging.ERROR, logger="core.queue"):
        assert send(record, -1, countdown=0.05)
        assert done.wait(10)
        for _ in range(100):  # the log line follows the exception
            if caplog.records:
                break
            threading.Event().wait(0.05)

    assert "in-process task tests.core.test_queue.record(-1,) failed" in caplog.text


def test_a_countdown_task_logs_under_its_requests_id():
    """Its thread would start without the request's context: "[-]"."""
    set_guid("0123456789abcdef0123456789abcdef")
    try:
        assert send(record, 3, countdown=0.05)
        assert done.wait(10)
    finally:
        clear_guid()

    assert request_ids == ["0123456789abcdef0123456789abcdef"]
