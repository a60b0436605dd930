from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from datetime import timedelta

from papers.ingest.records import PaperRecord
from tests.papers.factories import paper_record
from topics.models import Topic


def make_topic(
    name: str = "RL for LLM Agents",
    rule: str = 'abs:"reinforcement learning" AND abs:agent',
    **fields: object,
) -> Topic:
    slug = fields.pop("slug", None) or name.lower().replace(" ", "-")
    return Topic.objects.create(name=name, slug=slug, rule=rule, **fields)


def announced_papers(
    as_of: date, weekly: Sequence[int], *, title: str, series: int = 1
) -> list[PaperRecord]:
    """Records first announced in the seven-day weeks ending as_of (counts oldest
    first), each week's papers spread over its five announcement days; `series`
    keeps the ids of several calls apart."""
    first = as_of - timedelta(days=7 * len(weekly) - 1)
    records = []
    for week, count in enumerate(weekly):
        span = (first + timedelta(days=7 * week + n) for n in range(7))
        days = [day for day in span if day.weekday() < 5]
        records += [
            paper_record(
                f"{2600 + week}.{series}{n:04d}",
                title=title,
                announced=days[n % len(days)],
                announce_type="new",
            )
            for n in range(count)
        ]
    return records
