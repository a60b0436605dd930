from __future__ import annotations

from topics.models import Topic


def make_topic(
    name: str = "RL for LLM Agents",
    rule: str = 'abs:"reinforcement learning" AND abs:agent',
    **fields: object,
) -> Topic:
    slug = fields.pop("slug", None) or name.lower().replace(" ", "-")
    return Topic.objects.create(name=name, slug=slug, rule=rule, **fields)
