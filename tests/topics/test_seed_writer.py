"""The seed file, the API and the demo loader write topics through one function
(topics.editing.save_topic): the same entry gives the same stored topic."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from topics.models import Topic
from topics.seed import load_topics

pytestmark = pytest.mark.django_db

ENTRIES = [
    {
        "name": "Robot Learning",
        "slug": "robot-learning",
        "description": "Robots that learn.",
        "glossary": ["RL: Reinforcement Learning"],
        "rule": "ti:robot",
        "categories": ["cs.RO"],
        "related": [],
        "is_active": True,
    },
    {
        "name": "RL for LLM Agents",
        "slug": "rl-for-llm-agents",
        "description": "",
        "glossary": [],
        "rule": 'abs:"reinforcement learning" AND ti:agent*',
        "categories": ["cs.LG", "cs.AI"],
        "related": ["robot-learning"],
        "is_active": False,
    },
]


def stored() -> list[dict]:
    return [
        {
            "fields": {
                name: getattr(topic, name)
                for name in ("name", "slug", "description", "glossary", "rule")
            }
            | {"is_active": topic.is_active, "membership": topic.membership},
            "categories": sorted(topic.categories.values_list("code", flat=True)),
            "related": sorted(topic.related.values_list("slug", flat=True)),
            "retag_pending": topic.retag_pending,
        }
        for topic in Topic.objects.order_by("slug")
    ]


@pytest.fixture
def sent(monkeypatch) -> list[tuple]:
    """The re-tags sent to the workers."""
    sent: list[tuple] = []
    monkeypatch.setattr(
        "topics.tasks.retag_topic.apply_async", lambda args, **_: sent.append(args)
    )
    return sent


def test_seeding_and_the_api_store_the_same_topics(
    curator, tmp_path, sent, django_capture_on_commit_callbacks
):
    path = tmp_path / "topics.json"
    path.write_text(json.dumps(ENTRIES))
    with django_capture_on_commit_callbacks(execute=True):
        load_topics(path)
    seeded, seeded_retags = stored(), len(sent)
    Topic.objects.all().delete()
    sent.clear()

    api = Client()
    api.force_login(curator)
    with django_capture_on_commit_callbacks(execute=True):
        for entry in ENTRIES:
            response = api.post(
                "/api/v1/topics/",
                dict(entry, glossary="\n".join(entry["glossary"])),
                content_type="application/json",
            )
            assert response.status_code == 201, response.content

    assert stored() == seeded
    assert len(sent) == seeded_retags == len(ENTRIES)
    agents = next(t for t in seeded if t["fields"]["slug"] == "rl-for-llm-agents")
    assert agents["related"] == ["robot-learning"]
    assert agents["fields"]["is_active"] is False


def test_seeding_again_requests_no_retag(
    tmp_path, sent, django_capture_on_commit_callbacks
):
    path = tmp_path / "topics.json"
    path.write_text(json.dumps(ENTRIES))
    load_topics(path)

    with django_capture_on_commit_callbacks(execute=True):
        load_topics(path)

    assert sent == []


def test_a_changed_seed_rule_requests_a_retag_of_its_topic(
    tmp_path, sent, django_capture_on_commit_callbacks
):
    path = tmp_path / "topics.json"
    path.write_text(json.dumps(ENTRIES))
    load_topics(path)
    path.write_text(json.dumps([dict(ENTRIES[0], rule="ti:robots"), ENTRIES[1]]))

    with django_capture_on_commit_callbacks(execute=True):
        load_topics(path)

    assert sent == [(Topic.objects.get(slug="robot-learning").pk,)]


def test_the_demo_loader_seeds_without_background_retags(
    tmp_path, sent, django_capture_on_commit_callbacks
):
    path = tmp_path / "topics.json"
    path.write_text(json.dumps(ENTRIES))

    with django_capture_on_commit_callbacks(execute=True):
        load_topics(path, retag=False)

    assert sent == []
    assert [topic["retag_pending"] for topic in stored()] == [False, False]
    assert len(stored()) == len(ENTRIES)
