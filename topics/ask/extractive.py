"""The offline answerer: a query-focused extractive answer, grouped by approach.

Every sentence of the retrieved papers (never their titles) is scored against
the question:
- coverage: the weight of the question's content terms it contains, each term
  weighted by its rarity in the scope's collection (topics.ask.retrieval
  .term_weights), or among the candidate sentences when that is not known;
- phrases and proximity: question words side by side in the sentence ("reward
  shaping", "multi-turn") and question terms close together count extra;
- priors: the paper's retrieval rank, and the sentence's place in its abstract
  (the first is mostly background; "we propose X" says what the paper does).
A sentence with no content term of the question is never quoted. Claims, one
per paper, are chosen by maximal marginal relevance; a near-duplicate from
another paper adds its citation to the claim it repeats (one claim per
approach). A claim quotes its paper's best sentence, with the one defining its
approach (or the next best), the first claim one more. The best-ranked paper
with a matching sentence always has a voice. Claims are ordered by importance
and the sources renumbered so that citations read [1], [2], [3] from the top;
a lead sentence names the approaches, and the retrieved papers not quoted are
listed as "also relevant".

The constants were set on data/ask/answers.json (bench/ask): there is no
held-out set, so its figures flatter the answerer somewhat.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import replace

from topics.ask.answerers import Answer
from topics.ask.answerers import Approach
from topics.ask.citations import Claim
from topics.ask.retrieval import Source
from topics.ask.sentence_scores import DEFINING
from topics.ask.sentence_scores import Candidate
from topics.ask.sentence_scores import bigrams
from topics.ask.sentence_scores import scored_sentences
from topics.ask.text import STOP_WORDS
from topics.ask.text import join_names
from topics.ask.text import question_sequence
from topics.ask.text import stem
from topics.ask.text import without_references

MAX_CLAIMS = 5
# On one paper (AskPDF) its abstract and passages may each give two sentences.
PER_SOURCE_ONE_PAPER = 2
# MMR: how much relevance counts against resemblance to what is already chosen.
MMR_LAMBDA = 0.7
# Content-word overlap (Jaccard) at which a sentence repeats a chosen claim.
DUPLICATE = 0.5
# A claim's first sentence must hold this share of the question's term weight:
# one common word of a long question ("agents") does not make a paper answer
# it. (Its supporting sentences, such as the one defining its approach, need
# only share a term.)
MIN_COVERAGE = 0.15
# A claim far weaker than the best one is noise, not an answer.
MIN_SHARE_OF_BEST = 0.2
# More sentences of a claim's paper, if they score this share of its first;
# the first claim, the most important, may have two more, the others one.
SECOND_SHARE = 0.2
FIRST_CLAIM_MORE = 2
# A colon's head up to this long names the paper; longer titles are cut.
NAME_MAX_WORDS = 7
ACRONYM = re.compile(
    r"\b(?:propose|proposes|introduce|introduces|present|presents|call)\b"
    r"[^.()]{0,120}?\(\s*([A-Z][A-Za-z0-9$^{}\\-]{1,15})\s*\)"
)


class ExtractiveAnswerer:
    """Quotes the sentences that best answer the question, one per approach."""

    name = "extractive"

    def __init__(
        self,
        weights: Mapping[str, float] | None = None,
        *,
        reading_order: bool = True,
    ) -> None:
        # weights: {stem: rarity in the scope}; reading_order=False keeps the
        # retrieval's numbers (a streamed page has already shown them).
        self.weights = weights
        self.reading_order = reading_order

    def answer(self, question: str, sources: Sequence[Source]) -> Answer:
        sequence = question_sequence(question)
        wanted = list(dict.fromkeys(stem(word) for word in sequence if word))
        candidates, edited = [], set()
        # A sentence is quoted without its paper's own reference numbers, or
        # not at all where one is a word of it ("as shown in [12]").
        for candidate in scored_sentences(
            wanted, bigrams(sequence), sources, self.weights
        ):
            text = without_references(candidate.text)
            if text is not None and text != candidate.text:
                candidate = replace(candidate, text=text)
                edited.add(text)
            if text is not None:
                candidates.append(candidate)
        one_paper = len({source.paper.pk for source in sources}) == 1
        groups = _choose(candidates, one_paper)
        claims, references_left_out = [], False
        for index, group in enumerate(groups):
            more = 0 if one_paper else (FIRST_CLAIM_MORE if index == 0 else 1)
            quoted = sorted(
                [group[0], *_supporting(group, groups, candidates, more)],
                key=_position,
            )
            text = " ".join(c.text for c in quoted)
            claims.append(Claim(text=text, citations=_numbers(group)))
            references_left_out |= any(c.text in edited for c in quoted)
        approaches = [] if one_paper else _approaches(groups, sources)
        answer = Answer(
            claims=claims,
            sources=list(sources),
            answerer=self.name,
            approaches=approaches,
            references_left_out=references_left_out,
        )
        return in_reading_order(answer) if self.reading_order else answer


def _choose(candidates: list[Candidate], one_paper: bool) -> list[list[Candidate]]:
    """Claims by maximal marginal relevance, each a list: the quoted sentence,
    then the sentences of other papers that repeat it (cited with it)."""
    if not candidates:
        return []
    top = candidates[0].score
    matching = candidates
    # One paper's own sentences all answer about it: no focus needed there.
    candidates = [
        c
        for c in candidates
        if c.score >= MIN_SHARE_OF_BEST * top
        and c.coverage >= MIN_COVERAGE
        and (c.on_focus or one_paper)
    ]
    if not candidates:
        return []
    groups: list[list[Candidate]] = []
    taken: dict[int, int] = {}  # per paper (or, on one paper, per source)
    limit = PER_SOURCE_ONE_PAPER if one_paper else 1
    key = (lambda c: c.source.number) if one_paper else (lambda c: c.source.paper.pk)
    pool = list(candidates)
    while pool and len(groups) < MAX_CLAIMS:
        pool = [c for c in pool if taken.get(key(c), 0) < limit]
        if not pool:
            break
        best = max(pool, key=lambda c: _marginal(c, groups, top))
        pool.remove(best)
        duplicate = _repeated(best, groups)
        if duplicate is not None:
            if not one_paper and _cites_new_paper(best, duplicate):
                duplicate.append(best)
                taken[key(best)] = limit
            continue
        groups.append([best])
        taken[key(best)] = taken.get(key(best), 0) + 1
    _give_best_paper_a_voice(matching, groups)
    return sorted(groups, key=lambda group: -sum(c.score for c in group))


def _marginal(candidate: Candidate, groups: list[list[Candidate]], top: float) -> float:
    resemblance = max(
        (_similarity(candidate, group[0]) for group in groups), default=0.0
    )
    return MMR_LAMBDA * candidate.score / top - (1 - MMR_LAMBDA) * resemblance


def _similarity(a: Candidate, b: Candidate) -> float:
    union = a.content | b.content
    return len(a.content & b.content) / len(union) if union else 0.0


def _repeated(
    candidate: Candidate, groups: list[list[Candidate]]
) -> list[Candidate] | None:
    for group in groups:
        if _similarity(candidate, group[0]) >= DUPLICATE:
            return group
    return None


def _cites_new_paper(candidate: Candidate, group: list[Candidate]) -> bool:
    return all(c.source.paper.pk != candidate.source.paper.pk for c in group)


def _supporting(
    group: list[Candidate],
    groups: list[list[Candidate]],
    candidates: list[Candidate],
    count: int,
) -> list[Candidate]:
    """Up to `count` more sentences of the claim's paper: the one defining its
    approach, then the next best while nearly as good; never a repetition."""
    first = group[0]
    chosen = [g[0] for g in groups]
    same = [
        c
        for c in candidates
        if c.source.number == first.source.number
        and c is not first
        and all(_similarity(c, other) < DUPLICATE for other in chosen)
    ]
    picked: list[Candidate] = []
    if not DEFINING.search(first.text):
        picked += [c for c in same if DEFINING.search(c.text)][:1]
    for candidate in same:
        if len(picked) >= count or candidate.score < SECOND_SHARE * first.score:
            break
        if candidate not in picked and candidate.position:
            picked.append(candidate)
    return picked[:count]


def _position(candidate: Candidate) -> int:
    return candidate.position


def _give_best_paper_a_voice(
    candidates: list[Candidate], groups: list[list[Candidate]]
) -> None:
    """The best-ranked paper that has a matching sentence is always quoted: its
    best sentence replaces the weakest claim if need be."""
    first = min(candidates, key=lambda c: c.source.number).source.number
    if any(c.source.number == first for group in groups for c in group):
        return
    best = next(c for c in candidates if c.source.number == first)
    if len(groups) >= MAX_CLAIMS:
        groups.remove(min(groups, key=lambda group: group[0].score))
    groups.append([best])


def _numbers(group: list[Candidate]) -> tuple[int, ...]:
    return tuple(dict.fromkeys(c.source.number for c in group))


def _approaches(
    groups: list[list[Candidate]], sources: Sequence[Source]
) -> list[Approach]:
    """What the lead sentence names: each claim's papers, by a short name."""
    approaches = []
    for group in groups:
        papers = list({c.source.paper.pk: c.source for c in group}.values())
        names = [approach_name(source, sources) for source in papers]
        approaches.append(Approach(name=join_names(names), citations=_numbers(group)))
    return approaches


