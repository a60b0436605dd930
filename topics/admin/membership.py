"""What a topic's admin says about its membership: mode and model, papers
awaiting review, the review queue, and the curators' decisions."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import admin
from django.db.models import Count
from django.db.models import IntegerField
from django.db.models import OuterRef
from django.db.models import Subquery
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.utils.html import format_html
from django.utils.html import format_html_join

from topics.models import PaperTopic
from topics.models import ReviewItem
from topics.models import Topic
from topics.models import TopicModel
from topics.queue import awaiting_text
from topics.queue import flagged_text
from topics.queue import model_summary
from topics.queue import queue_url
from topics.queue import two_places

MEMBERSHIP_SHORT: dict[str, str] = {
    Topic.Membership.RULE: "rule only",
    Topic.Membership.SUGGEST: "suggestions",
    Topic.Membership.AUTO: "automatic decisions",
}


class MembershipColumns:
    """TopicAdmin's membership columns and read-only fields."""

    @admin.display(description="membership", ordering="membership")
    def relevance_summary(self, topic: Topic) -> str:
        mode = MEMBERSHIP_SHORT.get(topic.membership, topic.membership)
        model = getattr(topic, "model", None)
        if model is None:
            state = "not trained"
        elif model.state == TopicModel.State.TOO_FEW:
            state = "too few decisions"
        elif model.precision is None:
            state = f"model v{model.version}, no band yet"
        else:
            precision = two_places(model.precision, topic.precision_target)
            recall = two_places(model.recall, topic.recall_target)
            state = f"model v{model.version}, precision {precision}, recall {recall}"
        return f"{mode}; {state}"

    @admin.display(description="awaiting review")
    def awaiting_review(self, topic: Topic) -> str:
        """Its pending papers and the papers readers flagged, each linked to
        them in the queue: a rule-only topic's queue holds only flags. Short
        under its heading ("3 awaiting"), in full in the link's title."""
        count = getattr(topic, "awaiting_total", None) or 0
        flagged = getattr(topic, "flagged_total", None) or 0
        links = []
        if count:
            url = _queue_url(topic, pending=True)
            links.append((url, awaiting_text(count), f"{count} awaiting"))
        if flagged:
            url = _queue_url(topic, flagged=True)
            links.append((url, flagged_text(flagged), f"{flagged} flagged"))
        if not links:
            return "—"
        return format_html_join("; ", '<a href="{}" title="{}">{}</a>', links)

    @admin.display(description="relevance model")
    def relevance_model(self, topic: Topic) -> str:
        if topic.pk is None:
            return model_summary(None)
        awaiting = getattr(topic, "awaiting_total", None) or 0
        return model_summary(getattr(topic, "model", None), awaiting=awaiting)

    @admin.display(description="review queue")
    def review_queue(self, topic: Topic) -> str:
        if topic.pk is None:
            return "—"
        count = topic.review_items.count()
        # Counted with the topic (TopicAdmin.get_queryset), as the list counts them.
        awaiting = getattr(topic, "awaiting_total", None) or 0
        flagged = getattr(topic, "flagged_total", None) or 0
        text = format_html(
            '<a href="{}">{} paper{} to review</a>, of which <a href="{}">{}</a>',
            _queue_url(topic),
            count,
            pluralize(count),
            _queue_url(topic, pending=True),
            awaiting_text(awaiting),
        )
        if not flagged:
            return text
        return format_html(
            '{}, <a href="{}">{}</a>',
            text,
            _queue_url(topic, flagged=True),
            flagged_text(flagged),
        )

    @admin.display(description="pins and exclusions")
    def decisions(self, topic: Topic) -> str:
        """Counts, each linked to its paged, searchable list for this topic."""
        if topic.pk is None:
            return "—"
        pins = topic.paper_topics.filter(source=PaperTopic.Source.PIN).count()
        exclusions = topic.exclusions.count()
        pins_url = reverse("admin:topics_papertopic_changelist")
        exclusions_url = reverse("admin:topics_topicexclusion_changelist")
        return format_html(
            '<a href="{}?{}">{} pinned paper{}</a>, '
            '<a href="{}?{}">{} excluded paper{}</a> (search, page, unpin or lift)',
            pins_url,
            urlencode({"topic__id__exact": topic.pk, "source__exact": "pin"}),
            pins,
            pluralize(pins),
            exclusions_url,
            urlencode({"topic__id__exact": topic.pk}),
            exclusions,
            pluralize(exclusions),
        )


def _queue_url(topic: Topic, *, pending: bool = False, flagged: bool = False) -> str:
    return queue_url(topic.pk, pending=pending, flagged=flagged)


def awaiting_total() -> Subquery:
    """Each topic's pending papers, as a subquery of the topic list's query."""
    return _queue_count(pending=True)


def flagged_total() -> Subquery:
    """Each topic's papers flagged by readers, as awaiting_total counts."""
    return _queue_count(flags__gt=0)


def _queue_count(**among: object) -> Subquery:
    items = (
        ReviewItem.objects.filter(topic=OuterRef("pk"), **among)
        .order_by()
        .values("topic")
        .annotate(count=Count("pk"))
        .values("count")
    )
    return Subquery(items, output_field=IntegerField())
