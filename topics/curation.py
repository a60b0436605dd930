"""What curators do to topics: pin and exclude papers, merge topics, ask for a re-tag.

Pins and exclusions are the curator's word and win over the rule: a pin puts a
paper in the topic, an exclusion keeps it out; each replaces the other.
"""

from __future__ import annotations

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from accounts.models import User
from papers.models import Paper
from papers.pagecache import content_changed
from topics.models import Follow
from topics.models import PaperTopic
from topics.models import RelevanceFlag
from topics.models import ReviewItem
from topics.models import Topic
from topics.models import TopicExclusion
from topics.tagging import TopicRules
from topics.tagging import tag_papers


@transaction.atomic
def pin_paper(topic: Topic, paper: Paper) -> None:
    """Put the paper in the topic whatever the rule says; lifts an exclusion."""
    content_changed()
    TopicExclusion.objects.filter(topic=topic, paper=paper).delete()
    PaperTopic.objects.update_or_create(
        topic=topic, paper=paper, defaults={"source": PaperTopic.Source.PIN}
    )
    _decided(topic, paper)


@transaction.atomic
def unpin_paper(topic: Topic, paper: Paper) -> None:
    """Remove a pin; the rule decides again."""
    content_changed()
    PaperTopic.objects.filter(
        topic=topic, paper=paper, source=PaperTopic.Source.PIN
    ).delete()
    tag_papers([paper.pk], TopicRules.load([topic]))
    request_training(topic)


@transaction.atomic
def exclude_paper(
    topic: Topic, paper: Paper, *, reason: str = "", by: User | None = None
) -> None:
    """Keep the paper out of the topic whatever the rule says; removes a pin."""
    content_changed()
    PaperTopic.objects.filter(topic=topic, paper=paper).delete()
    TopicExclusion.objects.update_or_create(
        topic=topic, paper=paper, defaults={"reason": reason, "created_by": by}
    )
    _decided(topic, paper)


@transaction.atomic
def lift_exclusion(topic: Topic, paper: Paper) -> None:
    content_changed()
    TopicExclusion.objects.filter(topic=topic, paper=paper).delete()
    tag_papers([paper.pk], TopicRules.load([topic]))
    request_training(topic)


def _decided(topic: Topic, paper: Paper) -> None:
    """A decision resolves the paper's review item and readers' flags, and is
    training data for the topic's next model."""
    ReviewItem.objects.filter(topic=topic, paper=paper).delete()
    RelevanceFlag.objects.filter(topic=topic, paper=paper).delete()
    request_training(topic)


def request_training(topic: Topic) -> None:
    """Retrain the topic's model once a burst of decisions is over: the first
    decision marks the topic and schedules a training MOMENTUM_MODEL_TRAIN_DELAY
    seconds after the commit (at once with in-process tasks); the decisions made
    until the training starts ride on it, so a bulk action trains once."""
    from topics.tasks import train_topic_model  # tasks import this module

    eager = settings.CELERY_TASK_ALWAYS_EAGER
    delay = 0 if eager else settings.MOMENTUM_MODEL_TRAIN_DELAY
    # The training clears the mark as it starts; the timeout only frees a topic
    # whose training never ran (a rolled-back decision, a lost task).
    if not cache.add(training_due_key(topic.pk), 1, delay + 60):
        return
    transaction.on_commit(
        lambda: train_topic_model.apply_async((topic.pk,), countdown=delay)
    )


def training_due_key(topic_id: int) -> str:
    return f"topics:training-due:{topic_id}"


def request_retag(topic: Topic) -> None:
    """Re-tag every paper for this topic in the background, after the commit."""
    from topics.tasks import retag_topic  # tasks import this module

    now = timezone.now()
    Topic.objects.filter(pk=topic.pk).update(
        retag_requested_at=now, retag_done=0, retag_total=0
    )
    topic.retag_requested_at = now
    transaction.on_commit(lambda: retag_topic.delay(topic.pk))


@transaction.atomic
def merge_topics(target: Topic, others: list[Topic]) -> None:
    """Fold `others` into `target`: their followers, pins, exclusions and related
    topics move over; then they are deleted and the target is re-tagged."""
    content_changed()
    others = [topic for topic in others if topic.pk != target.pk]
    for topic in others:
        for follow in Follow.objects.filter(topic=topic):
            Follow.objects.get_or_create(
                user_id=follow.user_id, topic=target, defaults={"muted": follow.muted}
            )
        for paper_id in PaperTopic.objects.filter(
            topic=topic, source=PaperTopic.Source.PIN
        ).values_list("paper_id", flat=True):
            pin_paper(target, Paper(pk=paper_id))
        for exclusion in TopicExclusion.objects.filter(topic=topic):
            # A pin on the target is a curator decision too: keep it.
            if not PaperTopic.objects.filter(
                topic=target, paper_id=exclusion.paper_id, source=PaperTopic.Source.PIN
            ).exists():
                exclude_paper(
                    target,
                    Paper(pk=exclusion.paper_id),
                    reason=exclusion.reason,
                    by=exclusion.created_by,
                )
        target.related.add(*topic.related.exclude(pk=target.pk))
        topic.delete()
    request_retag(target)
