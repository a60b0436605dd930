"""topics.rule_tags.decide: which rule tags a chunk adds, changes and removes,
decided without the database."""

from __future__ import annotations

import pytest

from topics.rule_tags import TagDecision
from topics.rule_tags import decide

A = (1, 10)  # (topic, paper)
B = (1, 11)
RULE, PIN, MODEL = "rule", "pin", "model"

CASES = {
    "a new match is added": (
        {A: ("agent",)},
        {},
        set(),
        set(),
        TagDecision({}, frozenset(), {}, {A: ("agent",)}),
    ),
    "an unchanged rule tag is left alone": (
        {A: ("agent",)},
        {A: (RULE, ["agent"])},
        set(),
        set(),
        TagDecision({}, frozenset(), {}, {}),
    ),
    "a rule tag with other terms gets the new ones": (
        {A: ("agent", "rl")},
        {A: (RULE, ["agent"])},
        set(),
        set(),
        TagDecision({}, frozenset(), {A: ("agent", "rl")}, {}),
    ),
    "a rule tag no longer matched is removed": (
        {},
        {A: (RULE, ["agent"])},
        set(),
        set(),
        TagDecision({}, frozenset({A}), {}, {}),
    ),
    "a pin stays whether matched or not": (
        {A: ("agent",)},
        {A: (PIN, []), B: (PIN, [])},
        set(),
        set(),
        TagDecision({}, frozenset(), {}, {}),
    ),
    "a model tag the rule matches becomes a rule tag": (
        {A: ("agent",)},
        {A: (MODEL, [])},
        set(),
        set(),
        TagDecision({}, frozenset(), {A: ("agent",)}, {}),
    ),
    "a model tag the rule does not match stays": (
        {},
        {A: (MODEL, [])},
        set(),
        set(),
        TagDecision({}, frozenset(), {}, {}),
    ),
    "an excluded match is not added": (
        {A: ("agent",)},
        {},
        {A},
        set(),
        TagDecision({}, frozenset(), {}, {}),
    ),
    "an excluded paper's rule tag is removed": (
        {A: ("agent",)},
        {A: (RULE, ["agent"])},
        {A},
        set(),
        TagDecision({}, frozenset({A}), {}, {}),
    ),
    "a vetoed match stays out, its veto kept with the current terms": (
        {A: ("agent", "rl")},
        {},
        set(),
        {A},
        TagDecision({A: ("agent", "rl")}, frozenset(), {}, {}),
    ),
    "a veto no longer matched is lifted": (
        {},
        {},
        set(),
        {A},
        TagDecision({}, frozenset(), {}, {}),
    ),
    "a vetoed model tag keeps its source": (
        {A: ("agent",)},
        {A: (MODEL, [])},
        set(),
        {A},
        TagDecision({A: ("agent",)}, frozenset(), {}, {}),
    ),
}


@pytest.mark.parametrize(
    ("wanted", "existing", "excluded", "vetoed", "expected"),
    CASES.values(),
    ids=CASES.keys(),
)
def test_decide(wanted, existing, excluded, vetoed, expected):
    assert (
        decide(wanted, existing=existing, excluded=excluded, vetoed=vetoed) == expected
    )


def test_new_tags_keep_the_matches_order():
    wanted = {B: ("b",), A: ("a",)}

    decision = decide(wanted, existing={}, excluded=set(), vetoed=set())

    assert list(decision.add) == [B, A]
