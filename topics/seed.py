"""The curated seed topics shipped with the project (data/demo/topics.json)."""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.db import transaction

from papers.models import Category
from papers.taxonomy import category_name
from topics.models import Topic
from topics.rules import compile_rule

SEED_TOPICS = Path(settings.BASE_DIR) / "data" / "demo" / "topics.json"


@transaction.atomic
def load_topics(path: Path = SEED_TOPICS) -> list[Topic]:
    """Create or update the topics described in `path`, by slug; idempotent.

    Every rule is compiled first, so a bad rule in the file changes nothing.
    """
    entries = json.loads(path.read_text())
    for entry in entries:
        compile_rule(entry["rule"])
    topics = {}
    for entry in entries:
        topic, _ = Topic.objects.update_or_create(
            slug=entry["slug"],
            defaults={
                "name": entry["name"],
                "description": entry.get("description", ""),
                "definition": entry.get("definition", ""),
                "glossary": "\n".join(entry.get("glossary", [])),
                "rule": entry["rule"],
                "is_active": entry.get("is_active", True),
            },
        )
        topic.categories.set(_categories(entry.get("categories", [])))
        topics[topic.slug] = topic
    for entry in entries:
        topics[entry["slug"]].related.set(
            [topics[slug] for slug in entry.get("related", []) if slug in topics]
        )
    return list(topics.values())


def _categories(codes: list[str]) -> list[Category]:
    return [
        Category.objects.get_or_create(
            code=code, defaults={"name": category_name(code)}
        )[0]
        for code in codes
    ]
