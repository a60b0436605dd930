"""A simulated curator on a labeled set: train a topic's model and thresholds
with some labeled papers as curator decisions, decide the papers of a round it
did not train on three ways (topics.membership.decide), and measure.

The training set is the production one (topics.relevance.training_set, read
once with no decisions), changed in memory as topics.relevance would read it
after the decisions: a relevant paper becomes a pin (positive, a decision's
weight), a not-relevant one an exclusion (negative, same weight), and the
evaluated round's papers are removed from it altogether.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from topics.deciding import paper_texts
from topics.membership import BOUNDARY
from topics.membership import Evidence
from topics.membership import Mode
from topics.membership import Source
from topics.membership import Thresholds
from topics.membership import decide
from topics.relevance import DECISION_WEIGHT
from topics.relevance import TrainingSet
from topics.relevance import fit_set
from topics.relevance import topic_thresholds
from topics.scoring import Scorer

BURST = 50  # decisions between trainings, as a curator's burst in admin


@dataclass(frozen=True)
class Labeled:
    """A labeled set as arrays, one entry per paper."""

    ids: np.ndarray
    actual: np.ndarray  # relevant
    rounds: np.ndarray
    rule: np.ndarray  # the seed rule matches it
    weights: np.ndarray  # candidate papers each stands for in its round's draw
    texts: list[str]


@dataclass(frozen=True)
class Outcome:
    """Three-way decisions on some papers: in, pending (band), or out."""

    member: np.ndarray
    band: np.ndarray
    probability: np.ndarray  # calibrated (or the raw score without thresholds)


@dataclass(frozen=True)
class Model:
    scorer: Scorer
    thresholds: Thresholds | None


def load_texts(ids: Sequence[int]) -> list[str]:
    texts = paper_texts([int(pk) for pk in ids])
    return [texts[int(pk)] for pk in ids]


def with_decisions(
    base: TrainingSet, labeled: Labeled, decided: np.ndarray, dropped: np.ndarray
) -> TrainingSet:
    """`base` as training would read it once the `decided` labeled papers are
    pins or exclusions and the `dropped` ones are gone."""
    rows = {
        pk: (text, int(label), float(weight), False, bool(rule))
        for pk, text, label, weight, rule in zip(
            base.paper_ids,
            base.texts,
            base.labels,
            base.weights,
            base.rule,
            strict=True,
        )
    }
    for i in np.flatnonzero(dropped):
        rows.pop(int(labeled.ids[i]), None)
    for i in np.flatnonzero(decided):
        label = int(labeled.actual[i])
        rule = bool(labeled.rule[i])
        rows[int(labeled.ids[i])] = (
            labeled.texts[i],
            label,
            DECISION_WEIGHT,
            True,
            rule,
        )
    ids = sorted(rows)
    return TrainingSet(
        paper_ids=ids,
        texts=[rows[pk][0] for pk in ids],
        labels=np.array([rows[pk][1] for pk in ids], dtype=np.int64),
        weights=np.array([rows[pk][2] for pk in ids]),
        decided=np.array([rows[pk][3] for pk in ids], dtype=bool),
        rule=np.array([rows[pk][4] for pk in ids], dtype=bool),
        categories=base.categories,
    )


def train(data: TrainingSet, *, target: float, recall_target: float) -> Model:
    thresholds = (
        topic_thresholds(data, target=target, recall_target=recall_target)
        if data.decisions
        else None
    )
    return Model(fit_set(data), thresholds)


def decide_all(model: Model, labeled: Labeled, subset: np.ndarray) -> Outcome:
    """Decide these labeled papers as a topic with automatic decisions would."""
    indices = np.flatnonzero(subset)
    scores = model.scorer.score([labeled.texts[i] for i in indices])
    member, band, probability = (np.zeros(len(indices)) for _ in range(3))
    for n, (i, score) in enumerate(zip(indices, scores, strict=True)):
        decision = decide(
            Evidence(
                mode=Mode.AUTO,
                rule=bool(labeled.rule[i]),
                score=float(score),
                thresholds=model.thresholds,
            )
        )
        member[n] = decision.member in (Source.RULE, Source.MODEL)
        band[n] = decision.pending
        probability[n] = (
            decision.probability if decision.probability is not None else score
        )
    return Outcome(member.astype(bool), band.astype(bool), probability)


def f1(predicted: np.ndarray, actual: np.ndarray) -> float:
    hits = float((predicted & actual).sum())
    if not hits:
        return 0.0
    precision = hits / float(predicted.sum())
    recall = hits / float(actual.sum())
    return 2 * precision * recall / (precision + recall)


def curator_curve(
    base: TrainingSet,
    labeled: Labeled,
    *,
    pool: np.ndarray,
    test: np.ndarray,
    steps: Sequence[int],
    uncertain_first: bool,
    **targets: float,
) -> list[tuple[int, Outcome]]:
    """The test papers' outcome after each number of decisions in `steps`, the
    curator deciding `pool` papers uncertainty-first (retraining after each
    burst) or in a seeded random order. Where the pool is the test papers
    themselves, a decided paper's outcome is the curator's decision, and the
    model trains on no undecided test paper."""
    decided = np.zeros(len(labeled.ids), dtype=bool)
    order = list(np.flatnonzero(pool))
    random.Random(20261201).shuffle(order)
    results = []
    model = train(with_decisions(base, labeled, decided, test), **targets)
    made = 0
    for step in steps:
        step = min(step, len(order))
        while made < step:
            burst = min(BURST, step - made)
            if uncertain_first:
                undecided = pool & ~decided
                outcome = decide_all(model, labeled, undecided)
                closest = np.argsort(np.abs(outcome.probability - BOUNDARY))[:burst]
                chosen = np.flatnonzero(undecided)[closest]
            else:
                chosen = np.array(order[made : made + burst])
            decided[chosen] = True
            made += burst
            model = train(
                with_decisions(base, labeled, decided, test & ~decided), **targets
            )
        outcome = decide_all(model, labeled, test)
        results.append((made, with_reviews(outcome, labeled, decided, test)))
    return results


def with_reviews(
    outcome: Outcome, labeled: Labeled, decided: np.ndarray, test: np.ndarray
) -> Outcome:
    """The test papers' outcome once the curator's decisions among them count:
    a decided paper is in or out as the curator said, never in the band."""
    reviewed = decided[test]
    return Outcome(
        member=np.where(reviewed, labeled.actual[test], outcome.member),
        band=outcome.band & ~reviewed,
        probability=outcome.probability,
    )
