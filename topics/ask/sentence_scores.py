"""Scoring a question's candidate sentences for the extractive answerer
(topics.ask.extractive): coverage of the question's weighted terms, its phrases
and their proximity, and priors for the paper's rank and the sentence's place.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from topics.ask.retrieval import Source
from topics.ask.text import STOP_WORDS
from topics.ask.text import split_sentences
from topics.ask.text import stem
from topics.ask.text import token_stems

MIN_WORDS = 6
PROXIMITY_WINDOW = 10
# Added to every question term's rarity: in a topic about credit assignment
# "credit" is in every paper, yet a sentence without it rarely answers.
WEIGHT_FLOOR = 1.0
RANK_DECAY = 0.35
POSITION_DECAY = 0.1
# An abstract's first sentence is most often background ("LLM agents are
# increasingly..."); sentences in the first person say what the paper does or
# found, which is what an answer quotes.
BACKGROUND = 0.8
CONTRIBUTION = 1.3
DEFINES = 1.6
FIRST_PERSON = re.compile(r"\b(?:we|our|this (?:paper|work|study))\b", re.IGNORECASE)
# The sentence that says what the paper's approach is: "We propose DASH, which
# assigns segment-level credit...". A claim quotes it beside the paper's best
# match, when it shares a term with the question.
DEFINING = re.compile(
    r"\b(?:we|this (?:paper|work|study)|[A-Z][\w-]*)\s+(?:\w+\s+){0,2}?"
    r"(?:propose|introduce|present|develop)[sd]?\b"
)
# ... and one of the rarer half of the question's terms: a sentence holding only
# the common ones ("agents", "RL") says where the question is, not what it asks.
FOCUS_SHARE = 0.5
# AskPDF's first source starts with metadata lines: short, yet quotable.
METADATA_PREFIXES = ("Authors:", "First announced:", "Primary category:", "Journal")


@dataclass(frozen=True)
class Candidate:
    source: Source
    position: int
    text: str
    score: float
    content: frozenset[str]  # its content stems, for near-duplicate checks
    coverage: float  # the share of the question's term weight it holds
    on_focus: bool  # holds one of the question's rarest terms (_focus)


def scored_sentences(
    wanted: list[str],
    bigrams: set[tuple[str, str]],
    sources: Sequence[Source],
    weights: Mapping[str, float] | None = None,
) -> list[Candidate]:
    """Every quotable sentence sharing a content term with the question,
    scored; weights: {stem: rarity in the scope}, else rarity among the
    sentences."""
    sentences = [
        (source, position, text, token_stems(text))
        for source in sources
        for position, text in enumerate(quotable_sentences(source))
    ]
    weights = weights or _sentence_rarity(
        wanted, [set(tokens) for *_, tokens in sentences]
    )
    weighted = {
        term: weights[term] + WEIGHT_FLOOR for term in wanted if weights.get(term)
    }
    total = sum(weighted.values())
    if not total:
        return []
    counts = _sentence_counts(sentences)
    focus = _focus(weighted)
    found = []
    for source, position, text, tokens in sentences:
        relevance = _relevance(tokens, weighted, bigrams) / total
        if relevance <= 0:
            continue
        covered = sum(weighted[t] for t in set(tokens) & weighted.keys())
        prior = _rank_prior(source.number) * _position_prior(
            position, counts[source.number], text
        )
        content = frozenset(t for t in tokens if t not in STOP_WORDS)
        found.append(
            Candidate(
                source,
                position,
                text,
                relevance * prior,
                content,
                covered / total,
                bool(focus & set(tokens)),
            )
        )
    found.sort(key=lambda c: (-c.score, c.source.number, c.position))
    return found


def quotable_sentences(source: Source) -> list[str]:
    """The source's sentences that may be quoted: not its paper's title (nor
    pieces of it), not a title line, not a fragment."""
    title = _normalized(source.title)
    text = " ".join(source.text.split())
    for prefix in (f"{source.title}. ", "Title: "):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    quotable = []
    for sentence in split_sentences(text):
        bare = _normalized(sentence)
        if not bare or bare in title or sentence.startswith("Title:"):
            continue
        short = len(sentence.split()) < MIN_WORDS
        # A fragment ("Code is public.", a piece of a list) says nothing.
        if short and not sentence.startswith(METADATA_PREFIXES):
            continue
        quotable.append(sentence)
    return quotable


def _normalized(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _focus(weights: dict[str, float]) -> set[str]:
    """The question's rarer terms (FOCUS_SHARE of them, at least one): what it
    asks about, where the commoner ones ("agents", "RL") say where."""
    ranked = sorted(weights, key=lambda t: -weights[t])
    return set(ranked[: max(1, math.ceil(len(ranked) * FOCUS_SHARE))])


def bigrams(sequence: list[str | None]) -> set[tuple[str, str]]:
    """The question's content words that stand side by side, as stem pairs."""
    return {(stem(a), stem(b)) for a, b in pairwise(sequence) if a and b}


def _relevance(
    tokens: list[str], weights: dict[str, float], bigrams: set[tuple[str, str]]
) -> float:
    """Coverage of the question's weight, scaled by how close the matched terms
    stand, plus a bonus for the question's phrases."""
    matched = {t for t in tokens if weights.get(t)}
    if not matched:
        return 0.0
    coverage = sum(weights[t] for t in matched)
    phrases = sum(
        weights.get(a, 0.0) + weights.get(b, 0.0)
        for a, b in set(pairwise(tokens)) & bigrams
    )
    return coverage * (0.5 + 0.5 * _proximity(tokens, weights, coverage)) + (
        0.5 * phrases
    )


def _proximity(tokens: list[str], weights: dict[str, float], coverage: float) -> float:
    """The share of the matched weight found within one window of a few words."""
    best = 0.0
    for start in range(max(1, len(tokens) - PROXIMITY_WINDOW + 1)):
        window = set(tokens[start : start + PROXIMITY_WINDOW])
        best = max(best, sum(weights.get(t, 0.0) for t in window))
    return best / coverage


def _rank_prior(number: int) -> float:
    return 1 / (1 + RANK_DECAY * (number - 1))


def _position_prior(position: int, count: int, text: str) -> float:
    """Background first, contributions in the first person, and a mild lean to
    the earlier of the rest."""
    if DEFINING.search(text):
        return DEFINES
    if FIRST_PERSON.search(text):
        return CONTRIBUTION
    if position == 0:
        return BACKGROUND
    return 1 - POSITION_DECAY * position / max(1, count - 1)


def _sentence_counts(sentences: list[tuple]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for source, *_ in sentences:
        counts[source.number] = counts.get(source.number, 0) + 1
    return counts


def _sentence_rarity(wanted: list[str], sentences: list[set[str]]) -> dict[str, float]:
    """Without collection weights: inverse frequency among the candidates."""
    total = len(sentences) or 1
    return {
        t: math.log(1 + total / (1 + sum(t in found for found in sentences)))
        for t in wanted
    }
