"""Real Celery workers for integration tests: in a thread, or as a process to kill."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import redis
from celery.contrib.testing.worker import start_worker
from celery.signals import task_postrun
from django.conf import settings
from django.db import connection
from django.db import connections

from config.celery_app import app

BASE_DIR = Path(__file__).resolve().parents[2]


def clean_broker() -> None:
    """Empty the test broker's Redis database: any but db 0, which is never a
    test's (test settings use 15; a parallel run may pick another)."""
    database = settings.CELERY_BROKER_URL.rsplit("/", 1)[-1]
    assert database.isdigit(), settings.CELERY_BROKER_URL
    assert int(database) != 0, settings.CELERY_BROKER_URL
    redis.Redis.from_url(settings.CELERY_BROKER_URL).flushdb()


@contextmanager
def worker_thread(*queues: str, concurrency: int = 1) -> Iterator[None]:
    """A real worker consuming the real broker, running in this process.

    Celery's test worker sets up logging as a worker does (our setup_logging
    handler: LOGGING, at its level, ERROR): the root logger's level and
    handlers are put back after it, or every later test would see no warning."""
    root = logging.getLogger()
    level, handlers = root.level, root.handlers[:]
    task_postrun.connect(close_thread_connections)
    try:
        with start_worker(
            app,
            pool="threads",
            concurrency=concurrency,
            queues=list(queues),
            perform_ping_check=False,
            shutdown_timeout=30,
        ):
            yield
    finally:
        task_postrun.disconnect(close_thread_connections)
        root.setLevel(level)
        root.handlers[:] = handlers


def close_thread_connections(**kwargs: object) -> None:
    """Close a worker thread's database connections after each task. Nothing
    else closes them, and open sessions keep the test database from being dropped
    at the end of the run. The main thread's (eager tasks inside a test's
    transaction) is left alone."""
    if threading.current_thread() is not threading.main_thread():
        connections.close_all()


def process_env(**env: str) -> dict[str, str]:
    """The environment of a process of ours (a worker, a command) on the test
    database and broker, configured like production."""
    database = connection.settings_dict
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.base",
        "DATABASE_URL": (
            f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}"
            f"/{database['NAME']}"
        ),
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        **env,
    }


def worker_process(
    *queues: str, log: IO[bytes] | None = None, **env: str
) -> subprocess.Popen[bytes]:
    """A real worker process on the test database, configured like production;
    what it logs written to `log`."""
    environment = process_env(**env)
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config.celery_app",
            "worker",
            "--pool",
            "solo",
            "--queues",
            ",".join(queues),
            "--loglevel",
            "INFO",
            "--without-heartbeat",
            "--without-mingle",
            "--without-gossip",
        ],
        cwd=BASE_DIR,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=log or subprocess.DEVNULL,
    )


def beat_process(schedule: Path, **env: str) -> subprocess.Popen[bytes]:
    """Real beat on the test broker, with the project's schedule (whose periods
    `env` may shorten), keeping its state in the file `schedule`."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config.celery_app",
            "beat",
            "--schedule",
            str(schedule),
            "--loglevel",
            "INFO",
        ],
        cwd=BASE_DIR,
        env=process_env(**env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def waiting_in(*queues: str) -> int:
    """The messages in `queues` no worker has taken yet."""
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    # A queue is a list named after it, one more per priority ("email\x06\x163").
    return sum(
        client.llen(key)
        for queue in queues
        for key in client.scan_iter(match=f"{queue}*")
        if client.type(key) == b"list"
    )


def broker_idle(*queues: str) -> bool:
    """Every task sent to `queues` has been run: none waits in a queue and none
    is unacknowledged (tasks ack late, after they ran; a worker's prefetched
    ones are unacknowledged too). How a test knows a duplicate would have
    arrived by now."""
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    return not client.hlen("unacked") and not waiting_in(*queues)
