"""The curated seed topics shipped with the project (data/demo/topics.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from papers.models import Category
from papers.taxonomy import category_name
from topics.editing import save_topic
from topics.models import Topic
from topics.rules import RuleError
from topics.rules import compile_new_rule

SEED_TOPICS = Path(settings.BASE_DIR) / "data" / "demo" / "topics.json"


@transaction.atomic
def load_topics(path: Path = SEED_TOPICS, *, retag: bool = True) -> list[Topic]:
    """Create or update the topics described in `path`, by slug, as admin and
    the API do (topics.editing.save_topic); idempotent. retag=False leaves
    re-tagging the new and changed topics to the caller.

    Every rule is compiled first, as a curator's new rule is (its categories
    arXiv's), so a bad rule in the file changes nothing, and is named.
    """
    entries = json.loads(path.read_text())
    for entry in entries:
        try:
            compile_new_rule(entry["rule"])
        except RuleError as exc:
            named = f"{path.name}, {entry['slug']}: {exc.message}"
            raise RuleError(named, exc.position) from exc
    topics = {}
    for entry in entries:
        topic = Topic.objects.filter(slug=entry["slug"]).first() or Topic()
        topics[entry["slug"]] = save_topic(
            topic,
            fields=_fields(entry),
            categories=_categories(entry.get("categories", [])),
            retag=retag,
        )
    for entry in entries:
        save_topic(
            topics[entry["slug"]],
            fields={},
            related=[
                topics[slug] for slug in entry.get("related", []) if slug in topics
            ],
            retag=retag,
        )
    return list(topics.values())


def _fields(entry: dict[str, Any]) -> dict[str, Any]:
    """A seed file entry's topic fields, as save_topic takes them."""
    return {
        "slug": entry["slug"],
        "name": entry["name"],
        "description": entry.get("description", ""),
        "definition": entry.get("definition", ""),
        "glossary": "\n".join(entry.get("glossary", [])),
        "rule": entry["rule"],
        "is_active": entry.get("is_active", True),
    }


def _categories(codes: list[str]) -> list[Category]:
    return [
        Category.objects.get_or_create(
            code=code, defaults={"name": category_name(code)}
        )[0]
        for code in codes
    ]
