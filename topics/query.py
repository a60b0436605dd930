"""Read-side queries over topics, shared by pages, API and digests."""

from __future__ import annotations

from django.db.models import Count
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from papers.models import Paper
from papers.query import with_listing_data
from topics.models import Topic


def active_topics() -> QuerySet[Topic]:
    """Active topics with their paper counts, by name."""
    return Topic.objects.filter(is_active=True).annotate(
        paper_count=Count("paper_topics")
    )


def get_active_topic(slug: str) -> Topic:
    return get_object_or_404(Topic.objects.filter(is_active=True), slug=slug)


def topic_papers(topic: Topic) -> QuerySet[Paper]:
    """The topic's papers, newest first, with everything a paper row shows."""
    return with_listing_data(
        Paper.objects.filter(paper_topics__topic=topic).order_by(
            "-first_announced", "-id"
        )
    )
