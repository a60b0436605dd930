"""How fast a topic grows: papers first announced in the last four weeks, against the
four weeks before, and as a share of everything announced in those four weeks.

Windows end at the latest announcement day that has been harvested (the "as of"
day), not at today: a stalled harvest must not read as every topic collapsing,
and a database loaded from older feeds still shows true figures for its period.
Weeks are the seven-day spans ending on the as-of day, so the last four bars of
the chart are exactly the "last four weeks".

Figures are computed for all topics with one aggregate query and stored in
TopicMomentum, which pages read in O(1); `refresh_momentum()` runs after every
ingest run and re-tag.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from datetime import timedelta

from django.db import transaction
from django.db.models import Count
from django.db.models import Max
from django.utils import timezone

from papers.models import Paper
from papers.pagecache import content_changed
from topics.models import PaperTopic
from topics.models import Topic
from topics.models import TopicMomentum

WINDOW_WEEKS = 4
CHART_WEEKS = 16
# Below this many papers in the two windows together, a percentage says nothing.
FLOOR = 10
# Trending ranks by growth with this many papers added to both windows, so a
# topic going from 1 to 4 papers does not outrank one going from 60 to 120.
TRENDING_PRIOR = 5


@dataclass(frozen=True)
class Momentum:
    as_of: date
    weekly: tuple[int, ...]  # oldest first; the last is the week ending as_of
    all_recent: int  # every paper first announced in the last four weeks

    @property
    def recent(self) -> int:
        return sum(self.weekly[-WINDOW_WEEKS:])

    @property
    def previous(self) -> int:
        return sum(self.weekly[-2 * WINDOW_WEEKS : -WINDOW_WEEKS])

    @property
    def enough(self) -> bool:
        return self.recent + self.previous >= FLOOR

    @property
    def change(self) -> float | None:
        """Percent change against the four weeks before; None when that was zero."""
        if not self.previous:
            return None
        return 100.0 * (self.recent - self.previous) / self.previous

    @property
    def change_size(self) -> float | None:
        """The change without its sign, for "up 12%" and "down 12%"."""
        return None if self.change is None else abs(self.change)

    @property
    def share(self) -> float:
        """Percent of all new papers of the last four weeks."""
        return 100.0 * self.recent / self.all_recent if self.all_recent else 0.0

    @property
    def trend_score(self) -> float:
        return (self.recent + TRENDING_PRIOR) / (self.previous + TRENDING_PRIOR)

    @classmethod
    def stored(cls, row: TopicMomentum) -> Momentum:
        return cls(row.as_of, tuple(row.weekly), row.all_recent)

    @property
    def weeks(self) -> list[tuple[date, int]]:
        """(first day, count) of each chart week, oldest first."""
        first = self.as_of - timedelta(days=7 * len(self.weekly) - 1)
        return [(first + timedelta(days=7 * i), n) for i, n in enumerate(self.weekly)]


def week_index(day: date, as_of: date) -> int:
    """0 for the seven days ending as_of, 1 for the seven before, and so on."""
    return (as_of - day).days // 7


def bucket(
    day_counts: dict[date, int], as_of: date, weeks: int = CHART_WEEKS
) -> tuple[int, ...]:
    """Daily counts summed into `weeks` seven-day spans ending as_of, oldest first."""
    totals = [0] * weeks
    for day, count in day_counts.items():
        index = week_index(day, as_of)
        if 0 <= index < weeks:
            totals[weeks - 1 - index] += count
    return tuple(totals)


def latest_announcement_day() -> date | None:
    return Paper.objects.aggregate(day=Max("first_announced"))["day"]


def compute_all(topic_ids: Sequence[int] | None = None) -> dict[int, Momentum]:
    """Momentum of every topic (or of those given), from one aggregate query each
    for topics and for all papers."""
    as_of = latest_announcement_day()
    if as_of is None:
        return {}
    start = as_of - timedelta(days=7 * CHART_WEEKS - 1)
    tags = PaperTopic.objects.filter(
        paper__first_announced__gte=start, paper__first_announced__lte=as_of
    )
    if topic_ids is not None:
        tags = tags.filter(topic_id__in=topic_ids)
    per_topic: dict[int, dict[date, int]] = defaultdict(dict)
    for topic_id, day, count in tags.values_list(
        "topic_id", "paper__first_announced"
    ).annotate(n=Count("id")):
        per_topic[topic_id][day] = count
    all_recent = Paper.objects.filter(
        first_announced__gt=as_of - timedelta(days=7 * WINDOW_WEEKS),
        first_announced__lte=as_of,
    ).count()
    ids = (
        topic_ids
        if topic_ids is not None
        else Topic.objects.values_list("pk", flat=True)
    )
    return {
        topic_id: Momentum(
            as_of, bucket(per_topic.get(topic_id, {}), as_of), all_recent
        )
        for topic_id in ids
    }


@transaction.atomic
def refresh_momentum() -> int:
    """Recompute and store every topic's momentum; idempotent. Returns topics stored."""
    figures = compute_all()
    content_changed()
    now = timezone.now()
    rows = [
        TopicMomentum(
            topic_id=topic_id,
            computed_at=now,
            as_of=m.as_of,
            weekly=list(m.weekly),
            all_recent=m.all_recent,
            recent=m.recent,
            previous=m.previous,
            trend_score=m.trend_score if m.enough else 0.0,
        )
        for topic_id, m in figures.items()
    ]
    TopicMomentum.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["topic"],
        update_fields=[
            "as_of",
            "weekly",
            "all_recent",
            "recent",
            "previous",
            "trend_score",
        ],
    )
    return len(rows)
