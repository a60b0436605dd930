"""Author names stored before ingest dropped control characters from them: an
escape or a page break in a name stayed in the paper's page, the author's
page, the API's JSON and the mails. They are cleaned as today's ingest cleans
a printed name (papers.ingest.authors.clean_name), in Author.name and in each
paper's Paper.author_names.

A character within a word gave the name another key ("Gra<ESC>ce Hopper" is
"gra ce hopper"); cleaned, the name may be another author's, and one key is
one author (papers.identity): the author then joins that one, their papers
and followers with them, as migration 0008 merged authors, and a line is
logged. A name that is nothing but control characters is left, and logged.

Only the rows holding such a character are read (a regular expression in
SQL, on PostgreSQL and on SQLite). Pages cached with the old names are
rendered anew after `migrate` (papers.apps moves every page's version)."""

import importlib
import logging

from django.db import migrations

# Ingest's clean_name and papers.identity's author_key as migration 0012 holds
# them: a migration keeps its meaning should the app's code change.
names_0012 = importlib.import_module("papers.migrations.0012_split_group_authors")
clean_name = names_0012.clean_name
author_key = names_0012.author_key

logger = logging.getLogger(__name__)

# core.text.CONTROL as a character class both databases read: PostgreSQL's \x
# and \u escapes are Python's.
HOLDS_CONTROL = (
    r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f"
    r"\u202a-\u202e\u2066-\u2069\ufffe\uffff]"
)
# How Paper.author_names joins a paper's names (papers.names).
AUTHOR_SEPARATOR = ", "


def clean_authors(apps, schema_editor):
    Author = apps.get_model("papers", "Author")
    Authorship = apps.get_model("papers", "Authorship")
    AuthorFollow = apps.get_model("papers", "AuthorFollow")
    for author in Author.objects.filter(name__regex=HOLDS_CONTROL).order_by("pk"):
        name = clean_name(author.name)
        if not name:
            logger.warning(
                "Author %s keeps its name: it is only control characters (%r)",
                author.pk,
                author.name,
            )
            continue
        key = author_key(name)
        follows = AuthorFollow.objects.filter(author_id=author.pk)
        other = Author.objects.filter(key=key).exclude(pk=author.pk).first()
        if other is None:
            Author.objects.filter(pk=author.pk).update(name=name, key=key)
            continue
        Authorship.objects.filter(author_id=author.pk).update(author_id=other.pk)
        kept = AuthorFollow.objects.filter(author_id=other.pk).values("user_id")
        follows.filter(user_id__in=kept).delete()
        follows.update(author_id=other.pk)
        author.delete()
        logger.info(
            "Author %s (%r) joins author %s (%r): without its control characters "
            "its name is theirs",
            author.pk,
            author.name,
            other.pk,
            other.name,
        )
    Paper = apps.get_model("papers", "Paper")
    listed = Paper.objects.filter(author_names__regex=HOLDS_CONTROL).only(
        "author_names"
    )
    # Read whole before any is written: SQLite does not keep a query's rows
    # from the same connection's writes (and such rows are few).
    for paper in list(listed.order_by("pk")):
        printed = (name for name in paper.author_names.split(AUTHOR_SEPARATOR) if name)
        names = (clean_name(name) for name in printed)
        Paper.objects.filter(pk=paper.pk).update(
            author_names=AUTHOR_SEPARATOR.join(name for name in names if name)
        )


class Migration(migrations.Migration):
    dependencies = [
        ("papers", "0016_recent_index_days"),
    ]

    operations = [
        migrations.RunPython(clean_authors, migrations.RunPython.noop),
    ]
