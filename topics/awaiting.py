"""Staff's "N awaiting review" on a topic page: a slot of the page rendered for
everyone (papers.slots), filled for each request like the follow button, and
registered by the app (topics.apps)."""

from __future__ import annotations

from django.db.models import Count
from django.db.models import Q
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import urlencode

from papers.slots import Reader
from topics.models import Topic
from topics.queue import awaiting_text


def awaiting_slot(reader: Reader, slug: str) -> str:
    """Staff only, on the shared topic page: "N awaiting review", linked to the
    topic's pending papers in the review queue; nothing for readers. Counted
    for each request (one query on the pending papers' index), not cached: a
    curator back from the queue sees what is left."""
    if not (reader.signed_in and reader.user.is_staff):
        return ""
    topic_id, count = _awaiting(slug)
    if not count:
        return ""
    url = reverse("admin:topics_reviewitem_changelist")
    query = urlencode({"topic__id__exact": topic_id, "pending__exact": 1})
    return format_html(
        '<a class="awaiting-review" href="{}?{}">{}</a>',
        url,
        query,
        awaiting_text(count),
    )


def _awaiting(slug: str) -> tuple[int, int]:
    # One query: the topic's id (for the queue's filter) with its count.
    pending = Count("review_items", filter=Q(review_items__pending=True))
    row = Topic.objects.filter(slug=slug).values_list("pk").annotate(n=pending)
    found = row.first()
    return (found[0], found[1]) if found else (0, 0)
