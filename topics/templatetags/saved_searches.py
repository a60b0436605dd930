"""The saved searches part of the settings page, drawn by this app so that
accounts does not import the apps built on it."""

from __future__ import annotations

from typing import Any

from django import template
from django.db.models import Count

from topics.models import SavedSearch
from topics.saved_searches import search_limit

register = template.Library()


@register.inclusion_tag("topics/saved_searches_panel.html", takes_context=True)
def saved_searches_settings(context: template.Context) -> dict[str, Any]:
    searches = list(
        SavedSearch.objects.filter(user=context["user"])
        .annotate(match_count=Count("matches"))
        .order_by("created_at", "pk")
    )
    return {
        "csrf_token": context.get("csrf_token"),
        "searches": searches,
        "limit": search_limit(),
        "syntaxes": SavedSearch.Syntax.choices,
    }
