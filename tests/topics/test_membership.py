"""The membership decision and its thresholds, pure (topics.membership): a table
of cases, no database."""

from __future__ import annotations

import pytest

from topics.membership import Calibration
from topics.membership import Decision
from topics.membership import Evidence
from topics.membership import Mode
from topics.membership import Source
from topics.membership import Thresholds
from topics.membership import decide
from topics.membership import fit_thresholds

# Probability = score (slope 1, no shift): the band is (0.2, 0.8).
IDENTITY = Calibration(slope=1.0, rule_shift=0.0, intercept=0.0)
BAND = Thresholds(
    IDENTITY, include_at=0.8, exclude_at=0.2, precision=0.96, recall=0.9, band=0.05
)

AUTO = Mode.AUTO
CASES = [
    # (case, evidence, member, queued, pending, vetoed)
    (
        "pin beats all",
        Evidence(
            AUTO, rule=False, score=0.01, thresholds=BAND, pinned=True, verdict=False
        ),
        Source.PIN,
        False,
        False,
        False,
    ),
    (
        "exclusion beats all",
        Evidence(
            AUTO, rule=True, score=0.99, thresholds=BAND, excluded=True, verdict=True
        ),
        None,
        False,
        False,
        False,
    ),
    (
        "flagged pin stays queued",
        Evidence(AUTO, rule=True, score=0.5, thresholds=BAND, pinned=True, flags=2),
        Source.PIN,
        True,
        False,
        False,
    ),
    (
        "rule only: rule match",
        Evidence(Mode.RULE, rule=True, score=0.01),
        Source.RULE,
        False,
        False,
        False,
    ),
    (
        "rule only: no match",
        Evidence(Mode.RULE, rule=False, score=0.99),
        None,
        False,
        False,
        False,
    ),
    (
        "no score: the rule decides",
        Evidence(AUTO, rule=True, thresholds=BAND),
        Source.RULE,
        False,
        False,
        False,
    ),
    (
        "suggest: disagreement queued",
        Evidence(Mode.SUGGEST, rule=False, score=0.7, thresholds=BAND),
        None,
        True,
        False,
        False,
    ),
    (
        "suggest: agreement not queued",
        Evidence(Mode.SUGGEST, rule=True, score=0.7),
        Source.RULE,
        False,
        False,
        False,
    ),
    (
        "auto without thresholds acts as suggest",
        Evidence(AUTO, rule=True, score=0.3),
        Source.RULE,
        True,
        False,
        False,
    ),
    (
        "auto: sure in by rule",
        Evidence(AUTO, rule=True, score=0.9, thresholds=BAND),
        Source.RULE,
        False,
        False,
        False,
    ),
    (
        "auto: sure in by model",
        Evidence(AUTO, rule=False, score=0.8, thresholds=BAND),
        Source.MODEL,
        False,
        False,
        False,
    ),
    (
        "auto: sure out",
        Evidence(AUTO, rule=False, score=0.1, thresholds=BAND),
        None,
        False,
        False,
        False,
    ),
    (
        "auto: rule match kept out, queued",
        Evidence(AUTO, rule=True, score=0.2, thresholds=BAND),
        None,
        True,
        False,
        True,
    ),
    (
        "auto: band is pending",
        Evidence(AUTO, rule=False, score=0.5, thresholds=BAND),
        None,
        True,
        True,
        False,
    ),
    (
        "auto: rule match in band is pending",
        Evidence(AUTO, rule=True, score=0.5, thresholds=BAND),
        None,
        True,
        True,
        True,
    ),
    (
        "auto: judge says in",
        Evidence(AUTO, rule=False, score=0.5, thresholds=BAND, verdict=True),
        Source.JUDGE,
        True,
        False,
        False,
    ),
    (
        "auto: judge says out of a rule match",
        Evidence(AUTO, rule=True, score=0.5, thresholds=BAND, verdict=False),
        None,
        True,
        False,
        True,
    ),
    (
        "judge ignored outside the band",
        Evidence(AUTO, rule=False, score=0.9, thresholds=BAND, verdict=False),
        Source.MODEL,
        False,
        False,
        False,
    ),
    (
        "curator overrides judge",
        Evidence(
            AUTO, rule=False, score=0.5, thresholds=BAND, verdict=True, excluded=True
        ),
        None,
        False,
        False,
        False,
    ),
]


