"""Full-text search on SQLite (the embedded default): FTS5 tables kept by triggers.

FTS5 tokenizes a whole table one way, so two tables serve search (papers/search.py):
- papers_paper_fts: title, abstract and author names, Porter-stemmed. Title and
  abstract words match here, and bm25() ranks and highlight() marks the results.
- papers_paper_fts_authors: author names unstemmed, so that "Levine" does not
  find "Levin" (as PostgreSQL keeps them with the 'simple' configuration).

Both hold their own copy of the text rather than reading papers_paper (external
content): a copy can always be deleted by rowid, so an index can go stale but never
corrupt. Existing papers are indexed here. On PostgreSQL this migration does
nothing (its search vector is migration 0002's).

Django's SQLite schema editor rebuilds a table for most ALTERs, which drops its
triggers: a later migration that alters papers_paper must create them again
(tests/papers/test_search_sqlite.py checks they exist after all migrations).
"""

from django.db import migrations

TEXT = "papers_paper_fts"
AUTHORS = "papers_paper_fts_authors"

CREATE = [
    f"""CREATE VIRTUAL TABLE {TEXT} USING fts5(
        title, abstract, author_names,
        tokenize = 'porter unicode61 remove_diacritics 2'
    )""",
    f"""CREATE VIRTUAL TABLE {AUTHORS} USING fts5(
        author_names, tokenize = 'unicode61 remove_diacritics 2'
    )""",
    f"""CREATE TRIGGER papers_paper_fts_insert AFTER INSERT ON papers_paper BEGIN
        INSERT INTO {TEXT} (rowid, title, abstract, author_names)
            VALUES (new.id, new.title, new.abstract, new.author_names);
        INSERT INTO {AUTHORS} (rowid, author_names) VALUES (new.id, new.author_names);
    END""",
    f"""CREATE TRIGGER papers_paper_fts_delete AFTER DELETE ON papers_paper BEGIN
        DELETE FROM {TEXT} WHERE rowid = old.id;
        DELETE FROM {AUTHORS} WHERE rowid = old.id;
    END""",
    # The upsert's bulk_update sets every field of a changed paper: only a
    # changed text is indexed again.
    f"""CREATE TRIGGER papers_paper_fts_update
    AFTER UPDATE OF title, abstract, author_names ON papers_paper
    WHEN old.title IS NOT new.title OR old.abstract IS NOT new.abstract
        OR old.author_names IS NOT new.author_names
    BEGIN
        DELETE FROM {TEXT} WHERE rowid = old.id;
        DELETE FROM {AUTHORS} WHERE rowid = old.id;
        INSERT INTO {TEXT} (rowid, title, abstract, author_names)
            VALUES (new.id, new.title, new.abstract, new.author_names);
        INSERT INTO {AUTHORS} (rowid, author_names) VALUES (new.id, new.author_names);
    END""",
    f"""INSERT INTO {TEXT} (rowid, title, abstract, author_names)
        SELECT id, title, abstract, author_names FROM papers_paper""",
    f"""INSERT INTO {AUTHORS} (rowid, author_names)
        SELECT id, author_names FROM papers_paper""",
]

DROP = [
    "DROP TRIGGER IF EXISTS papers_paper_fts_update",
    "DROP TRIGGER IF EXISTS papers_paper_fts_delete",
    "DROP TRIGGER IF EXISTS papers_paper_fts_insert",
    f"DROP TABLE IF EXISTS {AUTHORS}",
    f"DROP TABLE IF EXISTS {TEXT}",
]


def run_on_sqlite(statements):
    def operation(apps, schema_editor):
        if schema_editor.connection.vendor == "sqlite":
            for statement in statements:
                schema_editor.execute(statement)

    return operation


class Migration(migrations.Migration):
    dependencies = [("papers", "0004_shown_papers")]

    operations = [
        migrations.RunPython(run_on_sqlite(CREATE), run_on_sqlite(DROP)),
    ]
