from __future__ import annotations

from datetime import date

from django.contrib.syndication.views import Feed
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest
from django.http import HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.feedgenerator import Atom1Feed

from accounts.models import User
from accounts.toggles import toggle
from papers.library import with_saved_flag
from papers.models import Paper
from papers.pagecache import cache_for_visitors
from papers.query import last_harvest
from papers.query import latest_papers
from topics.following import set_following
from topics.following import with_follow_flag
from topics.models import Follow
from topics.models import Topic
from topics.momentum import FLOOR
from topics.query import active_topics
from topics.query import feed_papers
from topics.query import get_active_topic
from topics.query import related_topics
from topics.query import topic_papers
from topics.query import trending_topics
from topics.query import with_figures

PAPERS_PER_PAGE = 25
FEED_ITEMS = 50


@cache_for_visitors
def home(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return _reader_feed(request, request.user)
    context = {
        "topics": trending_topics(limit=12),
        "papers": latest_papers()[:PAPERS_PER_PAGE],
        "last_harvest": last_harvest(),
    }
    return render(request, "topics/home.html", context)


def _reader_feed(request: HttpRequest, user: User) -> HttpResponse:
    """New papers from the topics the user follows; what they saw before is marked."""
    page = _page(request, with_saved_flag(feed_papers(user), user))
    seen_before = user.feed_visited_at
    if page.number == 1:
        User.objects.filter(pk=user.pk).update(feed_visited_at=timezone.now())
    followed = with_figures(
        with_follow_flag(active_topics().filter(follows__user=user), user).order_by(
            "name"
        )
    )
    context = {
        "page": page,
        "seen_before": seen_before,
        "followed": followed,
        "suggested": [] if followed else trending_topics(limit=8),
        "last_harvest": last_harvest(),
    }
    return render(request, "topics/feed.html", context)


@cache_for_visitors
def topic_list(request: HttpRequest) -> HttpResponse:
    topics = with_follow_flag(active_topics(), request.user).order_by("name")
    return render(request, "topics/list.html", {"topics": with_figures(topics)})


@cache_for_visitors
def topic_detail(request: HttpRequest, slug: str) -> HttpResponse:
    topic = get_active_topic(slug, request.user)
    week, week_error = _week(request)
    papers = with_saved_flag(topic_papers(topic, week), request.user)
    context = {
        "topic": topic,
        "page": _page(request, papers),
        "week": week,
        "week_error": week_error,
        "related": related_topics(topic),
        "momentum": with_figures([topic])[0].figures,
        "floor": FLOOR,
    }
    return render(request, "topics/detail.html", context)


def follow(request: HttpRequest, slug: str) -> HttpResponse:
    topic = get_active_topic(slug, request.user)
    return toggle(
        request,
        is_on=lambda: Follow.objects.filter(user=request.user, topic=topic).exists(),
        set_on=lambda on: set_following(request.user, topic, on),
        question=f"Follow {topic.name}?"
        if request.GET.get("on") != "0"
        else f"Unfollow {topic.name}?",
        fallback=topic.get_absolute_url(),
    )


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
        return paper.title

    def item_description(self, paper: Paper) -> str:
        return paper.abstract

    def item_author_name(self, paper: Paper) -> str:
        return paper.author_names

    def item_pubdate(self, paper: Paper):
        return paper.published

    def item_updateddate(self, paper: Paper):
        return paper.updated


def _page(request: HttpRequest, papers: QuerySet[Paper]):
    return Paginator(papers, PAPERS_PER_PAGE).get_page(request.GET.get("page"))


def _week(request: HttpRequest) -> tuple[date | None, str]:
    """The `?week=YYYY-MM-DD` filter, or None and why it could not be read."""
    raw = request.GET.get("week", "")
    if not raw:
        return None, ""
    try:
        return date.fromisoformat(raw), ""
    except ValueError:
        return None, f"“{raw[:40]}” is not a date (YYYY-MM-DD); showing all weeks."
