"""PostgreSQL: the index of the newest papers holds each paper's day beside its
vector (papers.recent_index), so that a search's window reads from it only the
window's matches. The day is a btree column in a GIN index: the btree_gin
extension (trusted: a database owner may create it).

An index of the newest papers built before is built again here in the new
shape, from the same day, as papers.recent_index builds one: concurrently,
under another name, then put in the old one's place, so that searches and
ingest go on meanwhile (at 100k papers, about ten seconds). Going back drops
it, and the earlier release's daily task builds its own; the extension stays,
as it may serve other indexes.
"""

import re
from datetime import date

from django.db import migrations

INDEX = "paper_search_recent_gin"
BUILDING = "paper_search_recent_next"
# papers.recent_index's expressions and index, as written for this migration.
DAY = "COALESCE(first_announced, 'infinity'::date)"
VECTOR = "COALESCE(search_vector, ''::tsvector)"


def with_days(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    run = schema_editor.execute
    run("CREATE EXTENSION IF NOT EXISTS btree_gin")
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_get_expr(i.indpred, i.indrelid) FROM pg_index i "
            "JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = %s",
            [INDEX],
        )
        row = cursor.fetchone()
    if row is None:
        return
    cutoff = re.search(r"'(\d{4}-\d{2}-\d{2})'::date", row[0] or "")
    # Inside a transaction (a test's) PostgreSQL refuses CONCURRENTLY.
    concurrently = "" if schema_editor.connection.in_atomic_block else "CONCURRENTLY"
    run(f"DROP INDEX {concurrently} IF EXISTS {BUILDING}")
    if cutoff:
        day = date.fromisoformat(cutoff.group(1)).isoformat()
        run(
            f"CREATE INDEX {concurrently} {BUILDING} ON papers_paper "
            f"USING gin (({DAY}), ({VECTOR})) WHERE {DAY} >= DATE '{day}'"
        )
    run(f"DROP INDEX {concurrently} IF EXISTS {INDEX}")
    if cutoff:
        run(f"ALTER INDEX {BUILDING} RENAME TO {INDEX}")
        # Its expressions' statistics (papers.recent_index._build).
        run("ANALYZE papers_paper")


def without(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for index in (BUILDING, INDEX):
            schema_editor.execute(f"DROP INDEX IF EXISTS {index}")


class Migration(migrations.Migration):
    # CREATE INDEX CONCURRENTLY runs outside a transaction.
    atomic = False
    dependencies = [("papers", "0015_search_text")]

    operations = [migrations.RunPython(with_days, without)]
