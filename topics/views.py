from __future__ import annotations

from django.core.paginator import Paginator
from django.http import HttpRequest
from django.http import HttpResponse
from django.shortcuts import render

from papers.query import last_harvest
from papers.query import latest_papers
from topics.query import active_topics
from topics.query import get_active_topic
from topics.query import topic_papers

PAPERS_PER_PAGE = 25


def home(request: HttpRequest) -> HttpResponse:
    topics = active_topics().order_by("-paper_count")[:12]
    papers = latest_papers()[:PAPERS_PER_PAGE]
    return render(
        request,
        "topics/home.html",
        {"topics": topics, "papers": papers, "last_harvest": last_harvest()},
    )


def topic_list(request: HttpRequest) -> HttpResponse:
    return render(
        request, "topics/list.html", {"topics": active_topics().order_by("name")}
    )


def topic_detail(request: HttpRequest, slug: str) -> HttpResponse:
    topic = get_active_topic(slug)
    page = Paginator(topic_papers(topic), PAPERS_PER_PAGE).get_page(
        request.GET.get("page")
    )
    related = topic.related.filter(is_active=True)
    return render(
        request,
        "topics/detail.html",
        {"topic": topic, "page": page, "related": related},
    )
