"""The paper list's filters, as the API reads them.

The filtering itself is papers.search.search_papers, which the search page uses
too; this only validates and documents the query parameters (a FilterSet would
filter a second way).
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from core.api.fields import SLUG_PATTERN
from core.api.fields import QueryBoolean
from core.api.fields import QueryDate
from core.api.fields import Text
from papers.models import Category
from papers.search import MAX_QUERY_LENGTH

# papers.forms.CATEGORY_CODE, spelled for the schema too: both cases without a
# flag (a pattern's flags are lost in the schema), \Z rather than $.
CATEGORY_PATTERN = r"\A[A-Za-z-]+(\.[A-Za-z-]+)?\Z"


class PaperFilterSerializer(serializers.Serializer):
    q = Text(
        required=False,
        allow_blank=True,
        max_length=MAX_QUERY_LENGTH,
        help_text='Text search over title, abstract and authors: words, "phrases", '
        "-excluded, or. Results stay newest first.",
    )
    topic = Text(
        pattern=SLUG_PATTERN,
        required=False,
        max_length=120,
        help_text="An active topic's slug; any other slug is a 404 (as at "
        "topics/<slug>/).",
    )
    category = Text(
        pattern=CATEGORY_PATTERN,
        required=False,
        max_length=32,
        help_text="An arXiv category such as cs.LG (any of the paper's categories), "
        "as arXiv writes it; one no paper held has is a 404.",
    )
    announced_from = QueryDate(
        required=False, help_text="First announced on or after this day (YYYY-MM-DD)."
    )
    announced_to = QueryDate(
        required=False,
        help_text="First announced on or before this day (YYYY-MM-DD); before "
        "announced_from is a 400.",
    )
    saved = QueryBoolean(
        required=False,
        help_text="true: only papers the caller saved; false: only those they did "
        "not. Needs authentication (401 without).",
    )

    def validate_category(self, code: str) -> str:
        # A 404, as for a topic: an empty list would read "nothing new there".
        if not Category.objects.filter(code=code).exists():
            raise serializers.ValidationError(
                f"No paper held has the category “{code}” (arXiv writes them "
                "like cs.LG).",
                code="does_not_exist",
            )
        return code

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
