"""Scoring the sentences an extractive answer may quote (no database)."""

from __future__ import annotations

from tests.ask.test_extractive import ECHO
from tests.ask.test_extractive import QUESTION
from tests.ask.test_extractive import TRACE
from tests.ask.test_extractive import UNRELATED
from topics.ask.sentence_scores import bigrams
from topics.ask.sentence_scores import scored_sentences
from topics.ask.text import question_sequence
from topics.ask.text import question_terms
from topics.ask.text import stem
from topics.ask.text import stems


def score(sources, weights=None):
    sequence = question_sequence(QUESTION)
    wanted = list(dict.fromkeys(stem(word) for word in sequence if word))
    return scored_sentences(wanted, bigrams(sequence), sources, weights)


def test_only_sentences_sharing_a_question_term_are_candidates_best_first():
    found = score([TRACE, ECHO, UNRELATED])

    assert found
    assert all(c.source is not UNRELATED for c in found)
    assert [c.score for c in found] == sorted((c.score for c in found), reverse=True)
    assert found[0].text.startswith("We ")  # a contribution, not the background


def test_collection_weights_replace_the_sentences_own_rarity():
    unweighted = score([TRACE, ECHO])
    only_credit = score([TRACE, ECHO], weights={stem("credit"): 1.0})

    assert {c.text for c in only_credit} < {c.text for c in unweighted}
    assert all("credit" in c.text for c in only_credit)


def test_question_words_side_by_side_are_its_phrases():
    assert (stem("multi"), stem("turn")) in bigrams(question_sequence(QUESTION))


def test_an_accented_word_is_one_word_as_the_papers_write_it():
    """ "naïve" split into "na" and "ve", and matched neither "naive" nor itself."""
    assert question_terms("Are naïve Schrödinger bridges Gödel-complete?") == [
        "naive",
        "schrodinger",
        "bridges",
        "godel-complete",
    ]
    assert stems("A naive Schrödinger bridge") >= {"naive", "schrodinger"}