def approach_name(source: Source, sources: Sequence[Source] = ()) -> str:
    """A paper's short name: the part of its title before a colon ("TRACE"), an
    acronym its abstract introduces ("DRE") that none of the other sources
    uses (those name the field: "Automatic Speech Recognition (ASR)"), or its
    title, shortened."""
    title = source.title
    head, colon, _ = title.partition(":")
    if colon and len(head.split()) <= NAME_MAX_WORDS:
        return head
    match = ACRONYM.search(" ".join(source.paper.abstract.split()))
    if match and not _used_elsewhere(match.group(1), source, sources):
        return match.group(1)
    words = (head if colon else title).split()
    if len(words) <= NAME_MAX_WORDS:
        return " ".join(words)
    shortened = words[:NAME_MAX_WORDS]
    while shortened[-1].lower() in STOP_WORDS:  # not "The Dark Room in the…"
        shortened.pop()
    return " ".join(shortened) + "…"


def _used_elsewhere(acronym: str, source: Source, sources: Sequence[Source]) -> bool:
    word = re.compile(rf"(?<!\w){re.escape(acronym)}(?!\w)")
    others = (other for other in sources if other.paper.pk != source.paper.pk)
    return any(word.search(other.text) for other in others)


def in_reading_order(answer: Answer) -> Answer:
    """The answer with its sources renumbered: the cited ones 1, 2, 3 in the
    order the claims cite them, then the rest in retrieval order."""
    order: list[int] = []
    for claim in answer.claims:
        order += [n for n in claim.citations if n not in order]
    order += [s.number for s in answer.sources if s.number not in order]
    new = {old: position for position, old in enumerate(order, 1)}
    sources = sorted(
        (replace(s, number=new[s.number]) for s in answer.sources),
        key=lambda s: s.number,
    )
    return Answer(
        claims=[
            Claim(text=c.text, citations=tuple(new[n] for n in c.citations))
            for c in answer.claims
        ],
        sources=sources,
        answerer=answer.answerer,
        notice=answer.notice,
        dropped=answer.dropped,
        approaches=[
            Approach(name=a.name, citations=tuple(new[n] for n in a.citations))
            for a in answer.approaches
        ],
        references_left_out=answer.references_left_out,
    )
