"""Read-side queries over topics, shared by pages, API and digests."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Count
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from papers.models import Paper
from papers.query import with_listing_data
from topics.models import PaperTopic
from topics.models import Topic
from topics.momentum import Momentum

RELATED_SHOWN = 6


def active_topics() -> QuerySet[Topic]:
    """Active topics with their paper counts and stored momentum."""
    return (
        Topic.objects.filter(is_active=True)
        .select_related("momentum")
        .annotate(paper_count=Count("paper_topics"))
    )


def with_figures(topics: Iterable[Topic]) -> list[Topic]:
    """The topics, each with `.figures`: its Momentum, or None before any count."""
    topics = list(topics)
    for topic in topics:
        stored = getattr(topic, "momentum", None)
        topic.figures = Momentum.stored(stored) if stored else None  # type: ignore[attr-defined]
    return topics


def trending_topics(limit: int = 10) -> list[Topic]:
    """Active topics growing fastest, by momentum.trend_score (see topics.momentum)."""
    return with_figures(
        active_topics()
        .filter(momentum__trend_score__gt=0)
        .order_by("-momentum__trend_score", "name")[:limit]
    )


def get_active_topic(slug: str) -> Topic:
    return get_object_or_404(
        Topic.objects.filter(is_active=True).select_related("momentum"), slug=slug
    )


def topic_papers(topic: Topic) -> QuerySet[Paper]:
    """The topic's papers, newest first, with everything a paper row shows."""
    return with_listing_data(
        Paper.objects.filter(paper_topics__topic=topic).order_by(
            "-first_announced", "-id"
        )
    )


def related_topics(topic: Topic, limit: int = RELATED_SHOWN) -> list[Topic]:
    """Curated related topics first, then the active topics sharing the most papers."""
    curated = list(topic.related.filter(is_active=True))
    shared = (
        PaperTopic.objects.filter(
            paper__paper_topics__topic=topic, topic__is_active=True
        )
        .exclude(topic=topic)
        .exclude(topic__in=curated)
        .values("topic")
        .annotate(shared=Count("id"))
        .order_by("-shared", "topic")[: max(limit - len(curated), 0)]
    )
    by_id = {row["topic"]: row["shared"] for row in shared}
    others = sorted(
        Topic.objects.filter(pk__in=by_id),
        key=lambda other: (-by_id[other.pk], other.name),
    )
    return (curated + others)[:limit]
