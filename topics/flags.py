"""Readers' "not relevant" flags on a paper's tag.

A flag only puts the paper in the topic's review queue (its ReviewItem counts the
flags); it never changes membership, so it needs no retagging and leaves cached
pages as they are. A curator's decision resolves the item and its flags
(topics.curation). Each reader flags a tag once, and new flags are rate limited
per reader (MOMENTUM_FLAG_RATE).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from enum import StrEnum

from django.conf import settings
from django.db import transaction
from django.db.models import Count
from django.db.models import OuterRef
from django.db.models import Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from accounts.models import User
from papers.models import Paper
from papers.versions import reader_changed
from topics.deciding import apply_model
from topics.deciding import scorer_of
from topics.limits import Rate
from topics.limits import parse_rate
from topics.limits import take
from topics.limits import wait
from topics.models import PaperTopic
from topics.models import RelevanceFlag
from topics.models import ReviewItem
from topics.models import Topic


class FlagResult(StrEnum):
    FLAGGED = "flagged"
    ALREADY = "already"
    NOT_TAGGED = "not_tagged"
    LIMITED = "limited"


def flag_not_relevant(user: User, topic: Topic, paper: Paper) -> FlagResult:
    """Record that `user` thinks `paper` does not belong in `topic` and count it on
    the topic's review item. Idempotent per user; membership is untouched."""
    # Both checked before the limiter, so a repeated click costs no budget.
    if not PaperTopic.objects.filter(topic=topic, paper=paper).exists():
        return FlagResult.NOT_TAGGED
    if RelevanceFlag.objects.filter(user=user, topic=topic, paper=paper).exists():
        return FlagResult.ALREADY
    if take(f"user:{user.pk}", flag_rate(), prefix="flag"):
        return FlagResult.LIMITED
    return _record(user, topic, paper)


def retry_after(user: User) -> int:
    """Seconds until a reader who was refused may flag again."""
    return wait(f"user:{user.pk}", flag_rate(), prefix="flag")


def flag_rate() -> Rate:
    return parse_rate(settings.MOMENTUM_FLAG_RATE, "MOMENTUM_FLAG_RATE")


@transaction.atomic
def _record(user: User, topic: Topic, paper: Paper) -> FlagResult:
    # Locking the tag serialises flags on it, so each one counts every flag
    # committed before it; it also confirms the tag still exists.
    tag = (
        PaperTopic.objects.select_for_update().filter(topic=topic, paper=paper).first()
    )
    if tag is None:
        return FlagResult.NOT_TAGGED
    # A double submit can pass the check above twice: the constraint decides.
    _, created = RelevanceFlag.objects.get_or_create(
        user=user, topic=topic, paper=paper
    )
    if not created:
        return FlagResult.ALREADY
    reader_changed([user.pk])
    item, _ = ReviewItem.objects.get_or_create(
        topic=topic, paper=paper, defaults=_review_fields(tag)
    )
    flags = RelevanceFlag.objects.filter(topic=topic, paper=paper).count()
    # Only the count: scoring may update the item's other fields meanwhile.
    ReviewItem.objects.filter(pk=item.pk).update(flags=flags, updated_at=timezone.now())
    return FlagResult.FLAGGED


def account_deleted(sender: type, instance: User, **kwargs: object) -> None:
    """pre_delete of a user: their flags go with them, by cascade; once that is
    committed, the review items they counted on are recounted."""
    flagged = list(
        RelevanceFlag.objects.filter(user=instance).values_list("topic_id", "paper_id")
    )
    if flagged:
        transaction.on_commit(lambda: recount(flagged))


def recount(tags: Iterable[tuple[int, int]]) -> None:
    """Count the flags on these tags' review items anew, then decide their papers
    again: an item that was queued only for flags now gone leaves the queue."""
    papers_of: dict[int, list[int]] = defaultdict(list)
    for topic_id, paper_id in tags:
        papers_of[topic_id].append(paper_id)
    for topic in Topic.objects.filter(pk__in=papers_of):
        flags = (
            RelevanceFlag.objects.filter(topic=topic, paper=OuterRef("paper"))
            .order_by()
            .values("paper")
            .annotate(n=Count("id"))
            .values("n")
        )
        ReviewItem.objects.filter(topic=topic, paper__in=papers_of[topic.pk]).update(
            flags=Coalesce(Subquery(flags), 0), updated_at=timezone.now()
        )
        apply_model(topic, scorer_of(topic), papers_of[topic.pk])


def _review_fields(tag: PaperTopic) -> dict[str, object]:
    """A new review item says what the tag says: the rule's terms, the score."""
    rule = tag.source == PaperTopic.Source.RULE
    return {
        "score": tag.score,
        "rule_matched": rule,
        "rule_terms": list(tag.matched_terms) if rule else [],
    }
