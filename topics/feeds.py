"""A topic's latest papers as an Atom feed, for feed readers."""

from __future__ import annotations

from django.contrib.syndication.views import Feed
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.feedgenerator import Atom1Feed

from papers.latex import latex_to_text
from papers.models import Paper
from topics.models import Topic
from topics.query import get_active_topic

FEED_ITEMS = 50


class TopicFeed(Feed):
    """The topic's latest papers as Atom, for feed readers."""

    feed_type = Atom1Feed

    def get_object(self, request: HttpRequest, slug: str) -> Topic:
        return get_active_topic(slug)

    def title(self, topic: Topic) -> str:
        return f"{topic.name} · Momentum"

    def subtitle(self, topic: Topic) -> str:
        return topic.description

    def link(self, topic: Topic) -> str:
        return topic.get_absolute_url()

    def items(self, topic: Topic) -> QuerySet[Paper]:
        return (
            Paper.objects.filter(paper_topics__topic=topic)
            .order_by("-first_announced", "-id")
            .only(
                "arxiv_id", "title", "abstract", "author_names", "published", "updated"
            )[:FEED_ITEMS]
        )

    def item_title(self, paper: Paper) -> str:
        return latex_to_text(paper.title)

    def item_description(self, paper: Paper) -> str:
        return paper.abstract

    def item_author_name(self, paper: Paper) -> str:
        return paper.author_names

    def item_pubdate(self, paper: Paper):
        return paper.published

    def item_updateddate(self, paper: Paper):
        return paper.updated
