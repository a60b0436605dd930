"""Journal references and DOIs stored before ingest composed accents
(papers.ingest.records.repair_text, which every parser's clean_text applies
to them as to titles): migration 0018 composed titles, abstracts, comments and
author names, not these, so a reference stored with an accent as a letter of
its own (NFD: "e" and U+0301) differed from the same one typed or sent
composed, and a search or a comparison missed it. They are composed (NFC).

Only the rows that need it are written, as in 0018: on PostgreSQL those that
are `IS NOT NFC NORMALIZED`, in one UPDATE; on SQLite, read in batches by id
and composed in Python."""

import unicodedata

from django.db import migrations

FIELDS = ("journal_ref", "doi")
BATCH = 2000


def compose(apps, schema_editor):
    Paper = apps.get_model("papers", "Paper")
    if schema_editor.connection.vendor == "postgresql":
        quote = schema_editor.quote_name
        names = [quote(field) for field in FIELDS]
        assignments = ", ".join(f"{name} = normalize({name}, NFC)" for name in names)
        needed = " OR ".join(f"{name} IS NOT NFC NORMALIZED" for name in names)
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {quote(Paper._meta.db_table)} SET {assignments} WHERE {needed}"
            )
        return
    rows = Paper.objects.only(*FIELDS).order_by("pk")
    # Batch after batch by id, none read while its changes are written (SQLite
    # does not isolate a query's rows from the same connection's writes).
    batch = list(rows[:BATCH])
    while batch:
        changed = [row for row in batch if _composed(row)]
        Paper.objects.bulk_update(changed, FIELDS)
        batch = list(rows.filter(pk__gt=batch[-1].pk)[:BATCH])


def _composed(row):
    """Whether the row's fields needed composing; they are composed in place."""
    texts = [getattr(row, field) for field in FIELDS]
    if all(unicodedata.is_normalized("NFC", text) for text in texts):
        return False
    for field, text in zip(FIELDS, texts, strict=True):
        setattr(row, field, unicodedata.normalize("NFC", text))
    return True


class Migration(migrations.Migration):
    dependencies = [
        ("papers", "0021_paper_arxiv_id_start_idx"),
    ]

    operations = [
        migrations.RunPython(compose, migrations.RunPython.noop),
    ]
