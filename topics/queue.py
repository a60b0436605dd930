"""What curators read about a topic's membership: papers awaiting review, the
model's expected precision and recall, its band, and which decisions help most."""

from __future__ import annotations

import math
from collections.abc import Iterable
from urllib.parse import urlencode

from django.conf import settings
from django.db.models import Count
from django.template.defaultfilters import pluralize
from django.urls import reverse

from topics.membership import MIN_EACH
from topics.models import ReviewItem
from topics.models import TopicModel

# Decisions a curator makes in one burst before the model retrains.
BURST = 50


def awaiting_counts(topic_ids: Iterable[int]) -> dict[int, int]:
    """Papers pending (in the band, no verdict) per topic, in one query."""
    rows = (
        ReviewItem.objects.filter(topic_id__in=list(topic_ids), pending=True)
        .values_list("topic_id")
        .annotate(count=Count("pk"))
        .order_by()
    )
    return dict(rows)


def two_places(value: float, below: float) -> str:
    """A figure to two places, cut (not rounded) when it is under `below`, a
    target or the boundary: a precision of 0.9467 read "0.95" beside "below the
    topic's precision target of 0.95"."""
    if value < below:
        # Rounded to six places first: 0.29 * 100 is 28.999999999999996.
        value = math.floor(round(value * 100, 6)) / 100
    return f"{value:.2f}"


def as_set(target: float) -> str:
    """A target as the curator set it, to at least the two places of the
    estimates beside it: 0.999 read "1.00", above any estimate cut below it."""
    places = f"{target:.2f}"
    return places if float(places) == target else f"{target:g}"


def awaiting_text(count: int) -> str:
    return f"{count} awaiting review"


def flagged_text(count: int) -> str:
    return f"{count} flagged by readers"


def queue_url(
    topic_id: int,
    *,
    pending: bool = False,
    flagged: bool = False,
    paper: str = "",
) -> str:
    """The review queue of one topic in admin (only its pending or flagged
    papers, or one paper by its arXiv id, if asked)."""
    query: dict[str, object] = {"topic__id__exact": topic_id}
    if pending:
        query["pending__exact"] = 1
    if flagged:
        query["kind"] = "flagged"
    if paper:
        query["q"] = paper
    return f"{reverse('admin:topics_reviewitem_changelist')}?{urlencode(query)}"


def model_summary(model: TopicModel | None, *, awaiting: int | None = None) -> str:
    """A few sentences for admin: the model's state, training size, what its
    automatic decisions are expected to reach and what would help most."""
    if model is None:
        return "Not trained yet."
    if model.state == TopicModel.State.TOO_FEW:
        return (
            f"Too few decisions to train ({model.positives} positives, "
            f"{model.decisions} curator decisions; needs "
            f"{settings.MOMENTUM_MODEL_MIN_POSITIVES} and "
            f"{settings.MOMENTUM_MODEL_MIN_DECISIONS}): the rule alone decides."
        )
    trained = (
        f"v{model.version}, trained {model.trained_at:%Y-%m-%d %H:%M} on "
        f"{model.positives} positives and {model.negatives} negatives "
        f"({model.decisions} curator decisions)."
    )
    # The band's edges and what they reach are stored together (relevance).
    if model.include_at is None or model.precision is None or model.recall is None:
        return (
            f"{trained} No band yet: too few decisions of each kind (needs "
            f"{MIN_EACH} included and {MIN_EACH} excluded), none the model can "
            "decide in at the precision target, or decisions that run against the "
            "model's scores or the rule (more papers scored low included than "
            "high, or more rule matches excluded than not): deciding papers the "
            "model is sure of helps there. The rule decides and the model's "
            "disagreements wait in the review queue."
        )
    # Measured on decisions the band was not drawn on (topics.membership).
    topic = model.topic
    precision = two_places(model.precision, topic.precision_target)
    recall = two_places(model.recall, topic.recall_target)
    expected = (
        f" Automatic decisions, tried on your decisions the band was not drawn "
        f"on: precision {precision}, recall {recall}; "
        f"{model.band:.0%} of decided papers fall in the band."
    )
    missed = [
        f"{name} target of {as_set(target)}"
        for name, reached, target in [
            ("precision", model.precision, topic.precision_target),
            ("recall", model.recall, topic.recall_target),
        ]
        if reached < target
    ]
    if missed:
        expected += (
            f" That is below the topic's {' and its '.join(missed)}: more "
            "decisions, the most uncertain first, draw a band that holds."
        )
    return " ".join(filter(None, [trained + expected, advice(awaiting)]))


def advice(awaiting: int | None) -> str:
    """Which decisions help most: the band's, most uncertain first."""
    if awaiting is None:
        return ""
    if awaiting == 0:
        return "Nothing awaits review."
    burst = min(BURST, awaiting)
    return (
        f"{awaiting} paper{pluralize(awaiting)} in the band await review; deciding "
        f"the {burst} most uncertain first helps most (the model retrains after "
        "each burst and redraws the band)."
    )
