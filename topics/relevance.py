"""Topic relevance models: learn from a topic's rule and its curators' decisions.

Training set: positives are the curator's pins and the rule's matches the curator
did not exclude; negatives are exclusions plus a seeded sample of other papers from
the topic's categories (its own, else the usual primary categories of its
positives). Curators' decisions weigh more than the rule's guesses. The model
itself (tf-idf and logistic regression) is topics.scoring's.

Each training also fits the topic's three-way thresholds (topics.membership)
from its curators' decisions, each scored by a model trained without it, so the
band is redrawn as decisions arrive. How the model is then used depends on
Topic.membership (topics.deciding): with suggestions it only fills the review
queue; with automatic decisions it decides the sure papers and leaves the band
pending. Pins and exclusions always win.
"""

from __future__ import annotations

import hashlib
import logging
import random
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone
from sklearn.model_selection import KFold

from papers.models import Paper
from topics.deciding import TopicScorer
from topics.deciding import apply_model
from topics.deciding import paper_texts
from topics.deciding import scope_papers
from topics.membership import Thresholds
from topics.membership import fit_thresholds
from topics.models import PaperTopic
from topics.models import ReviewItem
from topics.models import Topic
from topics.models import TopicExclusion
from topics.models import TopicModel
from topics.scoring import FORMAT
from topics.scoring import Scorer
from topics.scoring import fit
from topics.tagging import TopicRules
from topics.tagging import iter_paper_documents

logger = logging.getLogger(__name__)

NEGATIVES_PER_POSITIVE = 5
MIN_NEGATIVES = 500
DECISION_WEIGHT = 10.0  # a curator's decision counts this many rule guesses
FOLDS = 5
# A category listed by at least this share of the positives is in scope.
SCOPE_SHARE = 0.05


@dataclass(frozen=True)
class TrainingSet:
    paper_ids: list[int]
    texts: list[str]
    labels: np.ndarray  # 1 in the topic, 0 not
    weights: np.ndarray
    decided: np.ndarray  # a curator's pin or exclusion, not a rule guess
    rule: np.ndarray  # the rule matches the paper
    categories: list[str]

    @property
    def positives(self) -> int:
        return int(self.labels.sum())

    @property
    def negatives(self) -> int:
        return len(self.labels) - self.positives

    @property
    def decisions(self) -> int:
        return int(self.decided.sum())

    def fingerprint(self) -> str:
        digest = hashlib.sha256(f"{FORMAT}".encode())
        for row in zip(
            self.paper_ids, self.labels.tolist(), self.weights.tolist(), strict=True
        ):
            digest.update(repr(row).encode())
        digest.update(repr(self.categories).encode())
        return digest.hexdigest()

    def without(self, keep: np.ndarray) -> TrainingSet:
        """The same set with only the papers where `keep` is true."""
        return TrainingSet(
            paper_ids=[
                pk for pk, kept in zip(self.paper_ids, keep, strict=True) if kept
            ],
            texts=[text for text, kept in zip(self.texts, keep, strict=True) if kept],
            labels=self.labels[keep],
            weights=self.weights[keep],
            decided=self.decided[keep],
            rule=self.rule[keep],
            categories=self.categories,
        )


def training_set(topic: Topic) -> TrainingSet:
    """The topic's positives and negatives, in a deterministic order."""
    tags = PaperTopic.objects.filter(
        topic=topic, source__in=[PaperTopic.Source.RULE, PaperTopic.Source.PIN]
    ).values_list("paper_id", "source")
    # Rule matches kept out or judged in are the model's or judge's call, not the
    # curator's: still the rule's positives.
    kept_out = ReviewItem.objects.filter(topic=topic, rule_matched=True).values_list(
        "paper_id", flat=True
    )
    positive = {paper_id: source == PaperTopic.Source.PIN for paper_id, source in tags}
    for paper_id in kept_out:
        positive.setdefault(paper_id, False)
    excluded = set(
        TopicExclusion.objects.filter(topic=topic).values_list("paper_id", flat=True)
    )
    categories = scope_categories(topic, positive)
    pool = sorted(
        set(scope_papers(categories).values_list("pk", flat=True))
        - positive.keys()
        - excluded
    )
    wanted = max(MIN_NEGATIVES, NEGATIVES_PER_POSITIVE * len(positive))
    sampled = random.Random(topic.slug).sample(pool, min(wanted, len(pool)))
    examples = {
        paper_id: (1, DECISION_WEIGHT if pin else 1.0)
        for paper_id, pin in positive.items()
    }
    examples.update((paper_id, (0, DECISION_WEIGHT)) for paper_id in excluded)
    examples.update((paper_id, (0, 1.0)) for paper_id in sampled)
    paper_ids = sorted(examples)
    texts = paper_texts(paper_ids)
    paper_ids = [paper_id for paper_id in paper_ids if paper_id in texts]
    decided = {pk for pk, pin in positive.items() if pin} | excluded
    matched = rule_matches(topic, decided) | (positive.keys() - decided)
    return TrainingSet(
        paper_ids=paper_ids,
        texts=[texts[paper_id] for paper_id in paper_ids],
        labels=np.array([examples[pk][0] for pk in paper_ids], dtype=np.int64),
        weights=np.array([examples[pk][1] for pk in paper_ids]),
        decided=np.array([pk in decided for pk in paper_ids], dtype=bool),
        rule=np.array([pk in matched for pk in paper_ids], dtype=bool),
        categories=categories,
    )


