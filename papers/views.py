from __future__ import annotations

from django.http import HttpRequest
from django.http import HttpResponse
from django.shortcuts import render

from papers.query import get_paper


def paper_detail(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    paper = get_paper(arxiv_id)
    tags = paper.paper_topics.select_related("topic").order_by("topic__name")
    return render(request, "papers/detail.html", {"paper": paper, "tags": tags})
