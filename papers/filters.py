"""The paper list's filters, as the API reads them.

The filtering itself is papers.search.search_papers, which the search page uses
too; this only validates and documents the query parameters (a FilterSet would
filter a second way).
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from papers.forms import CATEGORY_CODE
from papers.search import MAX_QUERY_LENGTH


class PaperFilterSerializer(serializers.Serializer):
    q = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=MAX_QUERY_LENGTH,
        help_text='Text search over title, abstract and authors: words, "phrases", '
        "-excluded, or. Results stay newest first.",
    )
    topic = serializers.SlugField(
        required=False, max_length=120, help_text="A topic's slug."
    )
    category = serializers.RegexField(
        CATEGORY_CODE,
        required=False,
        max_length=32,
        help_text="An arXiv category such as cs.LG (any of the paper's categories).",
    )
    announced_from = serializers.DateField(
        required=False, help_text="First announced on or after this day (YYYY-MM-DD)."
    )
    announced_to = serializers.DateField(
        required=False, help_text="First announced on or before this day (YYYY-MM-DD)."
    )
    saved = serializers.BooleanField(
        required=False,
        help_text="true: only papers the caller saved; false: only those they did "
        "not. Needs authentication.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        start, end = attrs.get("announced_from"), attrs.get("announced_to")
        if start and end and start > end:
            raise serializers.ValidationError(
                {"announced_to": ["Must not be before announced_from."]}
            )
        return attrs


def search_arguments(filters: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of search_papers for these filters."""
    return {
        "topic": filters.get("topic"),
        "category": filters.get("category"),
        "date_from": filters.get("announced_from"),
        "date_to": filters.get("announced_to"),
    }
