"""Titles, abstracts, comments and author names stored before ingest composed
accents (papers.ingest.records.repair_text): an accent stored as a letter of
its own after its letter (NFD: "e" and U+0301) split the word in two for
search's highlights, which marked nothing of "Bézier" in a title that
matched it, and the page and the API gave text unlike what a reader types.
They are composed (NFC), as ingest writes them.

Only the rows that need it are written (each is indexed for search again):
on PostgreSQL those that are `IS NOT NFC NORMALIZED`, in one UPDATE a table;
on SQLite, read in batches by id and composed in Python. An author's key is the
same either way (papers.identity decomposes the name), so no author becomes
another."""

import unicodedata

from django.db import migrations

FIELDS = {
    "papers_paper": ("title", "abstract", "comment", "author_names"),
    "papers_author": ("name",),
}
BATCH = 2000


def compose_postgresql(schema_editor):
    quote = schema_editor.quote_name
    with schema_editor.connection.cursor() as cursor:
        for table, fields in FIELDS.items():
            names = [quote(field) for field in fields]
            assignments = ", ".join(
                f"{name} = normalize({name}, NFC)" for name in names
            )
            needed = " OR ".join(f"{name} IS NOT NFC NORMALIZED" for name in names)
            cursor.execute(f"UPDATE {quote(table)} SET {assignments} WHERE {needed}")


def compose(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        compose_postgresql(schema_editor)
        return
    for model_name in ("Paper", "Author"):
        model = apps.get_model("papers", model_name)
        fields = FIELDS[model._meta.db_table]
        rows = model.objects.only(*fields).order_by("pk")
        # Batch after batch by id, none read while its changes are written
        # (SQLite does not isolate a query's rows from the same connection's
        # writes).
        batch = list(rows[:BATCH])
        while batch:
            changed = [row for row in batch if _composed(row, fields)]
            model.objects.bulk_update(changed, fields)
            batch = list(rows.filter(pk__gt=batch[-1].pk)[:BATCH])


def _composed(row, fields):
    """Whether the row's text needed composing; it is composed in place."""
    texts = [getattr(row, field) for field in fields]
    if all(unicodedata.is_normalized("NFC", text) for text in texts):
        return False
    for field, text in zip(fields, texts, strict=True):
        setattr(row, field, unicodedata.normalize("NFC", text))
    return True


class Migration(migrations.Migration):
    dependencies = [
        ("papers", "0017_author_names_without_control_characters"),
    ]

    operations = [
        migrations.RunPython(compose, migrations.RunPython.noop),
    ]
