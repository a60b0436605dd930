"""What curators do to topics: pin and exclude papers, merge topics, ask for a re-tag.

Pins and exclusions are the curator's word and win over the rule: a pin puts a
paper in the topic, an exclusion keeps it out; each replaces the other.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from dataclasses import field

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from accounts.models import User
from core.queue import send_after_commit
from papers.models import Paper
from papers.versions import content_changed
from papers.versions import pages_changed
from papers.versions import reader_changed
from topics.following import set_muted
from topics.models import Follow
from topics.models import PaperTopic
from topics.models import Question
from topics.models import RelevanceFlag
from topics.models import ReviewItem
from topics.models import Topic
from topics.models import TopicAlias
from topics.models import TopicExclusion
from topics.relevance import training_due_key
from topics.rules import RuleError
from topics.rules import compile_rule
from topics.tagging import TopicRules
from topics.tagging import tag_papers
from topics.tasks import retag_topic
from topics.tasks import train_topic_model

# Each decision is made on many papers at once (an admin list's "select all"),
# one topic at a time: one statement per kind of row, whatever their number.


def pin_paper(topic: Topic, paper: Paper) -> None:
    pin_papers(topic, [paper.pk])


def unpin_paper(topic: Topic, paper: Paper) -> None:
    unpin_papers(topic, [paper.pk])


def exclude_paper(
    topic: Topic, paper: Paper, *, reason: str = "", by: User | None = None
) -> None:
    exclude_papers(topic, [paper.pk], reason=reason, by=by)


def lift_exclusion(topic: Topic, paper: Paper) -> None:
    lift_exclusions(topic, [paper.pk])


@transaction.atomic
def pin_papers(topic: Topic, paper_ids: Collection[int]) -> None:
    """Put the papers in the topic whatever the rule says; lifts exclusions."""
    ids = sorted(set(paper_ids))
    content_changed(topics=[topic], papers=ids)
    TopicExclusion.objects.filter(topic=topic, paper_id__in=ids).delete()
    PaperTopic.objects.bulk_create(
        [
            PaperTopic(topic=topic, paper_id=pk, source=PaperTopic.Source.PIN)
            for pk in ids
        ],
        update_conflicts=True,
        unique_fields=["topic", "paper"],
        update_fields=["source"],
    )
    _decided(topic, ids)
    pages_changed(ids, topics=[topic.pk])


@transaction.atomic
def unpin_papers(topic: Topic, paper_ids: Collection[int]) -> None:
    """Remove pins; the rule decides again."""
    ids = sorted(set(paper_ids))
    content_changed(topics=[topic], papers=ids)
    pins = PaperTopic.objects.filter(
        topic=topic, paper_id__in=ids, source=PaperTopic.Source.PIN
    )
    unpinned = list(pins.values_list("paper_id", flat=True))
    pins.delete()
    tag_papers(ids, TopicRules.load([topic]))
    request_training(topic)
    pages_changed(unpinned, topics=[topic.pk] if unpinned else [])


@transaction.atomic
def exclude_papers(
    topic: Topic,
    paper_ids: Collection[int],
    *,
    reason: str = "",
    by: User | None = None,
) -> None:
    """Keep the papers out of the topic whatever the rule says; removes pins."""
    ids = sorted(set(paper_ids))
    content_changed(topics=[topic], papers=ids)
    tags = PaperTopic.objects.filter(topic=topic, paper_id__in=ids)
    untagged = list(tags.values_list("paper_id", flat=True))
    tags.delete()
    TopicExclusion.objects.bulk_create(
        [
            TopicExclusion(topic=topic, paper_id=pk, reason=reason, created_by=by)
            for pk in ids
        ],
        update_conflicts=True,
        unique_fields=["topic", "paper"],
        update_fields=["reason", "created_by"],
    )
    _decided(topic, ids)
    pages_changed(untagged, topics=[topic.pk] if untagged else [])


@transaction.atomic
def lift_exclusions(topic: Topic, paper_ids: Collection[int]) -> None:
    ids = sorted(set(paper_ids))
    content_changed(topics=[topic], papers=ids)
    TopicExclusion.objects.filter(topic=topic, paper_id__in=ids).delete()
    tag_papers(ids, TopicRules.load([topic]))
    request_training(topic)


def _decided(topic: Topic, paper_ids: list[int]) -> None:
    """Decisions resolve the papers' review items and readers' flags, and are
    training data for the topic's next model."""
    ReviewItem.objects.filter(topic=topic, paper_id__in=paper_ids).delete()
    flags = RelevanceFlag.objects.filter(topic=topic, paper_id__in=paper_ids)
    reader_changed(flags.values_list("user_id", flat=True).distinct())
    flags.delete()
    request_training(topic)


def request_training(topic: Topic) -> None:
    """Retrain the topic's model once a burst of decisions is over: the first
    decision marks the topic and schedules a training MOMENTUM_MODEL_TRAIN_DELAY
    seconds after the commit (on a timer thread with in-process tasks:
    core.queue); the decisions made until the training starts ride on it, so a
    bulk action trains once. An inactive topic is not trained (relevance.retrain):
    its decisions wait for its activation, whose re-tag trains on them."""
    if not topic.is_active:
        return
    delay = settings.MOMENTUM_MODEL_TRAIN_DELAY
    # The training clears the mark as it starts; the timeout only frees a topic
    # whose training never ran (a rolled-back decision, a lost task).
    if not cache.add(training_due_key(topic.pk), 1, delay + 60):
        return
    # With the broker down, the nightly training (train_topic_models) picks it up.
    send_after_commit(train_topic_model, topic.pk, countdown=delay)


