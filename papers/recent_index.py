"""PostgreSQL: a full-text index of the newest papers alone, for the windows a
search looks in first (papers.search.newest_matches).

PostgreSQL reads a word's matches from the GIN index as one bitmap of the whole
corpus before a window's dates narrow it: "model"'s 71,585 matches at 100k
papers took 7-8 ms to decode, and ten times as many at 1M would take ten times
that. A partial index over the newest papers (`first_announced >= CUTOFF`, or
no day yet) holds between RECENT_PAPERS and twice as many whatever the corpus's
size, and PostgreSQL uses it for every window that starts on or after its
cutoff, since a window's start is written into its query. A cutoff is a
constant of its index, so `refresh_recent_index` (daily, papers.tasks) builds
a new one once the papers past the cutoff have doubled, and keeps none while
the corpus is small enough for the whole index to be read as fast.

The index holds each paper's day too (DAY; btree_gin, migration 0016), and a
window's start is a condition on it, so that PostgreSQL reads from the index
only the window's matches. On the vector alone it took every match in the
index and dropped those before the window only after checking each one's
weights in its row: a phrase's first window cost as much as the whole index
("reinforcement learning" at 100k papers: 7.2 ms for 330 matches among 2,366
read, against 1.5 ms).

The index holds the vector behind an expression (VECTOR) the whole corpus's
index does not, and a window inside it asks for that expression: PostgreSQL
would otherwise combine a common word's whole-corpus bitmap with the window's
dates, pricing it far below what it costs ("learning" at 1M papers: 80 ms to
decode 387,000 matches, against 6 ms from this index), and its cost would grow
with the corpus.
"""

from __future__ import annotations

import logging
import re
from datetime import date

from django.db import connection

from papers.models import Paper

logger = logging.getLogger(__name__)

# The newest this many papers: the first four windows of a search (4,000 to
# 32,000 papers, papers.search.WINDOW_PAPERS) fall inside the index.
RECENT_PAPERS = 32_000
INDEX = "paper_search_recent_gin"
# Built under this name, then renamed: a build cut short leaves an invalid
# index under it, dropped by the next refresh, never under INDEX.
BUILDING = "paper_search_recent_next"
# What it indexes, and what a window's query matches (papers.search): the
# vector, unchanged (a paper without one has the empty vector), written so that
# only this index serves it.
VECTOR = "COALESCE(search_vector, ''::tsvector)"
# A paper's day as the index holds it: one without a day yet is newer than any,
# so it is in every window, as in a search's order (papers.search.NEWEST_FIRST).
DAY = "COALESCE(first_announced, 'infinity'::date)"
CUTOFF = re.compile(r"'(\d{4}-\d{2}-\d{2})'::date")


def refresh_recent_index() -> str:
    """Build, rebuild, keep or drop the index of the newest papers, as their
    number says; what it did, for the log. Nothing on SQLite (FTS5)."""
    if connection.vendor != "postgresql":
        return "nothing to do on SQLite"
    cutoff = recent_cutoff()
    if Paper.objects.count() <= 2 * RECENT_PAPERS:
        if cutoff is None:
            return "not needed"
        _execute(f"DROP INDEX {_concurrently()} IF EXISTS {INDEX}")
        return "dropped: the corpus is small enough for the whole index"
    if cutoff is not None and _papers_since(cutoff) <= 2 * RECENT_PAPERS:
        return f"kept, from {cutoff}"
    days = Paper.objects.exclude(first_announced=None).order_by("-first_announced")
    day = days.values_list("first_announced", flat=True)[RECENT_PAPERS - 1]
    assert day is not None  # excluded
    _build(day)
    logger.info("search index of the newest papers rebuilt from %s", day)
    return f"built from {day}"


def recent_cutoff() -> date | None:
    """The day the index of the newest papers starts at, or None without one
    (or with one of an earlier release, without the day or on the plain
    vector: rebuilt)."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_get_expr(i.indpred, i.indrelid), pg_get_indexdef(i.indexrelid) "
            "FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE c.relname = %s",
            [INDEX],
        )
        row = cursor.fetchone()
    if row is None or VECTOR not in row[1] or DAY not in row[1]:
        return None
    found = CUTOFF.search(row[0])
    return date.fromisoformat(found.group(1)) if found else None


def _papers_since(day: date) -> int:
    return Paper.objects.filter(first_announced__gte=day).count()


def _build(day: date) -> None:
    # Concurrently, outside a transaction, so that ingest and search go on;
    # the old index serves until the new one replaces it.
    concurrently = _concurrently()
    _execute(f"DROP INDEX {concurrently} IF EXISTS {BUILDING}")
    _execute(
        f"CREATE INDEX {concurrently} {BUILDING} ON papers_paper "
        f"USING gin (({DAY}), ({VECTOR})) WHERE {DAY} >= DATE '{day.isoformat()}'"
    )
    _execute(f"DROP INDEX {concurrently} IF EXISTS {INDEX}")
    _execute(f"ALTER INDEX {BUILDING} RENAME TO {INDEX}")
    # The statistics of its expression (a second of sampling at 1M papers):
    # without them PostgreSQL guesses how many papers a word matches there.
    _execute("ANALYZE papers_paper")


def _concurrently() -> str:
    # Inside a transaction (a test's) PostgreSQL refuses CONCURRENTLY.
    return "" if connection.in_atomic_block else "CONCURRENTLY"


def _execute(sql: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql)
