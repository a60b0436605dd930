"""Papers' index terms for rule prefilters (topics/prefilter.py).

PostgreSQL: terms is a tsvector with a GIN index, which answers a rule's
condition (words, prefixes, AND, OR) as one @@ match. SQLite: terms is text, and
an FTS5 table (its own copy of the terms, like papers' search tables in
papers/migrations/0005) kept by triggers answers it with MATCH. Its "ascii"
tokenizer keeps every term one token as written: terms are lower case already,
hold letters and digits only besides the ":" of ti: and au: and the "_" of
word pairs, and non-ASCII letters must not be folded again.
"""

import django.db.models.deletion
from django.db import migrations
from django.db import models

import topics.models

FTS = "topics_ruledocument_fts"

POSTGRESQL = [
    "CREATE INDEX ruledocument_terms_gin ON topics_ruledocument USING gin (terms)",
]
POSTGRESQL_DROP = ["DROP INDEX IF EXISTS ruledocument_terms_gin"]

SQLITE = [
    f"""CREATE VIRTUAL TABLE {FTS} USING fts5(
        terms, tokenize = "ascii tokenchars ':_'"
    )""",
    f"""CREATE TRIGGER topics_ruledocument_fts_insert
    AFTER INSERT ON topics_ruledocument BEGIN
        INSERT INTO {FTS} (rowid, terms) VALUES (new.paper_id, new.terms);
    END""",
    f"""CREATE TRIGGER topics_ruledocument_fts_delete
    AFTER DELETE ON topics_ruledocument BEGIN
        DELETE FROM {FTS} WHERE rowid = old.paper_id;
    END""",
    f"""CREATE TRIGGER topics_ruledocument_fts_update
    AFTER UPDATE OF terms ON topics_ruledocument BEGIN
        DELETE FROM {FTS} WHERE rowid = old.paper_id;
        INSERT INTO {FTS} (rowid, terms) VALUES (new.paper_id, new.terms);
    END""",
]
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS topics_ruledocument_fts_update",
    "DROP TRIGGER IF EXISTS topics_ruledocument_fts_delete",
    "DROP TRIGGER IF EXISTS topics_ruledocument_fts_insert",
    f"DROP TABLE IF EXISTS {FTS}",
]


def on_vendor(statements):
    def operation(apps, schema_editor):
        for statement in statements.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return operation


class Migration(migrations.Migration):
    dependencies = [
        ("papers", "0005_search_fts5"),
        ("topics", "0007_topic_relations"),
    ]

    operations = [
        migrations.CreateModel(
            name="RuleDocument",
            fields=[
                (
                    "paper",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="+",
                        serialize=False,
                        to="papers.paper",
                    ),
                ),
                ("terms", topics.models.RuleTermsField()),
                ("source_modified", models.DateTimeField()),
                ("version", models.PositiveSmallIntegerField()),
            ],
        ),
        migrations.AddField(
            model_name="topic",
            name="tagged_fingerprint",
            field=models.CharField(blank=True, editable=False, max_length=64),
        ),
        migrations.RunPython(
            on_vendor({"postgresql": POSTGRESQL, "sqlite": SQLITE}),
            on_vendor({"postgresql": POSTGRESQL_DROP, "sqlite": SQLITE_DROP}),
        ),
    ]