def request_retag(topic: Topic) -> None:
    """Re-tag every paper for this topic in the background, after the commit."""
    now = timezone.now()
    Topic.objects.filter(pk=topic.pk).update(
        retag_requested_at=now, retag_done=0, retag_total=0
    )
    topic.retag_requested_at = now
    # With the broker down, resend_lost_retags sends it once the broker is back.
    send_after_commit(retag_topic, topic.pk)


@transaction.atomic
def release_addresses(topic: Topic, slugs: Collection[str]) -> None:
    """Free former addresses of the topic for another topic to take: they no
    longer lead to it (its old links, feeds and digests then find nothing
    there)."""
    TopicAlias.objects.filter(topic=topic, slug__in=slugs).delete()
    content_changed(topics=slugs)


@transaction.atomic
def merge_topics(target: Topic, others: list[Topic]) -> MergeResult:
    """Fold `others` into `target`, losing no paper and no link: the target's rule
    grows to cover theirs; their papers, followers, pins, exclusions of papers the
    target does not hold, related topics and the topics that link to them move
    over; their addresses redirect to it (TopicAlias). Then they are deleted and
    the target is re-tagged in the background."""
    content_changed()  # names, addresses and papers move: every page
    others = [topic for topic in others if topic.pk != target.pk]
    result = MergeResult()
    for topic in others:
        combined = _combined_rule(target, topic)
        if combined is None:
            result.rules_kept.append(topic.name)
        else:
            target.rule, scoped = combined
            target.save(update_fields=["rule", "updated_at"])
            if not scoped:
                target.categories.clear()
        result.papers += _move_papers(topic, target, as_pins=combined is None)
        _move_follows(topic, target)
        _move_links(topic, target)
        topic.delete()
    request_retag(target)
    return result


@dataclass
class MergeResult:
    papers: int = 0  # papers the target did not hold before
    # Topics whose rule could not join the target's (too long together): their
    # papers were pinned instead.
    rules_kept: list[str] = field(default_factory=list)


def _combined_rule(target: Topic, other: Topic) -> tuple[str, bool] | None:
    """The target's rule OR the other's, each scoped to its own topic's categories,
    and whether the topic's categories still scope it; None if the rules together
    are beyond what a rule may be."""
    mine = set(target.categories.values_list("code", flat=True))
    theirs = set(other.categories.values_list("code", flat=True))
    if mine == theirs:
        rule, scoped = f"({target.rule}) OR ({other.rule})", bool(mine)
    else:
        rule, scoped = (
            f"{_scoped(target.rule, mine)} OR {_scoped(other.rule, theirs)}",
            False,
        )
    try:
        compile_rule(rule)
    except RuleError:
        return None
    return rule, scoped


def _scoped(rule: str, categories: set[str]) -> str:
    if not categories:
        return f"({rule})"
    either = " OR ".join(f"cat:{code}" for code in sorted(categories))
    return f"(({rule}) AND ({either}))"


def _move_papers(topic: Topic, target: Topic, *, as_pins: bool) -> int:
    """The topic's tags join the target (as they are, or all as pins when its rule
    did not join the target's), except papers the target excluded, which only the
    topic's pins bring in; its exclusions follow for papers the target lacks.
    How many papers the target did not hold before."""
    held = set(PaperTopic.objects.filter(topic=target).values_list("paper", flat=True))
    excluded = set(
        TopicExclusion.objects.filter(topic=target).values_list("paper", flat=True)
    )
    moved, unexcluded = [], 0
    tags = list(PaperTopic.objects.filter(topic=topic))
    for tag in tags:
        decided = tag.paper_id in held or tag.paper_id in excluded
        if decided and tag.source == PaperTopic.Source.PIN:
            # A curator's pin stays a pin, over the target's exclusion too.
            pin_paper(target, Paper(pk=tag.paper_id))
            unexcluded += tag.paper_id not in held
        if decided:
            continue
        tag.pk, tag.topic = None, target
        if as_pins:
            tag.source = PaperTopic.Source.PIN
        moved.append(tag)
    # A re-tag of the target running meanwhile may have tagged some already.
    PaperTopic.objects.bulk_create(moved, ignore_conflicts=True)
    TopicExclusion.objects.filter(topic=topic).exclude(paper__in=held).exclude(
        paper__in=excluded
    ).update(topic=target)
    # Its papers' pages show the target, or no longer the topic; the target's
    # page may show them, or show them pinned.
    pages_changed((tag.paper_id for tag in tags), topics=[target.pk])
    return len(moved) + unexcluded


def _move_follows(topic: Topic, target: Topic) -> None:
    """Its followers follow the target, whose page shows their count; in their
    digests unless they muted both (a mute of the target kept would drop the
    papers they read there, unsaid)."""
    for follow in Follow.objects.filter(topic=topic):
        kept, created = Follow.objects.get_or_create(
            user_id=follow.user_id, topic=target, defaults={"muted": follow.muted}
        )
        if not created and not follow.muted:
            set_muted(kept, False)
    content_changed(followers=[target])


def _move_links(topic: Topic, target: Topic) -> None:
    """Related topics both ways, the topic's addresses and the questions readers
    asked about it (their recent questions) now lead to the target."""
    Question.objects.filter(topic=topic).update(topic=target)
    target.related.add(*topic.related.exclude(pk=target.pk))
    for linking in Topic.objects.filter(related=topic).exclude(pk=target.pk):
        linking.related.add(target)
    TopicAlias.objects.filter(topic=topic).update(topic=target)
    TopicAlias.objects.update_or_create(slug=topic.slug, defaults={"topic": target})