def rule_matches(topic: Topic, paper_ids: Iterable[int]) -> set[int]:
    """Which of these papers the topic's rule matches (in its categories)."""
    rules = TopicRules.load([topic])
    if topic.pk not in rules.scopes:
        return set()
    papers = Paper.objects.filter(pk__in=list(paper_ids))
    return {
        pk
        for pk, document, categories in iter_paper_documents(papers)
        if topic.pk in rules.match(document, categories)
    }


def scope_categories(topic: Topic, positives: Iterable[int]) -> list[str]:
    """The categories whose papers the model scores and samples negatives from:
    the topic's own, else those at least SCOPE_SHARE of its positives are listed in."""
    own = sorted(category.code for category in topic.categories.all())
    if own:
        return own
    positives = list(positives)
    through = Paper.categories.through
    counts = Counter(
        through.objects.filter(paper_id__in=positives).values_list(
            "category__code", flat=True
        )
    )
    return sorted(
        code for code, count in counts.items() if count >= SCOPE_SHARE * len(positives)
    )


def fit_set(data: TrainingSet) -> Scorer:
    scorer = fit(data.texts, data.labels, data.weights)
    scorer.categories = data.categories
    return scorer


def decision_scores(data: TrainingSet, folds: int = FOLDS) -> np.ndarray:
    """Each curator decision's score by a model trained with its fold of decisions
    removed from the training set altogether (the rule's guesses always kept)."""
    decided = np.flatnonzero(data.decided)
    scores = np.zeros(len(decided))
    if len(decided) < folds:
        return scores
    splits = KFold(n_splits=folds, shuffle=True, random_state=0)
    for _, held in splits.split(decided):
        keep = np.ones(len(data.labels), dtype=bool)
        keep[decided[held]] = False
        scorer = fit_set(data.without(keep))
        scores[held] = scorer.score([data.texts[i] for i in decided[held]])
    return scores


def topic_thresholds(
    data: TrainingSet, *, target: float, recall_target: float
) -> Thresholds | None:
    """The band's edges fitted to the targets on the curators' decisions."""
    scores = decision_scores(data)
    return fit_thresholds(
        scores.tolist(),
        data.rule[data.decided].tolist(),
        data.labels[data.decided].astype(bool).tolist(),
        target=target,
        recall_target=recall_target,
    )


def train(topic: Topic, *, force: bool = False) -> TopicModel:
    """Train the topic's model and fit its thresholds (or record why not), and
    apply them to every paper in scope. Does nothing when the training set has
    not changed, unless forced."""
    data = training_set(topic)
    fingerprint = data.fingerprint()
    current = TopicModel.objects.filter(topic=topic).first()
    if current and current.fingerprint == fingerprint and not force:
        return current
    enough = (
        data.positives >= settings.MOMENTUM_MODEL_MIN_POSITIVES
        and data.decisions >= settings.MOMENTUM_MODEL_MIN_DECISIONS
    )
    scorer = fit_set(data) if enough else None
    thresholds = (
        topic_thresholds(
            data, target=topic.precision_target, recall_target=topic.recall_target
        )
        if enough
        else None
    )
    model, _ = TopicModel.objects.update_or_create(
        topic=topic,
        defaults={
            "state": TopicModel.State.TRAINED if enough else TopicModel.State.TOO_FEW,
            "version": (current.version + 1) if current else 1,
            "positives": data.positives,
            "negatives": data.negatives,
            "decisions": data.decisions,
            "fingerprint": fingerprint,
            "weights": scorer.to_weights() if scorer else {},
            "trained_at": timezone.now(),
            **threshold_fields(thresholds),
        },
    )
    # Rule only: the model is there for curators to judge, and changes nothing.
    used = scorer if topic.membership != Topic.Membership.RULE else None
    apply_model(topic, TopicScorer(used, thresholds) if used is not None else None)
    return model


def retrain(topic_id: int, *, force: bool = False) -> tuple[Topic, TopicModel] | None:
    """Train an active topic's model (`train`), one training per topic at a time;
    None when the topic is gone or inactive. Decisions made from now on are not
    in this training's data: they ask for another (training_due_key)."""
    cache.delete(training_due_key(topic_id))
    with transaction.atomic():
        # A second training of the topic waits here, then finds no change.
        topic = (
            Topic.objects.select_for_update()
            .filter(pk=topic_id, is_active=True)
            .first()
        )
        if topic is None:
            logger.info("topic %s is gone or inactive; no model trained", topic_id)
            return None
        return topic, train(topic, force=force)


def training_due_key(topic_id: int) -> str:
    """Set while a training of the topic is scheduled (topics.curation)."""
    return f"topics:training-due:{topic_id}"


def threshold_fields(thresholds: Thresholds | None) -> dict:
    if thresholds is None:
        return dict.fromkeys(
            ["precision", "recall", "f1", "band", "include_at", "exclude_at"]
        ) | {"calibration": {}}
    p, r = thresholds.precision, thresholds.recall
    return {
        "precision": p,
        "recall": r,
        "f1": 2 * p * r / (p + r) if p + r else 0.0,
        "band": thresholds.band,
        "include_at": thresholds.include_at,
        "exclude_at": thresholds.exclude_at,
        "calibration": thresholds.calibration.to_json(),
    }
