"""PostgreSQL: the index of the newest papers holds each paper's day beside its
vector (papers.recent_index), so that a search's window reads from it only the
window's matches. The day is a btree column in a GIN index: the btree_gin
extension (trusted: a database owner may create it).

An index of the newest papers built before is built again here in the new
shape, from the same day (a few seconds: it holds 32,000 to 64,000 papers);
going back drops it, and the earlier release's daily task builds its own.
"""

import re
from datetime import date

from django.db import migrations

INDEX = "paper_search_recent_gin"
# papers.recent_index's expressions and index, as written for this migration.
DAY = "COALESCE(first_announced, 'infinity'::date)"
VECTOR = "COALESCE(search_vector, ''::tsvector)"
CREATE = (
    f"CREATE INDEX {INDEX} ON papers_paper USING gin (({DAY}), ({VECTOR})) "
    f"WHERE {DAY} >= DATE '{{day}}'"
)


def with_days(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute("CREATE EXTENSION IF NOT EXISTS btree_gin")
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_get_expr(i.indpred, i.indrelid) FROM pg_index i "
            "JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = %s",
            [INDEX],
        )
        row = cursor.fetchone()
        if row is None:
            return
        cursor.execute(f"DROP INDEX {INDEX}")
        if cutoff := re.search(r"'(\d{4}-\d{2}-\d{2})'::date", row[0] or ""):
            day = date.fromisoformat(cutoff.group(1))
            cursor.execute(CREATE.format(day=day.isoformat()))
            # Its expressions' statistics (papers.recent_index._build).
            cursor.execute("ANALYZE papers_paper")


def without(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")
        schema_editor.execute("DROP EXTENSION IF EXISTS btree_gin")


class Migration(migrations.Migration):
    dependencies = [("papers", "0015_search_text")]

    operations = [migrations.RunPython(with_days, without)]
