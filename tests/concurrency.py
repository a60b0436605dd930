"""Two writers at once, in tests: threads with database connections of their
own (transactional tests, on PostgreSQL)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from collections.abc import Sequence
from unittest import mock

from django.db import connection
from django.db import connections
from django.db import transaction

from papers.ingest.records import PaperRecord
from papers.ingest.upsert import upsert_records


def in_thread(
    action: Callable[[], object], errors: list[Exception] | None = None
) -> threading.Thread:
    """Start `action` in a thread; what it raises goes in `errors`, if given."""

    def run() -> None:
        try:
            action()
        except Exception as error:
            if errors is None:
                raise
            errors.append(error)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def waiting_on_a_lock() -> bool:
    """Whether a connection to the test database waits for a lock."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE wait_event_type = 'Lock' AND datname = current_database()"
        )
        return cursor.fetchone()[0] > 0


def ingest_committing_late(
    records: Sequence[PaperRecord],
) -> tuple[threading.Thread, threading.Event]:
    """An ingest page (or `manage.py ingest FILE`, one transaction) that has
    stamped its papers and commits once the event returned is set."""
    written, commit = threading.Event(), threading.Event()

    def ingest() -> None:
        with transaction.atomic():
            upsert_records(list(records))
            written.set()
            assert commit.wait(30)

    thread = in_thread(ingest)
    assert written.wait(30)
    return thread, commit


def retag_deciding_slowly(
    topic_id: int, errors: list[Exception] | None = None
) -> tuple[threading.Thread, threading.Event]:
    """A re-tag of the topic in a thread, stopped after deciding its first
    chunk's tags (the moment a curator or an ingest may act in): it goes on
    once the event returned is set."""
    from topics import rule_tags
    from topics.retagging import run_retag

    decided, go = threading.Event(), threading.Event()
    real = rule_tags.decide

    def decide_then_wait(*args, **kwargs):
        decision = real(*args, **kwargs)
        decided.set()
        assert go.wait(30)
        return decision

    def retag() -> None:
        with mock.patch.object(rule_tags, "decide", decide_then_wait):
            run_retag(topic_id)

    thread = in_thread(retag, errors)
    assert decided.wait(30)
    return thread, go
