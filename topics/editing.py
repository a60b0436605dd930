"""Creating and changing topics outside admin (the API), with admin's rules."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import transaction

from papers.models import Category
from topics.curation import request_retag
from topics.models import Topic

# Changing any of these changes which papers the rule tags.
RETAG_FIELDS = {"rule", "categories", "is_active"}


@transaction.atomic
def save_topic(
    topic: Topic,
    *,
    fields: dict[str, Any],
    categories: Iterable[Category] | None = None,
    related: Iterable[Topic] | None = None,
    retag: bool = True,
) -> Topic:
    """Create (a topic without pk) or update a topic as admin does: validated by
    full_clean (the rule compiled, names unique), saved (visitors' pages and API
    caches go stale), and re-tagged in the background after commit when new or
    when what it tags changed. retag=False leaves the re-tag to the caller (the
    demo loader tags every changed topic in one pass)."""
    changed = {name for name, value in fields.items() if getattr(topic, name) != value}
    for name, value in fields.items():
        setattr(topic, name, value)
    creating = topic.pk is None
    topic.full_clean()
    topic.save()
    if categories is not None:
        categories = list(categories)
        if creating or {c.pk for c in categories} != set(
            topic.categories.values_list("pk", flat=True)
        ):
            changed.add("categories")
        topic.categories.set(categories)
    if related is not None:
        topic.related.set([other for other in related if other.pk != topic.pk])
    if retag and (creating or RETAG_FIELDS & changed):
        request_retag(topic)
    return topic


def set_active(topic: Topic, active: bool) -> bool:
    """Activate or deactivate a topic as its change form and the API do (admin's
    actions too): checked, saved and re-tagged in the background. False if it
    was so already; raises ValidationError if its rule no longer compiles."""
    if topic.is_active == active:
        return False
    save_topic(topic, fields={"is_active": active})
    return True
