"""A lock held across processes and machines for a block of work, by the
database session: what two workers must not do at once to one thing."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection


@contextmanager
def held(name: str, key: int) -> Iterator[None]:
    """Hold the lock on (name, key) for the block: another holder waits for it.
    PostgreSQL's advisory locks, held by this process's connection, so a
    killed worker frees its own. On SQLite (the embedded default: tasks run
    in the web process, one writer at a time) there is nothing to hold."""
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(hashtext(%s), %s)", [name, key])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(hashtext(%s), %s)", [name, key])
