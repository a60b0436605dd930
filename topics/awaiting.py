"""Staff's "N awaiting review" and "N flagged by readers" on a topic page: a
slot of the page rendered for everyone (papers.slots), filled for each request
like the follow button, and registered by the app (topics.apps)."""

from __future__ import annotations

from django.db.models import Count
from django.db.models import Q
from django.utils.html import format_html_join

from papers.slots import Reader
from topics.models import Topic
from topics.queue import awaiting_text
from topics.queue import flagged_text
from topics.queue import queue_url


def awaiting_slot(reader: Reader, slug: str) -> str:
    """Staff only, on the shared topic page: "N awaiting review" and "N flagged
    by readers" (a rule-only topic's queue holds only flags), each linked to
    those papers in the topic's review queue; nothing for readers. Counted for
    each request (one query), not cached: a curator back from the queue sees
    what is left."""
    if not (reader.signed_in and reader.user.is_staff):
        return ""
    topic_id, pending, flagged = _counts(slug)
    links = []
    if pending:
        links.append((queue_url(topic_id, pending=True), awaiting_text(pending)))
    if flagged:
        links.append((queue_url(topic_id, flagged=True), flagged_text(flagged)))
    return format_html_join(" ", '<a class="awaiting-review" href="{}">{}</a>', links)


def _counts(slug: str) -> tuple[int, int, int]:
    # One query: the topic's id (for the queue's filter) with its counts.
    pending = Count("review_items", filter=Q(review_items__pending=True))
    flagged = Count("review_items", filter=Q(review_items__flags__gt=0))
    row = (
        Topic.objects.filter(slug=slug)
        .values_list("pk")
        .annotate(pending=pending, flagged=flagged)
    )
    found = row.first()
    return (found[0], found[1], found[2]) if found else (0, 0, 0)
