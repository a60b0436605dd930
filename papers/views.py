from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from functools import partial
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Page
from django.core.paginator import Paginator
from django.http import Http404
from django.http import HttpRequest
from django.http import HttpResponse
from django.http import HttpResponseBadRequest
from django.http import HttpResponseForbidden
from django.http import JsonResponse
from django.http import StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect
from django.shortcuts import render
from django.views.decorators.http import require_http_methods
from django.views.decorators.http import require_POST

from accounts.requests import signed_in
from accounts.toggles import login_and_back
from accounts.toggles import safe_next
from accounts.toggles import toggle
from papers.authors import author_topics
from papers.authors import coauthors
from papers.authors import get_author
from papers.authors import papers_by
from papers.authors import set_following_author
from papers.bibtex import bibtex_entry
from papers.bibtex import bibtex_file
from papers.export import CSL_CONTENT_TYPE
from papers.export import RIS_CONTENT_TYPE
from papers.export import csl_json
from papers.export import ris_file
from papers.forms import SearchForm
from papers.forms import renamed_topic
from papers.highlight import highlight
from papers.ingest.records import ParseError
from papers.ingest.records import split_arxiv_id
from papers.ingest.records import versioned_id
from papers.latex import latex_to_text
from papers.library import MAX_SEEN_REPORTED
from papers.library import rating_of
from papers.library import record_seen
from papers.library import saved_papers
from papers.library import set_rating
from papers.library import set_saved
from papers.models import AuthorFollow
from papers.models import Paper
from papers.models import Rating
from papers.pagecache import Rendered
from papers.pagecache import cached_page
from papers.pagecache import render_shared
from papers.query import AUTHORS_BEFORE_FOLD
from papers.query import find_paper
from papers.query import get_paper
from papers.query import get_paper_row
from papers.query import home_category
from papers.query import related_papers
from papers.query import similar_ids
from papers.routes import address
from papers.rows import paper_rows
from papers.rows import search_rows
from papers.search import FIELD_PREFIX
from papers.search import arxiv_id_query
from papers.search import parse_query
from papers.search import search_papers
from papers.search import without_fields
from papers.slots import page_response
from papers.versions import NAMES
from papers.versions import SEARCH
from papers.versions import Dependencies
from papers.versions import members_key
from papers.versions import paper_key
from papers.versions import similar_key

SEARCH_RESULTS_PER_PAGE = 25
# A version number as a link writes it (ASCII digits: str.isdigit takes "²").
VERSION = re.compile(r"[1-9][0-9]{0,3}")


PAPERS_PER_PAGE = 25


