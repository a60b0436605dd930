"""Which words a PostgreSQL search marks: each word's lexemes asked of the
database once per process (papers.stemming)."""

from __future__ import annotations

import pytest
from django.db import connection

from papers import stemming
from papers.stemming import matched_words

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
    [title, abstract] = matched_words(
        ["Learned planners", "She learns; LEARNING to learn, the learner."],
        "learning planner",
        "english",
    )

    assert title == {"learned", "planners"}
    # "learner" stems to 'learner', not 'learn'.
    assert abstract == {"learns", "learning", "learn"}


def test_a_query_of_stop_words_matches_nothing():
    assert matched_words(["The agent and the tool"], "the and", "english") == [set()]


def test_each_word_is_asked_of_the_database_once(django_assert_num_queries):
    with django_assert_num_queries(1):
        matched_words(["Tool use by agents"], "agent", "english")

    with django_assert_num_queries(0):
        assert matched_words(["By agents, tool use"], "agents", "english") == [
            {"agents"}
        ]


def test_what_is_known_stays_bounded(monkeypatch):
    monkeypatch.setattr(stemming, "MAX_KNOWN", 4)
    matched_words(["one two three"], "one", "english")

    matched_words(["four five"], "four", "english")

    assert len(stemming._known) <= 4
    assert matched_words(["four five"], "five", "english") == [{"five"}]
