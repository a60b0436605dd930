"""Read-side queries over topics, shared by pages, API and digests."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from datetime import date
from datetime import timedelta
from functools import wraps
from typing import Any

from django.db.models import Count
from django.db.models import Exists
from django.db.models import F
from django.db.models import OuterRef
from django.db.models import Q
from django.db.models import QuerySet
from django.db.models import Subquery
from django.db.models.functions import Coalesce
from django.http import Http404
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.shortcuts import redirect
from django.urls import reverse

from core.api.errors import missing
from papers.models import Paper
from topics.models import PaperTopic
from topics.models import Topic
from topics.models import TopicRelation
from topics.momentum import Momentum

RELATED_SHOWN = 6


def active_topics() -> QuerySet[Topic]:
    """Active topics with their paper counts and stored momentum."""
    return all_topics().filter(is_active=True)


def all_topics() -> QuerySet[Topic]:
    """Every topic, active or not, as active_topics() has them (for staff)."""
    return with_paper_count(Topic.objects.all()).select_related("momentum")


def with_paper_count(topics: QuerySet[Topic]) -> QuerySet[Topic]:
    """Annotate `paper_count`, as a subquery per topic along the (topic, paper)
    index: a join with GROUP BY would aggregate every tag of every topic first
    (and multiply any other count on the topics)."""
    papers = (
        PaperTopic.objects.filter(topic=OuterRef("pk"))
        .order_by()
        .values("topic")
        .annotate(count=Count("*"))
        .values("count")
    )
    return topics.annotate(paper_count=Coalesce(Subquery(papers), 0))


def with_figures(topics: Iterable[Topic]) -> list[Topic]:
    """The topics, each with `.figures`: its Momentum, or None before any count."""
    topics = list(topics)
    for topic in topics:
        stored = getattr(topic, "momentum", None)
        topic.figures = Momentum.stored(stored) if stored else None  # type: ignore[attr-defined]
    return topics


def trending_topics(limit: int = 10) -> list[Topic]:
    """Active topics whose share of new papers grows fastest, by
    momentum.trend_score (see topics.momentum); only those rising beyond chance."""
    scored = active_topics().filter(momentum__trend_score__gt=0)
    topics = with_figures(scored.order_by("-momentum__trend_score", "name"))
    return [t for t in topics if t.figures.trend == "up"][:limit]  # type: ignore[attr-defined]


def suggested_topics(limit: int = 8) -> list[Topic]:
    """Topics to offer a reader who follows none: those rising, then the
    busiest of the last four weeks."""
    rising = trending_topics(limit)
    shown = {topic.pk for topic in rising}
    others = [
        topic
        for topic in with_figures(active_topics().order_by("name"))
        if topic.pk not in shown and topic.figures is not None  # type: ignore[attr-defined]
    ]
    others.sort(key=lambda topic: -topic.figures.recent)  # type: ignore[attr-defined]
    return [*rising, *others][:limit]


def topics_by_trend() -> list[Topic]:
    """Every active topic, rising first, falling last, then those with too little
    history or too few papers to rank (no trend_score), each with `figures`."""
    topics = active_topics().order_by(
        F("momentum__trend_score").desc(nulls_last=True), "name"
    )
    return with_figures(topics)


def get_active_topic(slug: str) -> Topic:
    """The active topic with this slug, or 404. Its momentum, follower count
    and papers are parts of its page cached apart (topics.views), read only
    when they change: not joined here."""
    return get_object_or_404(Topic, slug=slug, is_active=True)


def topic_at(slug: str) -> Topic:
    """The topic, active or not, at this slug or at a former one of it (a
    merged-away topic's, or its own before a new slug); else 404."""
    topic = (
        Topic.objects.filter(slug=slug).first()
        or Topic.objects.filter(aliases__slug=slug).first()
    )
    if topic is None:
        raise Http404(missing("topic", "slug", slug))
    return topic


def active_topic_at(slug: str) -> Topic:
    """The active topic at this slug or at a former one of it (a page open
    from before a new slug or a merge), or 404."""
    topic = topic_at(slug)
    if not topic.is_active:
        raise Http404(missing("topic", "slug", slug))
    return topic


def merged_into(slug: str) -> Topic | None:
    """The active topic a merged-away topic's slug now leads to, if any."""
    return Topic.objects.filter(is_active=True, aliases__slug=slug).only("slug").first()


def follow_merges(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A topic's page, feed or ask page, or its API reads, at the slug of a
    topic merged into another redirects to the same view of that one for good,
    query string and all (links, feeds and clients keep working). Wraps a view
    or a viewset's method: the request is its last positional argument."""

    @wraps(view)
    def wrapped(*args: Any, slug: str, **kwargs: Any) -> HttpResponse:
        try:
            return view(*args, slug=slug, **kwargs)
        except Http404:
            target = merged_into(slug)
            if target is None:
                raise
        request = args[-1]
        match = request.resolver_match
        url = reverse(match.view_name, kwargs={**match.kwargs, "slug": target.slug})
        query = request.META.get("QUERY_STRING")
        return redirect(f"{url}?{query}" if query else url, permanent=True)

    return wrapped


def topic_papers(topic: Topic, week: date | None = None) -> QuerySet[Paper]:
    """The topic's papers, newest first (rows come from papers.rows); with
    `week`, only those first announced in the seven days from it."""
    papers = Paper.objects.filter(paper_topics__topic=topic)
    if week is not None:
        papers = papers.filter(
            first_announced__gte=week, first_announced__lt=week + timedelta(days=7)
        )
    return papers.order_by("-first_announced", "-id")


def followed_topics(user_id: Any) -> tuple[list[tuple[int, str]], int]:
    """(id, slug) of the active topics the reader follows, by slug, and how
    many they follow that the curators paused (deactivated)."""
    follows = Topic.objects.filter(follows__user_id=user_id).order_by("slug")
    followed = follows.values_list("pk", "slug", "is_active")
    active = [(pk, slug) for pk, slug, is_active in followed if is_active]
    return active, len(followed) - len(active)


def related_topics(topic: Topic, limit: int = RELATED_SHOWN) -> list[Topic]:
    """Curated related topics first, then the active topics sharing the most
    papers, as the momentum refresh counted them (TopicRelation); one query."""
    curated = Topic.related.through.objects.filter(
        from_topic=topic, to_topic=OuterRef("pk")
    )
    shared = TopicRelation.objects.filter(topic=topic, other=OuterRef("pk"))
    return list(
        Topic.objects.filter(is_active=True)
        .exclude(pk=topic.pk)
        .annotate(
            curated=Exists(curated),
            shared=Coalesce(Subquery(shared.values("shared")[:1]), 0),
        )
        .filter(Q(curated=True) | Q(shared__gt=0))
        .order_by("-curated", "-shared", "name")
        # What the related block shows: a long rule or definition each is not.
        .only("name", "slug")[:limit]
    )
