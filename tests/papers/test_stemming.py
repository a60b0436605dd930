"""Which words a PostgreSQL search marks: each word's lexemes asked of the
database once per process (papers.stemming)."""

from __future__ import annotations

import pytest
from django.db import connection

from papers import stemming
from papers.stemming import matched_runs

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="SQLite marks with FTS5"
    ),
]


@pytest.fixture(autouse=True)
def nothing_known(monkeypatch):
    monkeypatch.setattr(stemming, "_known", {})


def test_the_forms_the_database_stems_alike_are_matched():
    [title, abstract] = matched_runs(
        ["Learned planners", "She learns; LEARNING to learn, the learner."],
        ["learning", "planner"],
        "english",
    )

    assert title == {("learned",), ("planners",)}
    # "learner" stems to 'learner', not 'learn'.
    assert abstract == {("learns",), ("learning",), ("learn",)}


def test_a_phrase_matches_its_words_in_a_row_only():
    [text] = matched_runs(
        ["World models; the world of a model; modeled worlds, world modeling."],
        ["world model"],
        "english",
    )

    assert text == {("world", "models"), ("world", "modeling")}


def test_a_phrases_stop_words_stand_for_any_word_and_its_ends_are_dropped():
    [text] = matched_runs(
        ["A world of models, the world in models, world models."],
        ["the world of models", "in"],
        "english",
    )

    assert text == {("world", "of", "models"), ("world", "in", "models")}


def test_a_query_of_stop_words_matches_nothing():
    assert matched_runs(["The agent and the tool"], ["the", "and"], "english") == [
        set()
    ]


def test_each_word_is_asked_of_the_database_once(django_assert_num_queries):
    with django_assert_num_queries(1):
        matched_runs(["Tool use by agents"], ["agent"], "english")

    with django_assert_num_queries(0):
        assert matched_runs(["By agents, tool use"], ["agents"], "english") == [
            {("agents",)}
        ]


def test_what_is_known_stays_bounded(monkeypatch):
    monkeypatch.setattr(stemming, "MAX_KNOWN", 4)
    matched_runs(["one two three"], ["one"], "english")

    matched_runs(["four five"], ["four"], "english")

    assert sum(map(len, stemming._known.values())) <= 4
    assert matched_runs(["four five"], ["five"], "english") == [{("five",)}]


def test_a_letter_that_lowercases_to_two_keeps_its_word_whole():
    # "İ" lowercases to "i" and a combining dot: the text lowercased at once
    # would split "İzmir" at the dot; it is read a word at a time.
    [text] = matched_runs(["Robots in İzmir and IZMIR"], ["robot"], "english")

    assert text == {("robots",)}
    assert stemming._atoms("İzmir robots") == ["i\u0307zmir", "robots"]
    assert stemming._atoms("IZMIR Robots") == ["izmir", "robots"]


def test_an_ascii_text_is_split_at_every_sign_as_the_parser_splits_it():
    # Each ASCII character between letters, "_" and control characters too.
    text = "".join(f"{chr(code)}Ab{code}" for code in range(128))

    assert stemming._atoms(text) == [
        atom.lower() for atom in stemming.ATOM.findall(text)
    ]
    [runs] = matched_runs(["snake_case\x0bTools;x86_64"], ["case", "tool"], "english")
    assert runs == {("case",), ("tools",)}