@pytest.mark.parametrize(
    ("evidence", "member", "queued", "pending", "vetoed"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_decide(evidence, member, queued, pending, vetoed):
    decision = decide(evidence)

    assert isinstance(decision, Decision)
    assert (decision.member, decision.queued, decision.pending, decision.vetoed) == (
        member,
        queued,
        pending,
        vetoed,
    )


def test_automatic_decisions_carry_the_calibrated_probability():
    shifted = Thresholds(
        Calibration(slope=1.0, rule_shift=2.0, intercept=0.0), 0.8, 0.2, 1, 1, 0
    )

    # logit(0.5) + 2 = 2: probability 0.88, in thanks to the rule.
    decision = decide(Evidence(AUTO, rule=True, score=0.5, thresholds=shifted))

    assert decision.member == Source.RULE
    assert decision.probability == pytest.approx(0.8808, abs=1e-4)


def test_thresholds_keep_both_targets_on_the_decisions():
    # Scores of 40 decided papers: relevant ones high, with two errors each way.
    relevant = [0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.3, 0.2] * 2
    other = [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.7, 0.8] * 2
    scores = relevant + other
    labels = [True] * len(relevant) + [False] * len(other)

    fitted = fit_thresholds(
        scores, [False] * len(scores), labels, target=0.95, recall_target=0.95
    )

    assert fitted is not None
    assert fitted.exclude_at < fitted.include_at
    p = [fitted.calibration.probability(s, False) for s in scores]
    decided_in = [
        label for label, q in zip(labels, p, strict=True) if q >= fitted.include_at
    ]
    decided_out = [
        label for label, q in zip(labels, p, strict=True) if q <= fitted.exclude_at
    ]
    assert sum(decided_in) / len(decided_in) >= 0.95
    assert decided_out.count(True) <= 0.05 * sum(labels)
    assert 0 < fitted.band < 1


def test_what_the_edges_will_do_is_measured_on_decisions_they_did_not_see():
    """The top three decisions are relevant by chance: the edge drawn on them all
    meets 0.95 there, while edges drawn without some of them let the errors just
    below in. The precision expected of the edges is the second."""
    ranking = "TTTFTTFTFTTFTFFTFFTFFFTFFFFTFFFFFFTFFFFF"
    scores = [0.99 - 0.024 * n for n in range(len(ranking))]
    labels = [mark == "T" for mark in ranking]

    fitted = fit_thresholds(
        scores, [False] * len(scores), labels, target=0.95, recall_target=0.9
    )

    assert fitted is not None
    p = [fitted.calibration.probability(s, False) for s in scores]
    decided_in = [
        label for label, q in zip(labels, p, strict=True) if q >= fitted.include_at
    ]
    assert decided_in == [True, True, True]
    assert fitted.precision < 0.95
    assert fitted.recall < len(decided_in) / sum(labels)


def test_a_higher_target_widens_the_band():
    relevant = [0.9, 0.85, 0.8, 0.7, 0.6, 0.55, 0.45, 0.3] * 3
    other = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.65, 0.75] * 3
    labels = [True] * len(relevant) + [False] * len(other)
    scores = relevant + other
    rule = [False] * len(scores)

    loose = fit_thresholds(scores, rule, labels, target=0.8, recall_target=0.8)
    strict = fit_thresholds(scores, rule, labels, target=0.99, recall_target=0.8)

    assert strict.band > loose.band


def test_a_lower_recall_target_excludes_more_and_narrows_the_band():
    # Relevant papers the model scores low cost a high recall target a wide band.
    relevant = [0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.4, 0.3, 0.2, 0.1] * 2
    other = [0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45] * 2
    labels = [True] * len(relevant) + [False] * len(other)
    scores = relevant + other
    rule = [False] * len(scores)

    keeping = fit_thresholds(scores, rule, labels, target=0.95, recall_target=0.95)
    trading = fit_thresholds(scores, rule, labels, target=0.95, recall_target=0.8)

    assert trading.exclude_at > keeping.exclude_at
    assert trading.include_at == keeping.include_at
    assert trading.band < keeping.band
    p = [trading.calibration.probability(score, False) for score in relevant]
    lost = sum(q <= trading.exclude_at for q in p)
    assert 0 < lost <= 0.2 * len(relevant)


@pytest.mark.parametrize("against", ["scores", "rule"])
def test_decisions_that_run_against_the_model_or_the_rule_fit_no_thresholds(against):
    """Deciding only the queue's disagreements (the model's low scorers in, the
    rule matches it doubts out) teaches a calibration that turns the score or
    the rule around: a band drawn on it took in what the model scored lowest,
    most of the corpus. The rule keeps deciding instead."""
    low = [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4] * 2
    high = [0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95] * 2
    if against == "scores":
        scores, rule = low + high, [False] * 32
    else:
        # The same scores for both kinds: only the rule tells them apart.
        scores, rule = high + high, [False] * 16 + [True] * 16
    labels = [True] * 16 + [False] * 16

    fitted = fit_thresholds(scores, rule, labels, target=0.95, recall_target=0.9)

    assert fitted is None


def test_too_few_decisions_of_a_kind_fit_no_thresholds():
    scores = [0.9, 0.8, 0.7, 0.2, 0.1, 0.15, 0.05, 0.3, 0.25]
    labels = [True, True, True, False, False, False, False, False, False]

    assert (
        fit_thresholds(scores, [False] * 9, labels, target=0.95, recall_target=0.9)
        is None
    )


def test_calibration_round_trips_through_json():
    data = Calibration(1.5, 0.7, -0.2).to_json()

    assert Calibration.from_json(data) == Calibration(1.5, 0.7, -0.2)
    assert Calibration.from_json({}) is None


def test_no_thresholds_when_nothing_reaches_the_target():
    """A band over every rule match would empty the topic: the rule decides."""
    scores = [0.9, 0.8, 0.7, 0.6, 0.5] * 2
    labels = [True, False] * 5

    assert (
        fit_thresholds(scores, [True] * 10, labels, target=0.95, recall_target=0.9)
        is None
    )
