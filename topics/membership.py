"""Three-way membership: the pure decision of whether a paper is in a topic, out
of it, or pending (the uncertain band), and the thresholds that draw the band.

No database here: topics.deciding reads the evidence and writes what `decide`
returns; topics.relevance fits the calibration and thresholds at each training.

The model's score and the rule's match become one calibrated probability (a
logistic fit on the curators' decisions, each scored by a model that never saw
it). A paper at or above `include_at` is in, at or below `exclude_at` out, and
between is the band: a judge's verdict or a curator decides it. The thresholds
are fitted on those decisions to the topic's two targets: of the papers decided
"in", at least the precision target's share belong; the papers decided "out"
hold at most the rest of the relevant ones that the recall target allows
(1 - recall target). The band is what the two edges leave between them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold

# Where the model's score alone says "in" (the suggestions' disagreement point).
BOUNDARY = 0.5
# Decisions of each kind (in, out) needed before thresholds are fitted.
MIN_EACH = 5
# Scores are clipped this far from 0 and 1 before taking their logit.
EPSILON = 1e-4
# Folds of the decisions on which what the edges will do is estimated.
ESTIMATE_FOLDS = 5


class Mode(StrEnum):
    """What the model may do (Topic.Membership's values)."""

    RULE = "rule"
    SUGGEST = "suggest"
    AUTO = "auto"


class Source(StrEnum):
    """Why a paper is a member (PaperTopic.Source's values)."""

    RULE = "rule"
    MODEL = "model"
    PIN = "pin"
    JUDGE = "judge"


@dataclass(frozen=True)
class Calibration:
    """P(belongs) from the model's score and whether the rule matches."""

    slope: float
    rule_shift: float
    intercept: float

    def probability(self, score: float, rule: bool) -> float:
        z = self.slope * logit(score) + self.rule_shift * rule + self.intercept
        return 1.0 / (1.0 + math.exp(-z))

    def probabilities(self, scores: np.ndarray, rule: np.ndarray) -> np.ndarray:
        """`probability` of each (score, rule) pair."""
        return np.array(
            [self.probability(s, r) for s, r in zip(scores, rule, strict=True)]
        )

    def to_json(self) -> dict[str, float]:
        return {
            "slope": round(self.slope, 6),
            "rule_shift": round(self.rule_shift, 6),
            "intercept": round(self.intercept, 6),
        }

    @classmethod
    def from_json(cls, data: dict) -> Calibration | None:
        try:
            return cls(data["slope"], data["rule_shift"], data["intercept"])
        except (KeyError, TypeError):
            return None


@dataclass(frozen=True)
class Thresholds:
    """The band's edges on the calibrated probability, and what they are expected
    to do, measured on curators' decisions they were not drawn on."""

    calibration: Calibration
    include_at: float
    exclude_at: float
    precision: float  # of the decisions the thresholds make "in"
    recall: float  # share of the relevant decided papers decided "in"
    band: float  # share of the decided papers left in the band

    def classify(self, score: float, rule: bool) -> tuple[float, bool | None]:
        """The calibrated probability and the automatic call (None: the band)."""
        probability = self.calibration.probability(score, rule)
        if probability >= self.include_at:
            return probability, True
        if probability <= self.exclude_at:
            return probability, False
        return probability, None


@dataclass(frozen=True)
class Evidence:
    """All that decides one paper's membership of one topic."""

    mode: Mode
    rule: bool  # the rule matches
    score: float | None = None  # the model's; None: no model, or out of its scope
    thresholds: Thresholds | None = None
    pinned: bool = False
    excluded: bool = False
    verdict: bool | None = None  # the judge's: in (True), out (False) or none
    flags: int = 0  # readers' "not relevant" flags


@dataclass(frozen=True)
class Decision:
    member: Source | None  # the tag's source, or None: not a member
    queued: bool = False  # in the review queue
    pending: bool = False  # in the band with no verdict: awaiting review
    vetoed: bool = False  # a rule match the model keeps out
    probability: float | None = None  # calibrated, where thresholds apply


def decide(evidence: Evidence) -> Decision:
    """A paper's membership: a curator's decision first, then a confident model
    (automatic mode), then the judge's verdict in the band, else the rule."""
    e = evidence
    flagged = e.flags > 0
    if e.pinned:
        return Decision(Source.PIN, queued=flagged)
    if e.excluded:
        return Decision(None, queued=flagged)
    by_rule = Source.RULE if e.rule else None
    if e.score is None or e.mode == Mode.RULE:
        return Decision(by_rule, queued=flagged)
    if e.mode == Mode.SUGGEST or e.thresholds is None:
        disagree = (e.score >= BOUNDARY) != e.rule
        return Decision(by_rule, queued=disagree or flagged)
    probability, call = e.thresholds.classify(e.score, e.rule)
    if call is True:
        member: Source | None = by_rule or Source.MODEL
        return Decision(member, queued=flagged, probability=probability)
    if call is False:
        # A rule match kept out stays queued: the curator sees the model overrule.
        return Decision(
            None, queued=e.rule or flagged, vetoed=e.rule, probability=probability
        )
    if e.verdict is not None:
        member = Source.JUDGE if e.verdict else None
        return Decision(
            member,
            queued=True,
            vetoed=e.rule and not e.verdict,
            probability=probability,
        )
    return Decision(
        None, queued=True, pending=True, vetoed=e.rule, probability=probability
    )


def logit(score: float) -> float:
    p = min(max(score, EPSILON), 1 - EPSILON)
    return math.log(p / (1 - p))


def fit_thresholds(
    scores: Sequence[float],
    rule: Sequence[bool],
    labels: Sequence[bool],
    *,
    target: float,
    recall_target: float,
) -> Thresholds | None:
    """Calibrate on these decided papers (each score from a model that did not see
    it) and draw the band edges: "in" at the precision `target`, "out" keeping
    `recall_target` of the relevant papers above it. None with too few decisions
    of either kind, or when no papers can be decided "in" at the target.

    What the edges are expected to do (precision, recall, band) is measured on
    decisions they were not drawn on (`_held_out`): on the decisions that drew
    them, the precision target is met by construction."""
    y = np.asarray(labels, dtype=bool)
    s = np.asarray(scores, dtype=float)
    r = np.asarray(rule, dtype=bool)
    edges = _edges(s, r, y, target, recall_target)
    if edges is None:
        return None
    precision, recall, band = _held_out(s, r, y, target, recall_target)
    return Thresholds(*edges, precision=precision, recall=recall, band=band)


def _edges(
    scores: np.ndarray,
    rule: np.ndarray,
    y: np.ndarray,
    target: float,
    recall_target: float,
) -> tuple[Calibration, float, float] | None:
    """The calibration and the two edges fitted on these decisions, or None."""
    if int(y.sum()) < MIN_EACH or int((~y).sum()) < MIN_EACH:
        return None
    calibration = fit_calibration(scores.tolist(), rule.tolist(), y)
    if calibration.slope <= 0 or calibration.rule_shift < 0:
        # Decisions that run against the model's scores or the rule (only the
        # queue's disagreements decided, say) turn them around: a band drawn
        # on that takes in what the model scores lowest.
        return None
    p = calibration.probabilities(scores, rule)
    include_at = _include_edge(p, y, target)
    if include_at > 1:
        # No edge reaches the target: a band over everything the rule matches
        # would empty the topic, so the rule keeps deciding until one does.
        return None
    exclude_at = min(_exclude_edge(p, y, recall_target), include_at)
    return calibration, include_at, exclude_at


def _held_out(
    scores: np.ndarray,
    rule: np.ndarray,
    y: np.ndarray,
    target: float,
    recall_target: float,
) -> tuple[float, float, float]:
    """Precision, recall and band share of the automatic decisions on decisions
    the edges did not see: each of ESTIMATE_FOLDS folds decided by a calibration
    and edges fitted on the others. An edge sits where the decisions it is drawn
    on happen to meet the target, so on new papers it falls short by what that
    choice borrowed from chance. A fold whose others fit no edges stays in the
    band."""
    calls = np.zeros(len(y), dtype=np.int8)  # 1 in, -1 out, 0 the band
    folds = StratifiedKFold(
        n_splits=min(ESTIMATE_FOLDS, int(y.sum()), int((~y).sum())),
        shuffle=True,
        random_state=0,
    )
    for fitted_on, held in folds.split(scores, y):
        edges = _edges(
            scores[fitted_on], rule[fitted_on], y[fitted_on], target, recall_target
        )
        if edges is None:
            continue
        calibration, include_at, exclude_at = edges
        p = calibration.probabilities(scores[held], rule[held])
        calls[held] = np.where(p >= include_at, 1, np.where(p <= exclude_at, -1, 0))
    decided_in = calls == 1
    hits = int((decided_in & y).sum())
    return (
        hits / max(int(decided_in.sum()), 1),
        hits / max(int(y.sum()), 1),
        float((calls == 0).mean()),
    )


def fit_calibration(
    scores: Sequence[float], rule: Sequence[bool], labels: np.ndarray
) -> Calibration:
    features = np.column_stack(
        [[logit(s) for s in scores], np.asarray(rule, dtype=float)]
    )
    model = LogisticRegression(C=1.0, solver="liblinear", random_state=0)
    model.fit(features, labels.astype(int))
    slope, rule_shift = (float(x) for x in model.coef_[0])
    return Calibration(slope, rule_shift, float(model.intercept_[0]))


def _include_edge(p: np.ndarray, y: np.ndarray, target: float) -> float:
    """The lowest probability at and above which the decided papers' precision
    meets the target; above every paper (nothing automatic) if none does. A cut
    falls only between different values: a threshold takes all papers tied at it."""
    order = np.argsort(-p, kind="stable")
    ordered = p[order]
    precision = np.cumsum(y[order]) / np.arange(1, len(p) + 1)
    last_of_run = np.append(ordered[1:] != ordered[:-1], True)
    meeting = np.flatnonzero((precision >= target) & last_of_run)
    return float(ordered[meeting[-1]]) if len(meeting) else 1.0 + EPSILON


def _exclude_edge(p: np.ndarray, y: np.ndarray, recall_target: float) -> float:
    """The highest probability at and below which lie at most 1 - recall_target
    of the relevant decided papers: automatic exclusions keep that share of the
    topic's papers; below every paper if none."""
    order = np.argsort(p, kind="stable")
    ordered = p[order]
    lost = np.cumsum(y[order]) / max(int(y.sum()), 1)
    last_of_run = np.append(ordered[1:] != ordered[:-1], True)
    meeting = np.flatnonzero((lost <= 1 - recall_target) & last_of_run)
    return float(ordered[meeting[-1]]) if len(meeting) else -EPSILON
