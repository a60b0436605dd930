"""The reader model's arithmetic (topics.foryou): no database."""

from __future__ import annotations

import numpy as np

from topics.foryou import KEPT_WEIGHTS
from topics.foryou import fit_reader
from topics.foryou import nearest_positive
from topics.vectors import Vocabulary

AGENTS = [
    "Reinforcement learning trains language model agents to call tools",
    "Policy optimisation with verifiable rewards for language model web agents",
    "GRPO improves tool calling agents through reinforcement learning from rewards",
    "Language model agents learn to search the web with reinforcement learning rewards",
    "Multi-turn reinforcement learning for coding agents with language model policies",
    "Agents built on language models trained by reinforcement learning to use tools",
]
GALAXIES = [
    "Stellar populations of dwarf galaxies observed with spectroscopy",
    "Dark matter halos around spiral galaxies from rotation curves",
    "Star formation rates in galaxy clusters at high redshift",
    "Spectroscopy of quasars and the intergalactic medium at high redshift",
    "Rotation curves of dwarf galaxies and dark matter profiles",
    "Galaxy mergers and star formation in clusters",
]
TEXTS = AGENTS + GALAXIES


def _vectors():
    return Vocabulary.fit(TEXTS)


def test_a_readers_model_ranks_papers_like_their_saves_first():
    _, vectors = _vectors()
    model = fit_reader(vectors, positives=[0, 1, 2])
    scores = model.scores(vectors)
    unrated_agents = scores[3:6]
    assert unrated_agents.min() > scores[6:].max()


def test_a_downvote_counts_against_papers_like_it():
    _, vectors = _vectors()
    liked = fit_reader(vectors, positives=[0, 6])
    disliked = fit_reader(vectors, positives=[0, 6], negatives=[10])
    # Papers 7 and 10 are both about dark matter and rotation curves.
    assert disliked.scores(vectors)[7] < liked.scores(vectors)[7]


def test_the_same_signal_gives_the_same_model():
    _, vectors = _vectors()
    first = fit_reader(vectors, positives=[0, 1], negatives=[8], seed=7)
    again = fit_reader(vectors, positives=[0, 1], negatives=[8], seed=7)
    assert np.array_equal(first.scores(vectors), again.scores(vectors))


def test_only_the_largest_weights_are_kept():
    _, vectors = _vectors()
    model = fit_reader(vectors, positives=[0, 1])
    assert model.weights.nnz <= min(KEPT_WEIGHTS, vectors.shape[1])
    assert model.weights.shape == (1, vectors.shape[1])


def test_the_vocabulary_vectorises_new_text_to_unit_rows():
    vocabulary, _ = _vectors()
    new = vocabulary.vectors(
        ["Tool calling agents trained with reinforcement learning", ""]
    )
    lengths = np.sqrt(new.multiply(new).sum(axis=1)).A.ravel()
    assert np.isclose(lengths[0], 1.0)
    assert lengths[1] == 0  # no known term: scored by the intercept alone, no error


def test_each_recommendation_names_the_saved_paper_most_like_it():
    _, vectors = _vectors()
    positives = vectors[[0, 6]]  # one about agents, one about galaxies
    reasons = nearest_positive(vectors[[4, 10]], positives)
    assert list(reasons) == [0, 1]
