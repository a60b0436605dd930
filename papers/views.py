from __future__ import annotations

from django.apps import apps
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Exists
from django.db.models import OuterRef
from django.db.models import QuerySet
from django.http import HttpRequest
from django.http import HttpResponse
from django.shortcuts import redirect
from django.shortcuts import render

from accounts.models import User
from accounts.toggles import toggle
from papers.bibtex import bibtex_entry
from papers.bibtex import bibtex_file
from papers.forms import SearchForm
from papers.library import saved_papers
from papers.library import set_saved
from papers.library import with_saved_flag
from papers.pagecache import cache_for_visitors
from papers.query import find_paper
from papers.query import get_paper
from papers.query import related_papers
from papers.query import with_listing_data
from papers.search import arxiv_id_query
from papers.search import highlight
from papers.search import search_papers

SEARCH_RESULTS_PER_PAGE = 25


PAPERS_PER_PAGE = 25


@cache_for_visitors
def paper_detail(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    paper = get_paper(arxiv_id, request.user)
    tags = paper.paper_topics.filter(topic__is_active=True)
    if request.user.is_authenticated:
        tags = _with_flagged(tags, request.user)
    tags = list(tags.select_related("topic").order_by("topic__name"))
    context = {
        "paper": paper,
        "tags": tags,
        "related": related_papers(paper, [tag.topic_id for tag in tags]),
        "bibtex": bibtex_entry(paper, (a.author.name for a in paper.authorships.all())),
    }
    return render(request, "papers/detail.html", context)


def _with_flagged(tags: QuerySet, user: User) -> QuerySet:
    """The paper's tags, each with `flagged`: whether the reader flagged it as
    not relevant. In the same query, so the page costs nothing more."""
    # Flags live in the topics app, which builds on this one: looked up by
    # name, not imported.
    flags = apps.get_model("topics", "RelevanceFlag").objects.filter(
        user=user, topic=OuterRef("topic_id"), paper=OuterRef("paper_id")
    )
    return tags.annotate(flagged=Exists(flags))


def save(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    paper = get_paper(arxiv_id)
    saving = request.GET.get("on") != "0"
    return toggle(
        request,
        is_on=lambda: paper.saves.filter(user=request.user).exists(),
        set_on=lambda on: set_saved(request.user, paper, on),
        question=f"{'Save' if saving else 'Remove'} “{paper.title}”"
        f"{'' if saving else ' from your saved papers'}?",
        fallback=paper.get_absolute_url(),
    )


@login_required
def saved(request: HttpRequest) -> HttpResponse:
    papers = with_saved_flag(
        with_listing_data(saved_papers(request.user)), request.user
    )
    page = Paginator(papers, PAPERS_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "papers/saved.html", {"page": page})


@login_required
def saved_bibtex(request: HttpRequest) -> HttpResponse:
    """BibTeX of the user's saved papers: all, or those ticked (`?id=` repeated)."""
    papers = saved_papers(request.user).select_related("primary_category")
    if chosen := request.GET.getlist("id"):
        papers = papers.filter(arxiv_id__in=chosen)
    response = HttpResponse(
        bibtex_file(papers), content_type="application/x-bibtex; charset=utf-8"
    )
    response["Content-Disposition"] = 'attachment; filename="momentum-saved.bib"'
    return response


def search(request: HttpRequest) -> HttpResponse:
    form = SearchForm(request.GET)
    context = {"form": form, "page": None, "missing_id": None}
    if form.is_valid() and form.has_criteria():
        text = form.cleaned_data["q"]
        if identifier := arxiv_id_query(text):
            # An id (or arXiv link) names one paper: open it, or say it is not here.
            arxiv_id, version = identifier
            if paper := find_paper(arxiv_id):
                return redirect(paper)
            context["missing_id"] = f"{arxiv_id}v{version}" if version else arxiv_id
        else:
            papers = search_papers(text, **form.filters())
            page = Paginator(
                with_saved_flag(papers, request.user), SEARCH_RESULTS_PER_PAGE
            ).get_page(request.GET.get("page"))
            page.object_list = highlight(page.object_list, text)
            context["page"] = page
    return render(request, "papers/search.html", context)
