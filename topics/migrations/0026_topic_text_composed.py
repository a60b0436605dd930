"""Topics whose text was saved before Topic.clean composed it: a name,
description, definition or glossary with an accent typed as a character of
its own (NFD: "e" and U+0301, as text pasted from a Mac is) is composed (NFC),
as a curator's save now stores it and ingest stores papers' text. A few
hundred topics at most: read and written in Python on either database.

A name that composes to another topic's (names are unique) takes its slug in
brackets ("Café (cafe-2)"), as in migration 0023; should that be taken too,
the name is left for a curator and a warning logged."""

import logging
import unicodedata

from django.db import migrations

logger = logging.getLogger(__name__)

FIELDS = ("name", "description", "definition", "glossary")


def compose(apps, schema_editor):
    Topic = apps.get_model("topics", "Topic")
    length = Topic._meta.get_field("name").max_length
    for topic in Topic.objects.order_by("pk").iterator():
        changed = {
            field: unicodedata.normalize("NFC", getattr(topic, field))
            for field in FIELDS
            if not unicodedata.is_normalized("NFC", getattr(topic, field))
        }
        name = changed.get("name")
        if name is not None:
            taken = Topic.objects.exclude(pk=topic.pk)
            if taken.filter(name=name).exists():
                suffix = f" ({topic.slug})"
                name = f"{name[: length - len(suffix)].rstrip()}{suffix}"
            if taken.filter(name=name).exists():
                logger.warning(
                    "Topic %s keeps its name: composed it is another topic's (%r)",
                    topic.pk,
                    name,
                )
                del changed["name"]
            else:
                changed["name"] = name
        if changed:
            Topic.objects.filter(pk=topic.pk).update(**changed)


class Migration(migrations.Migration):
    dependencies = [
        ("topics", "0025_topic_date"),
    ]

    operations = [
        migrations.RunPython(compose, migrations.RunPython.noop),
    ]
