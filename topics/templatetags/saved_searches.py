"""The saved searches part of the settings page, drawn by this app so that
accounts does not import the apps built on it."""

from __future__ import annotations

from typing import Any

from django import template
from django.db.models import Count
from django.urls import reverse

from core.refused import take_refused
from topics.models import SavedSearch
from topics.saved_search_views import FIELDS
from topics.saved_searches import MATCHES_KEPT
from topics.saved_searches import search_limit
from topics.saved_searches import searches_for_nothing

register = template.Library()


@register.inclusion_tag("topics/saved_searches_panel.html", takes_context=True)
def saved_searches_settings(context: template.Context) -> dict[str, Any]:
    searches = list(
        SavedSearch.objects.filter(user=context["user"])
        .annotate(match_count=Count("matches"))
        .order_by("created_at", "pk")
    )
    # A refused edit or new search comes back open (its values hold the
    # error), holding what was typed.
    refused_at, typed = take_refused(context["request"])
    forms = []
    for search in searches:
        refused = refused_at == reverse("saved_search_update", args=[search.pk])
        values = {field: getattr(search, field) for field in FIELDS}
        forms.append(
            {
                "values": typed if refused else values,
                "prefix": f"search-{search.pk}",
                "for_nothing": searches_for_nothing(search.query, search.syntax),
            }
        )
    refused = refused_at == reverse("saved_search_create")
    return {
        "csrf_token": context.get("csrf_token"),
        "searches": list(zip(searches, forms, strict=True)),
        "new_form": typed if refused else {},
        "limit": search_limit(),
        # Saving keeps the newest this many matches: a count of that many or
        # more is what it holds, and at least that many match.
        "kept": MATCHES_KEPT,
    }