def paper_detail(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    # Read as search reads it (HEP-TH/9901001 as arXiv writes it), or as an id
    # only (2607.1775, a number arXiv never gave, is not held, but well-formed).
    asked = arxiv_id_query(arxiv_id)
    if asked is None:
        try:
            asked = split_arxiv_id(arxiv_id)
        except ParseError as exc:
            raise Http404(str(exc)) from exc
    base_id, version = asked
    if arxiv_id != base_id and find_paper(base_id):
        # One page per paper held (a version, "arXiv:" or an arXiv path moves
        # there): it shows the newest version held, and says which was asked.
        page = address("papers:detail", "arxiv_id", base_id)
        return redirect(page + (f"?v={version}" if version else ""), permanent=True)
    scopes = [paper_key(base_id), similar_key(base_id), NAMES]
    render = partial(_paper_page, request, versioned_id(*asked))
    return page_response(request, cached_page(request, scopes, render))


def _paper_page(
    request: HttpRequest, arxiv_id: str, deps: Dependencies
) -> tuple[str, dict] | HttpResponse:
    try:
        paper = get_paper(arxiv_id)
    except Http404:
        # A well-formed id of a paper not held (a link with arxiv.org's path
        # on this site, a paper from before the harvests): where to read it.
        # Not cached: once harvested, the paper is served.
        missing_id = versioned_id(*split_arxiv_id(arxiv_id))
        return render(
            request, "papers/missing.html", {"missing_id": missing_id}, status=404
        )
    # Its tags in active topics, by topic name: read with it (with_listing_data).
    tags = list(paper.active_tags)  # type: ignore[attr-defined]
    similar = similar_ids(paper)
    # Similar papers' rows are theirs, related papers those of its topics, or
    # for a paper in none its category's newest, which any paper may change
    # (`search`): read after their versions.
    deps.add(paper_key(similar_id) for similar_id in similar)
    deps.add([members_key(tag.topic.slug) for tag in tags] if tags else [SEARCH])
    asked = request.GET.get("v", "")
    authors = paper.listed_authors  # type: ignore[attr-defined]
    context = {
        "paper": paper,
        "authors_shown": authors[:AUTHORS_BEFORE_FOLD],
        "authors_folded": authors[AUTHORS_BEFORE_FOLD:],
        # The version a link asked for (paper_detail), when it is not this one.
        "asked_version": int(asked)
        if VERSION.fullmatch(asked) and paper.version and int(asked) != paper.version
        else None,
        "tags": tags,
        "similar": paper_rows(similar),
        # Those shown as similar are not shown again.
        "related": related_papers(
            paper, [tag.topic_id for tag in tags], besides=similar
        ),
        "home_category": home_category(paper),
        "bibtex": bibtex_entry(paper),
    }
    return render_shared(request, "papers/detail.html", context), {}


def save(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    paper = get_paper_row(arxiv_id)
    saving = request.GET.get("on") != "0"
    return toggle(
        request,
        is_on=lambda: paper.saves.filter(user=signed_in(request)).exists(),
        set_on=lambda on: set_saved(signed_in(request), paper, on),
        question=f"{'Save' if saving else 'Remove'} “{latex_to_text(paper.title)}”"
        f"{'' if saving else ' from your saved papers'}?",
        fallback=paper.get_absolute_url(),
    )


# What a rating form posts, and what it means.
RATINGS: dict[str, int | None] = {"up": Rating.UP, "down": Rating.DOWN, "clear": None}
RATING_QUESTIONS = {
    "up": "Thumbs up for “{}”?",
    "down": "Thumbs down for “{}”?",
    "clear": "Clear your rating of “{}”?",
}


@require_http_methods(["GET", "POST"])
def rate(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    """A paper's thumbs up or down, `rating=up|down|clear`: the row's or the
    paper page's form (papers.slots), posted as is or by site.js in place
    (`Accept: application/json`, answered `{"rating": "up"|"down"|null}`). A
    visitor goes to log in and comes back to a one-click confirmation, as for
    Save (accounts.toggles)."""
    paper = get_paper_row(arxiv_id)
    json = "application/json" in request.headers.get("Accept", "")
    choice = (request.POST or request.GET).get("rating", "")
    if choice not in RATINGS:
        error = "rating must be up, down or clear."
        if json:
            return JsonResponse({"error": error}, status=400)
        if request.method == "GET":
            # The address opened as a page (typed, or cut from a link): the paper.
            return redirect(paper)
        return HttpResponseBadRequest(error)
    next_url = safe_next(request, paper.get_absolute_url())
    if not request.user.is_authenticated:
        login = login_and_back(request, {"rating": choice, "next": next_url})
        if json:
            return JsonResponse({"login_url": login}, status=401)
        return redirect(login)
    user = signed_in(request)
    if request.method != "POST":
        context = {
            "question": RATING_QUESTIONS[choice].format(latex_to_text(paper.title)),
            "action": request.path,
            "field": "rating",
            "value": choice,
            "already": rating_of(user, paper) == RATINGS[choice],
            "next": next_url,
        }
        return render(request, "confirm_toggle.html", context)
    set_rating(user, paper, RATINGS[choice])
    if json:
        return JsonResponse({"rating": None if choice == "clear" else choice})
    return redirect(next_url)


def author_detail(request: HttpRequest, author_id: int) -> HttpResponse:
    """An author's papers, newest first, their frequent co-authors and their
    topics. Any paper or tag may change them (`search`); topics' names show."""

    def render(deps: Dependencies) -> tuple[str, dict]:
        author = get_author(author_id)
        papers = papers_by([author]).values_list("arxiv_id", flat=True)
        page = Paginator(papers, PAPERS_PER_PAGE).get_page(request.GET.get("page"))
        context = {
            "author": author,
            # Its own address, for link previews and search engines: a later
            # page is a page of its own (past the end, the last), other
            # parameters are not (as a topic's, topics.views._address).
            "address": author.get_absolute_url()
            + (f"?page={page.number}" if page.number > 1 else ""),
            "page": page,
            "rows": paper_rows(list(page.object_list)),
            "coauthors": coauthors(author),
            "topics": author_topics(author),
        }
        return render_shared(request, "papers/author.html", context), {}

    page = cached_page(request, [SEARCH, NAMES], render)
    return page_response(request, page)


def follow_author(request: HttpRequest, author_id: int) -> HttpResponse:
    author = get_author(author_id)
    following = request.GET.get("on") != "0"
    return toggle(
        request,
        is_on=lambda: AuthorFollow.objects.filter(
            user=signed_in(request), author=author
        ).exists(),
        set_on=lambda on: set_following_author(signed_in(request), author, on),
        question=f"{'Follow' if following else 'Unfollow'} {author.name}?",
        fallback=author.get_absolute_url(),
    )


@require_POST
def seen(request: HttpRequest) -> HttpResponse:
    """The papers of the reader's feed they had on screen, as site.js reports
    them (`paper`, repeated: arXiv ids): marked seen on their later visits."""
    if not request.user.is_authenticated:
        return HttpResponseForbidden("Log in to keep what you have seen.")
    # PostgreSQL refuses NUL in text: an id holding one is no paper's.
    arxiv_ids = [id_ for id_ in request.POST.getlist("paper") if "\x00" not in id_]
    if len(arxiv_ids) > MAX_SEEN_REPORTED:
        return HttpResponseBadRequest(f"At most {MAX_SEEN_REPORTED} papers at once.")
    if arxiv_ids:
        record_seen(signed_in(request), arxiv_ids)
    return HttpResponse(status=204)


@login_required
def saved(request: HttpRequest) -> HttpResponse:
    """The reader's library; its rows are the shared ones (papers.rows)."""
    papers = saved_papers(signed_in(request)).values_list("arxiv_id", "title")
    page = Paginator(papers, PAPERS_PER_PAGE).get_page(request.GET.get("page"))
    rows = paper_rows([arxiv_id for arxiv_id, _ in page.object_list])
    context = {"page": page, "rows": zip(page.object_list, rows, strict=True)}
    html = render_shared(request, "papers/saved.html", context)
    return page_response(request, Rendered.of(html, {}, {}))


@login_required
def saved_bibtex(request: HttpRequest) -> HttpResponseBase:
    """BibTeX of the user's saved papers: all, or those ticked (`?id=` repeated)."""
    return _saved_export(
        request, bibtex_file, "application/x-bibtex; charset=utf-8", "bib"
    )


@login_required
def saved_ris(request: HttpRequest) -> HttpResponseBase:
    """RIS of the user's saved papers, chosen as for BibTeX."""
    return _saved_export(request, ris_file, RIS_CONTENT_TYPE, "ris")


@login_required
def saved_csl_json(request: HttpRequest) -> HttpResponseBase:
    """CSL-JSON of the user's saved papers, chosen as for BibTeX."""
    return _saved_export(request, csl_json, CSL_CONTENT_TYPE, "json")


EXPORT_CHUNK = 500


def _saved_export(
    request: HttpRequest,
    write: Callable[[Iterable[Paper]], Iterator[str]],
    content_type: str,
    extension: str,
) -> HttpResponseBase:
    """The saved papers (all, or those ticked: `?id=` repeated) as a download.
    The ticked papers' form sends `ticked`: with none ticked, or none of them
    saved now, it says so and exports nothing, rather than all of them as the
    links for all do, or a file of nothing."""
    chosen = request.GET.getlist("id")
    if request.GET.get("ticked") and not chosen:
        messages.info(
            request,
            "No paper is ticked: tick those you want, or export them all with the "
            "links below.",
        )
        return redirect("saved")
    papers = (
        saved_papers(signed_in(request))
        .defer("search_vector")
        .select_related("primary_category")
        .prefetch_related("categories")
    )
    if chosen:
        papers = papers.filter(arxiv_id__in=chosen)
        if request.GET.get("ticked") and not papers.exists():
            # Unsaved in place on the Saved page since it showed them.
            messages.info(
                request,
                "None of the ticked papers is saved now: here are those that are.",
            )
            return redirect("saved")
    # Read in chunks (each with its categories) and sent as it is written: a
    # library of thousands of papers holds no more than a chunk of them at once,
    # and its first bytes go out before its last paper is read.
    response = StreamingHttpResponse(
        write(papers.iterator(chunk_size=EXPORT_CHUNK)), content_type=content_type
    )
    filename = f"momentum-saved.{extension}"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def search(request: HttpRequest) -> HttpResponse:
    render = partial(_search, request)
    return page_response(request, cached_page(request, [SEARCH, NAMES], render))


def _fields_notice(request: HttpRequest, text: str, form: SearchForm) -> dict | None:
    """For a query holding arXiv's field prefixes (au:Levine), which search
    does not read: which they are, and the search they meant."""
    prefixes = sorted(
        {match.group(1).lower() + ":" for match in FIELD_PREFIX.finditer(text)}
    )
    if not prefixes:
        return None
    words, categories = without_fields(text)
    params = request.GET.copy()
    params.pop("page", None)
    params["q"] = words
    category = None
    if len(categories) == 1 and not form.cleaned_data.get("category"):
        category = params["category"] = categories[0]
    return {
        "prefixes": prefixes,
        "words": words,
        "category": category,
        "url": f"?{params.urlencode()}",
    }


def _search(
    request: HttpRequest, deps: Dependencies
) -> tuple[str, dict] | HttpResponse:
    form = SearchForm(request.GET, names_version=deps.versions.get(NAMES))
    if "topic" in form.errors and (now := renamed_topic(request.GET["topic"])):
        moved = request.GET.copy()
        moved["topic"] = now
        return redirect(f"{request.path}?{moved.urlencode()}", permanent=True)
    context: dict[str, Any] = {"form": form, "page": None, "missing_id": None}
    if form.is_valid() and form.has_criteria():
        text = form.cleaned_data["q"]
        if identifier := arxiv_id_query(text):
            # An id (or arXiv link) names one paper: open it, or say it is not here.
            if paper := find_paper(identifier[0]):
                version = f"?v={identifier[1]}" if identifier[1] else ""
                return redirect(paper.get_absolute_url() + version)
            context["missing_id"] = versioned_id(*identifier)
        else:
            context["fields"] = _fields_notice(request, text, form)
            # Words as common as "the", or no word at all: said, not "try fewer".
            context["nothing_to_search"] = bool(text.strip()) and not parse_query(text)
            results = search_papers(text, **form.filters())
            # Paginator only takes len() of SearchResults and slices it.
            page: Page[Paper] = Paginator(results, SEARCH_RESULTS_PER_PAGE).get_page(  # type: ignore[arg-type]
                request.GET.get("page")
            )
            page.object_list = highlight(page.object_list, text)
            context["page"] = page
            context["capped"] = results.capped
            shown = page.object_list
            context["rows"] = (
                search_rows(shown)
                if text.strip()
                else paper_rows([paper.arxiv_id for paper in shown])
            )
    return render_shared(request, "papers/search.html", context), {}
