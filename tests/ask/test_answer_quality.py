"""The offline answers to the labeled questions (data/ask/answers.json).

DATA: the same subset of the demo corpus as test_recall.py (the ids of
data/ask/scope_ids.txt), through the real upsert and tagging; each question is
answered from the sources the site would retrieve for it. bench/ask.py prints
the same figures.
"""

from __future__ import annotations

import pytest

from bench.ask import answer_all
from bench.ask import answer_summary
from bench.ask import load_labeled_answers
from bench.ask import load_papers
from bench.ask import read_scope_ids
from bench.ask import rows_by_id

ALL_MUST_CITE_FLOOR = 0.80
KEY_FACT_FLOOR = 0.60


@pytest.mark.django_db
def test_offline_answers_cite_the_must_cite_papers_and_hold_the_key_facts():
    labels = load_labeled_answers()
    assert len(labels) >= 30
    ids = read_scope_ids()
    assert load_papers(rows_by_id(ids)) == len(ids)

    figures = answer_summary(answer_all(labels))

    assert figures["all must-cite cited"] >= ALL_MUST_CITE_FLOOR
    assert figures["key-fact coverage"] >= KEY_FACT_FLOOR
    assert figures["claims with a question term"] == 1.0
    assert figures["title-sentences"] == 0


def test_labels_cite_relevant_papers_and_facts_come_from_their_abstracts():
    from bench.ask import load_questions

    relevant = {q["id"]: set(q["relevant"]) for q in load_questions()}
    abstracts = {
        row["id"]: " ".join(row["abstract"].split()).lower()
        for row in rows_by_id({i for ids in relevant.values() for i in ids})
    }
    for label in load_labeled_answers():
        assert set(label["must_cite"]) <= relevant[label["id"]], label["id"]
        text = " ".join(abstracts[i] for i in label["must_cite"])
        for fact in label["key_facts"]:
            assert " ".join(fact.lower().split()) in text, (label["id"], fact)
