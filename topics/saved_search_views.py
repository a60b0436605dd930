"""The saved searches' forms, from the search page and the settings page: save,
edit and delete, each a plain POST that answers with a redirect and a message
(no JavaScript needed); a refusal says why in the form, which comes back open
holding what was typed (core.refused). The service is topics.saved_searches."""

from __future__ import annotations

from urllib.parse import parse_qs
from urllib.parse import urlsplit

from django.contrib import messages
from django.http import HttpRequest
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from accounts.requests import signed_in
from accounts.toggles import login_required_back
from accounts.toggles import safe_next
from core.refused import keep_refused
from topics.models import SavedSearch
from topics.saved_searches import SavedSearchError
from topics.saved_searches import create_search
from topics.saved_searches import delete_search
from topics.saved_searches import update_search

# The fields a refused form gives back to the page it returns to.
FIELDS = ("name", "query", "syntax")


def _settings_url() -> str:
    return reverse("accounts:settings") + "#searches-heading"


def _settings() -> HttpResponse:
    return redirect(_settings_url())


@require_POST
@login_required_back("accounts:settings")
def create(request: HttpRequest) -> HttpResponse:
    try:
        search = create_search(
            signed_in(request),
            name=request.POST.get("name", ""),
            query=request.POST.get("query", ""),
            syntax=request.POST.get("syntax", SavedSearch.Syntax.SEARCH),
        )
    except SavedSearchError as exc:
        # Said in the form, which comes back open with what was typed.
        keep_refused(request, FIELDS, f"Not saved: {exc}.")
        return redirect(safe_next(request, reverse("search")))
    # Back to the results the reader was reading, which now say under which
    # name they are saved and link the settings that list the searches; said
    # here where they do not (the settings page, or a query edited in the form).
    destination = safe_next(request, _settings_url())
    if not _results_of(search, destination):
        messages.success(
            request,
            f"Saved “{search.name}”: its new papers will come to your feed and digest.",
        )
    return redirect(destination)


def _results_of(search: SavedSearch, address: str) -> bool:
    """Whether the page at this address is this search's results, which say
    under which name it is saved (papers.slots)."""
    parts = urlsplit(address)
    asked = parse_qs(parts.query).get("q", [""])[0].strip()
    return (
        parts.path == reverse("search")
        and search.syntax == SavedSearch.Syntax.SEARCH
        and asked == search.query.strip()
    )


@require_POST
@login_required_back("accounts:settings")
def update(request: HttpRequest, pk: int) -> HttpResponse:
    search = get_object_or_404(SavedSearch, pk=pk, user=signed_in(request))
    try:
        update_search(
            search,
            name=request.POST.get("name"),
            query=request.POST.get("query"),
            syntax=request.POST.get("syntax"),
        )
    except SavedSearchError as exc:
        keep_refused(request, FIELDS, f"Not changed: {exc}.")
    else:
        messages.success(request, f"Your search “{search.name}” is saved.")
    return _settings()


@require_POST
@login_required_back("accounts:settings")
def delete(request: HttpRequest, pk: int) -> HttpResponse:
    search = get_object_or_404(SavedSearch, pk=pk, user=signed_in(request))
    delete_search(search)
    messages.success(request, f"Your search “{search.name}” is deleted.")
    return _settings()
