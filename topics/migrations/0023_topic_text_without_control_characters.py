"""Topics whose text was saved before migrations 0014-0021 refused control
characters in it, and saved searches named before their names refused them:
the characters taken out, so that a curator can save the topic again in
admin, and a reader change the search in the settings (neither could see
what was refused), and the API gives the text as its schema says.

Cleaned as the ingest cleans what it reads (papers.ingest.records): what reads
as a space is one space in a name or a description; in a definition or a
glossary, what str.splitlines() breaks a line at is a line break, as the
glossary's lines were read. A search's query is left as it is: it was checked
when saved, and a change would change its matches.

A name that cleans to another topic's (names are unique) takes its slug in
brackets ("Agents (agents-2)"); should that be taken too, the name is left
for a curator and a warning logged. A search's name, unique among its
reader's, takes the first free number in brackets ("Robots (2)")."""

import logging
import re

from django.db import migrations
from django.db.models import F

logger = logging.getLogger(__name__)

# core.text.CONTROL as of migration 0021, written out: a migration keeps the
# meaning it had when it was written, should the app's pattern change.
CONTROL = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f"
    "\u202a-\u202e\u2066-\u2069\ufffe\uffff]"
)
LINE_BREAKS = re.compile("[\x0b\x0c\x1c-\x1e]")
LINES = ("definition", "glossary")


def cleaned(text, multiline):
    if not CONTROL.search(text):
        return text
    text = LINE_BREAKS.sub("\n", text) if multiline else " ".join(text.split())
    return CONTROL.sub("", text).strip()


def clean_topic_text(apps, schema_editor):
    Topic = apps.get_model("topics", "Topic")
    length = Topic._meta.get_field("name").max_length
    for topic in Topic.objects.order_by("pk").iterator():
        changed = {}
        for field in ("name", "description", *LINES):
            text = getattr(topic, field)
            if cleaned(text, field in LINES) != text:
                changed[field] = cleaned(text, field in LINES)
        name = changed.get("name")
        if name is not None:
            taken = Topic.objects.exclude(pk=topic.pk)
            if not name or taken.filter(name=name).exists():
                suffix = f" ({topic.slug})"
                name = f"{name[: length - len(suffix)].rstrip()}{suffix}".strip()
            if taken.filter(name=name).exists():
                logger.warning(
                    "Topic %s keeps its name: without its control characters "
                    "it is another topic's (%r)",
                    topic.pk,
                    name,
                )
                del changed["name"]
            else:
                changed["name"] = name
        if changed:
            Topic.objects.filter(pk=topic.pk).update(**changed)


def clean_search_names(apps, schema_editor):
    SavedSearch = apps.get_model("topics", "SavedSearch")
    length = SavedSearch._meta.get_field("name").max_length
    for search in SavedSearch.objects.order_by("pk").iterator():
        name = cleaned(search.name, multiline=False)
        if name == search.name:
            continue
        base, number = name or "Search", 1
        taken = SavedSearch.objects.filter(user_id=search.user_id).exclude(pk=search.pk)
        while not name or taken.filter(name=name).exists():
            number += 1
            suffix = f" ({number})"
            name = f"{base[: length - len(suffix)].rstrip()}{suffix}"
        # Its name is in its reader's feed (the feed's render is keyed by it).
        SavedSearch.objects.filter(pk=search.pk).update(
            name=name, revision=F("revision") + 1
        )


class Migration(migrations.Migration):
    dependencies = [
        ("topics", "0022_saved_search_query_stripped"),
    ]

    operations = [
        migrations.RunPython(clean_topic_text, migrations.RunPython.noop),
        migrations.RunPython(clean_search_names, migrations.RunPython.noop),
    ]
