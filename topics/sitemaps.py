"""The sitemap's sections of topics (papers.sitemaps has the rest)."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Max
from django.db.models import OuterRef
from django.db.models import QuerySet
from django.db.models import Subquery
from django.db.models.functions import Coalesce
from django.db.models.functions import Greatest
from django.urls import reverse

from papers.routes import address
from papers.sitemaps import SiteSitemap
from topics.models import PaperTopic
from topics.models import Topic
from topics.models import TopicDate


class TopicSitemap(SiteSitemap):
    """Active topics (an inactive one's page is a 404). A topic's page changes
    when a curator edits it, when papers join it and when papers leave it or
    change why they are in it (its TopicDate), so its lastmod is the latest of
    the three. A few hundred topics at most: Django's Paginator pages them, and
    a page reads its topics' memberships' dates (no index holds a topic's
    newest)."""

    def items(self) -> QuerySet[Topic, tuple[str, datetime]]:
        # A subquery, not a join: the Paginator's count leaves it out.
        joined = PaperTopic.objects.filter(topic=OuterRef("pk")).order_by("-created_at")
        newest_paper = Coalesce(Subquery(joined.values("created_at")[:1]), "updated_at")
        listed = Coalesce("page_date__changed_at", "updated_at")
        return (
            Topic.objects.filter(is_active=True)
            .annotate(lastmod=Greatest("updated_at", newest_paper, listed))
            .order_by("pk")
            .values_list("slug", "lastmod")
        )

    def location(self, item: tuple[str, datetime]) -> str:
        return address("topics:detail", "slug", item[0])

    def lastmod(self, item: tuple[str, datetime]) -> datetime:
        return item[1]

    def get_latest_lastmod(self) -> datetime | None:
        active = Topic.objects.filter(is_active=True)
        edited = active.aggregate(latest=Max("updated_at"))["latest"]
        joined = PaperTopic.objects.filter(topic__in=active).aggregate(
            latest=Max("created_at")
        )["latest"]
        listed = TopicDate.objects.filter(topic__in=active).aggregate(
            latest=Max("changed_at")
        )["latest"]
        return max((day for day in (edited, joined, listed) if day), default=None)


class PageSitemap(SiteSitemap):
    """The pages a visitor starts from: the home page and the lists of topics.
    They change with every harvest; no date says so, so they have no lastmod."""

    def items(self) -> list[str]:
        return ["home", "topics:list", "topics:trending"]

    def location(self, item: str) -> str:
        return reverse(item)
