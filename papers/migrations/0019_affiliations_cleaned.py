"""Affiliations stored before ingest cleaned them as it cleans an author's
name: a control character (an escape, a page break) stayed in the paper's
page and the API's JSON, and accents stored decomposed (NFD) read unlike what
a reader types. They are cleaned as today's ingest cleans one
(papers.ingest.authors.clean_affiliation: control characters out, accents
composed).

Names are unique: an affiliation whose cleaned name is another's becomes that
one on its authors' papers (where an author already gave both, once), and a
line is logged. One that is nothing but control characters is left, and
logged.

Only the rows that need it are read: on PostgreSQL those holding a control
character or `IS NOT NFC NORMALIZED`; on SQLite those holding one (a regular
expression) and, in batches by id, those whose accents are decomposed."""

import importlib
import logging
import unicodedata

from django.db import migrations
from django.db.models import Q

logger = logging.getLogger(__name__)

# Ingest's cleaning as migration 0012 holds it: a migration keeps its meaning
# should the app's code change.
names_0012 = importlib.import_module("papers.migrations.0012_split_group_authors")
MAX_AFFILIATION_LENGTH = 500
# core.text.CONTROL as a character class both databases read: PostgreSQL's \x
# and \u escapes are Python's.
HOLDS_CONTROL = (
    r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f"
    r"\u202a-\u202e\u2066-\u2069\ufffe\uffff]"
)
BATCH = 2000


def clean_affiliation(text):
    """papers.ingest.authors.clean_affiliation: LaTeX decoded, whitespace
    collapsed, no control characters."""
    text = names_0012.delatex(names_0012.repair_text(text))
    affiliation = names_0012.shown(" ".join(text.split())).strip(" ,;")
    return affiliation[:MAX_AFFILIATION_LENGTH]


def _needing(Affiliation, schema_editor):
    """The ids of the affiliations to clean, in order."""
    holding = Affiliation.objects.filter(name__regex=HOLDS_CONTROL)
    if schema_editor.connection.vendor == "postgresql":
        decomposed = Affiliation.objects.extra(where=["name IS NOT NFC NORMALIZED"])
        return list(
            Affiliation.objects.filter(Q(pk__in=holding) | Q(pk__in=decomposed))
            .order_by("pk")
            .values_list("pk", flat=True)
        )
    ids = set(holding.values_list("pk", flat=True))
    rows = Affiliation.objects.order_by("pk").values_list("pk", "name")
    batch = list(rows[:BATCH])
    while batch:
        ids |= {pk for pk, name in batch if not unicodedata.is_normalized("NFC", name)}
        batch = list(rows.filter(pk__gt=batch[-1][0])[:BATCH])
    return sorted(ids)


def clean_affiliations(apps, schema_editor):
    Affiliation = apps.get_model("papers", "Affiliation")
    Held = apps.get_model("papers", "Authorship").affiliations.through
    for pk in _needing(Affiliation, schema_editor):
        affiliation = Affiliation.objects.get(pk=pk)
        name = clean_affiliation(affiliation.name)
        if not name:
            logger.warning(
                "Affiliation %s keeps its name: it is only control characters (%r)",
                pk,
                affiliation.name,
            )
            continue
        other = Affiliation.objects.filter(name=name).exclude(pk=pk).first()
        if other is None:
            Affiliation.objects.filter(pk=pk).update(name=name)
            continue
        held = Held.objects.filter(affiliation_id=pk)
        both = Held.objects.filter(affiliation_id=other.pk).values("authorship_id")
        held.filter(authorship_id__in=both).delete()
        held.update(affiliation_id=other.pk)
        affiliation.delete()
        logger.info(
            "Affiliation %s (%r) joins affiliation %s (%r): cleaned as ingest "
            "cleans one, its name is theirs",
            pk,
            affiliation.name,
            other.pk,
            other.name,
        )


class Migration(migrations.Migration):
    dependencies = [
        ("papers", "0018_text_composed"),
    ]

    operations = [
        migrations.RunPython(clean_affiliations, migrations.RunPython.noop),
    ]
