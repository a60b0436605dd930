from __future__ import annotations

from django.core.paginator import Paginator
from django.http import HttpRequest
from django.http import HttpResponse
from django.shortcuts import render

from papers.query import last_harvest
from papers.query import latest_papers
from topics.momentum import FLOOR
from topics.query import active_topics
from topics.query import get_active_topic
from topics.query import related_topics
from topics.query import topic_papers
from topics.query import trending_topics
from topics.query import with_figures

PAPERS_PER_PAGE = 25


def home(request: HttpRequest) -> HttpResponse:
    context = {
        "topics": trending_topics(limit=12),
        "papers": latest_papers()[:PAPERS_PER_PAGE],
        "last_harvest": last_harvest(),
    }
    return render(request, "topics/home.html", context)


def topic_list(request: HttpRequest) -> HttpResponse:
    topics = with_figures(active_topics().order_by("name"))
    return render(request, "topics/list.html", {"topics": topics})


def topic_detail(request: HttpRequest, slug: str) -> HttpResponse:
    topic = get_active_topic(slug)
    page = Paginator(topic_papers(topic), PAPERS_PER_PAGE).get_page(
        request.GET.get("page")
    )
    context = {
        "topic": topic,
        "page": page,
        "related": related_topics(topic),
        "momentum": with_figures([topic])[0].figures,
        "floor": FLOOR,
    }
    return render(request, "topics/detail.html", context)
