"""Retrieval quality on the labeled questions (data/ask/questions.json).

DATA: loads from the demo corpus in data/demo (shipped in the repo) only the
papers the rules of the questions' topics can match (1,834 of 25,002, by the
ids in data/ask/scope_ids.txt, rebuilt by `bench.ask --rebuild-scope-ids` and
checked by test_scope_ids.py), through the real upsert and tagging; other
papers cannot be in a question's scope.
bench/ask.py prints the same figures per topic.
"""

from __future__ import annotations

import pytest

from bench.ask import ask_all
from bench.ask import load_papers
from bench.ask import load_questions
from bench.ask import read_scope_ids
from bench.ask import rows_by_id
from bench.ask import summary

RECALL_AT_5_FLOOR = 0.80
MRR_FLOOR = 0.85


@pytest.mark.django_db
def test_recall_at_5_on_the_labeled_questions_stays_above_the_floor():
    questions = load_questions()
    assert len(questions) >= 30
    ids = read_scope_ids()
    assert load_papers(rows_by_id(ids)) == len(ids)

    count, recall, mrr = summary(ask_all(questions))["all"]

    assert count == len(questions)
    assert recall >= RECALL_AT_5_FLOOR
    assert mrr >= MRR_FLOOR
