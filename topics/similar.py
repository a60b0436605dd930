"""Similar papers: each paper's nearest by the text of its title and abstract,
precomputed into papers.SimilarPaper (the top SIMILAR_SHOWN per paper).

Papers are their vectors over the shared vocabulary (topics.vectors), so a
score is the cosine of two papers' texts. The whole corpus
is compared in chunks of rows (a sparse product, CHUNK rows against every
paper at a time), so memory stays bounded by the chunk, not the corpus squared.

A paper is never similar to itself (its other versions are the same row) nor to
a paper with exactly the same title (a duplicate). Scores are rounded to 6
places and ties go to the older paper (the lower id), so a build gives the same
lists every time.

`build_all` fits the vocabulary and idf on the corpus (SimilarityIndex),
stores every paper's vector and computes every list; `update_similar`, after
ingest, reads the stored vectors, computes those of the papers changed since
the last pass with that vocabulary, computes their lists, and puts each
of them into the lists of the older papers it scores above the 10th of; once
changes reach REBUILD_SHARE of the papers the vocabulary was fitted on, it
builds all again.
"""

from __future__ import annotations

import logging
import re
import time
from collections import defaultdict
from collections.abc import Collection
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

import numpy as np
from django.db import transaction
from django.db.models import Exists
from django.db.models import OuterRef
from django.db.models import Q
from django.utils import timezone
from scipy.sparse import csr_matrix
from scipy.sparse import vstack

from core.bulk import insert_rows
from papers.models import Paper
from papers.models import PaperVector
from papers.models import SimilarityIndex
from papers.models import SimilarPaper
from papers.query import LATE_COMMIT_OVERLAP
from papers.query import SIMILAR_SHOWN
from papers.query import last_modified
from papers.versions import similar_changed
from topics.recommend import score_papers
from topics.recommend import vocabulary_refitted
from topics.scoring import paper_text
from topics.tagging import corpus_fingerprint
from topics.vectors import Vocabulary
from topics.vectors import read_vectors
from topics.vectors import store_vectors

logger = logging.getLogger(__name__)

# Rows compared with the whole corpus at once: CHUNK x papers scores in memory
# (500 x 100,000 float32: 200 MB).
CHUNK = 500
READ_CHUNK = 5000
# Below this cosine two papers share too little to be called similar.
MIN_SCORE = 0.1
# Changes past this share of the indexed papers (or a corpus this much larger)
# are a full build: the vocabulary is refitted to what the corpus now says.
REBUILD_SHARE = 0.2
DECIMALS = 6
# A similar paper's id and its score.
Similar = tuple[int, float]


@dataclass
class SimilarResult:
    papers: int = 0  # papers whose lists were computed
    # The papers changed since the last pass, their vectors now stored (a full
    # build: every paper).
    vectorised: list[int] = field(default_factory=list)
    changed: int = 0  # lists that changed (new, longer, reordered)
    built: bool = False  # a full build (the vocabulary refitted)
    seconds: float = 0.0

    def __str__(self) -> str:
        what = "built" if self.built else "updated"
        return (
            f"{what} for {self.papers} papers, {self.changed} lists changed, "
            f"in {self.seconds:.1f} s"
        )


@dataclass
class Corpus:
    """Every paper's unit tf-idf vector (rows, in id order) and title."""

    pks: np.ndarray
    vectors: csr_matrix
    # Row -> the rows with exactly the same title, itself included (only titles
    # shared by more than one paper).
    twins: dict[int, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.columns = self.vectors.T.tocsr()
        self.rows = {int(pk): row for row, pk in enumerate(self.pks)}

    def scores(self, rows: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(rows, scores) chunk by chunk: each row's cosine with every paper,
        0 with itself and its twins."""
        for start in range(0, len(rows), CHUNK):
            chunk = rows[start : start + CHUNK]
            scores = (self.vectors[chunk] @ self.columns).toarray()
            np.round(scores, DECIMALS, out=scores)
            scores[np.arange(len(chunk)), chunk] = 0.0
            for position, row in enumerate(chunk):
                if (twins := self.twins.get(int(row))) is not None:
                    scores[position, twins] = 0.0
            yield chunk, scores

    def nearest(
        self, scores: np.ndarray, among: np.ndarray | None = None
    ) -> list[Similar]:
        """The SIMILAR_SHOWN best (paper id, score) of one row's scores (over
        `among`, rows of the corpus, or all), best first, ties to the lower id."""
        pks = self.pks if among is None else self.pks[among]
        candidates = np.flatnonzero(scores >= MIN_SCORE)
        if len(candidates) > SIMILAR_SHOWN:
            kth = np.partition(scores[candidates], -SIMILAR_SHOWN)[-SIMILAR_SHOWN]
            candidates = candidates[scores[candidates] >= kth]
        order = np.lexsort((pks[candidates], -scores[candidates]))[:SIMILAR_SHOWN]
        return [(int(pks[candidates[i]]), float(scores[candidates[i]])) for i in order]


def title_key(title: str) -> str:
    """What makes two titles the same: case, spacing and punctuation aside."""
    return " ".join(re.findall(r"\w+", title.casefold()))


def read_corpus(
    index: SimilarityIndex | None = None, changed: Collection[int] = ()
) -> tuple[Corpus, Vocabulary]:
    """Every paper's vector and title, the stored vectors (papers.PaperVector)
    kept up to date. With `index`, by its vocabulary: vectors are read, and
    computed (and stored) only for the `changed` papers and those without one.
    Without, the vocabulary is fitted now and every vector computed and stored."""
    pks: list[int] = []
    titles: dict[str, list[int]] = defaultdict(list)

    def papers(fields: Sequence[str]) -> Iterator[tuple]:
        last = 0
        while rows := list(
            Paper.objects.filter(pk__gt=last)
            .order_by("pk")
            .values_list("pk", "title", *fields)[:READ_CHUNK]
        ):
            for row in rows:
                titles[title_key(row[1])].append(len(pks))
                pks.append(row[0])
                yield row
            last = rows[-1][0]

    if index is None:
        texts = (paper_text(t, a) for _, t, a in papers(["abstract"]))
        vocabulary, vectors = Vocabulary.fit(texts)
        PaperVector.objects.all().delete()
        store_vectors(pks, vectors)
    else:
        vocabulary = Vocabulary(index.vocabulary, np.asarray(index.idf))
        vectors = _stored_corpus(vocabulary, [pk for pk, _ in papers([])], changed)
    twins = {
        row: np.asarray(rows)
        for rows in titles.values()
        if len(rows) > 1
        for row in rows
    }
    return Corpus(np.asarray(pks, dtype=np.int64), vectors, twins), vocabulary


def _stored_corpus(
    vocabulary: Vocabulary, pks: list[int], changed: Collection[int]
) -> csr_matrix:
    """The vectors of these papers (ids, in order): stored, or computed now
    (and stored) for the changed ones and those without."""
    width = len(vocabulary.terms)
    fresh = set(changed)
    known, stored = read_vectors([pk for pk in pks if pk not in fresh], width)
    missing = sorted(set(pks) - set(known))
    computed_pks: list[int] = []
    parts = [stored]
    for start in range(0, len(missing), READ_CHUNK):
        rows = Paper.objects.filter(pk__in=missing[start : start + READ_CHUNK])
        found = list(rows.order_by("pk").values_list("pk", "title", "abstract"))
        vectors = vocabulary.vectors(paper_text(t, a) for _, t, a in found)
        store_vectors([pk for pk, _, _ in found], vectors)
        computed_pks += [pk for pk, _, _ in found]
        parts.append(vectors)
    # A paper deleted since it was listed gets an empty row (the last).
    parts.append(csr_matrix((1, width), dtype=np.float32))
    row_of = {pk: row for row, pk in enumerate(known + computed_pks)}
    empty = len(row_of)
    return vstack(parts, format="csr")[[row_of.get(pk, empty) for pk in pks]]


# BUILDING
# ------------------------------------------------------------------------------


def _locked_index() -> SimilarityIndex:
    """The index row, locked until the transaction ends: one pass at a time
    (a second waits, then finds the first's work done)."""
    SimilarityIndex.objects.get_or_create(pk=1)
    return SimilarityIndex.objects.select_for_update().get(pk=1)


@transaction.atomic
def build_all() -> SimilarResult:
    """Fit the vocabulary on the whole corpus and compute every paper's list."""
    previous = _locked_index().vocabulary
    began = time.monotonic()
    # Taken first: papers changed while it runs are the next update's.
    fingerprint = corpus_fingerprint()
    checked = last_modified()
    corpus, vocabulary = read_corpus()
    result = SimilarResult(
        papers=len(corpus.pks), built=True, vectorised=corpus.pks.tolist()
    )
    for rows, scores in corpus.scores(np.arange(len(corpus.pks))):
        lists = {
            int(corpus.pks[row]): corpus.nearest(row_scores)
            for row, row_scores in zip(rows, scores, strict=True)
        }
        result.changed += store_lists(lists)
    # Lists of papers deleted meanwhile went with them (on delete cascade).
    SimilarityIndex.objects.filter(pk=1).update(
        vocabulary=vocabulary.terms,
        idf=[float(x) for x in vocabulary.idf],
        papers=len(corpus.pks),
        fingerprint=fingerprint,
        built_at=timezone.now(),
        checked_until=checked or timezone.now(),
    )
    vocabulary_refitted(previous, vocabulary.terms)
    result.seconds = time.monotonic() - began
    logger.info("similar papers %s", result)
    return result


def build_if_changed() -> SimilarResult | None:
    """A full build, unless the last one was of the corpus as it is now."""
    index = SimilarityIndex.objects.filter(pk=1).first()
    if index is not None and index.fingerprint == corpus_fingerprint():
        return None
    return build_all()


@transaction.atomic
def update_similar() -> SimilarResult:
    """Lists for the papers changed since the last pass (and theirs in older
    papers' lists); a full build when there is no index yet or enough changed."""
    index = _locked_index()
    if index.checked_until is None:
        return build_all()
    began = time.monotonic()
    # And those stamped shortly before the mark that have no vector yet: their
    # ingest committed after a later-stamped one's, which moved the mark.
    unread = ~Exists(PaperVector.objects.filter(paper=OuterRef("pk")))
    late = Q(modified_at__gt=index.checked_until - LATE_COMMIT_OVERLAP) & unread
    found = dict(
        Paper.objects.filter(Q(modified_at__gt=index.checked_until) | late).values_list(
            "pk", "modified_at"
        )
    )
    if not found:
        return SimilarResult()
    changed = sorted(found)
    total = Paper.objects.count()
    grown = total > (1 + REBUILD_SHARE) * index.papers
    if len(changed) > REBUILD_SHARE * index.papers or grown:
        return build_all()
    corpus, _ = read_corpus(index, changed)
    rows = np.asarray(
        [corpus.rows[pk] for pk in changed if pk in corpus.rows], dtype=np.int64
    )
    result = SimilarResult(papers=len(rows), vectorised=changed)
    older = _older_lists(corpus, rows)
    for chunk, scores in corpus.scores(rows):
        lists = {
            int(corpus.pks[row]): corpus.nearest(row_scores)
            for row, row_scores in zip(chunk, scores, strict=True)
        }
        result.changed += store_lists(lists)
    result.changed += store_lists(older)
    result.papers += len(older)
    SimilarityIndex.objects.filter(pk=1).update(checked_until=max(found.values()))
    result.seconds = time.monotonic() - began
    logger.info("similar papers %s", result)
    return result


@transaction.atomic
def update_after_ingest() -> SimilarResult:
    """`update_similar`, and the papers it read scored for every reader's For
    you (topics.recommend) in the same transaction: a pass stopped before its
    scoring was done (a worker killed, its time limit) had moved the mark, and
    the next found nothing changed to score."""
    result = update_similar()
    # A full build scored every reader's list anew itself (vocabulary_refitted).
    if result.vectorised and not result.built:
        score_papers(result.vectorised)
    return result


def _older_lists(corpus: Corpus, rows: np.ndarray) -> dict[int, list[Similar]]:
    """The new lists of the other papers that changed papers now enter (scoring
    at least their 10th) or were in: their stored entries, each changed paper
    scored anew."""
    thresholds = np.full(len(corpus.pks), MIN_SCORE)
    tenth = SimilarPaper.objects.filter(rank=SIMILAR_SHOWN).values_list(
        "paper_id", "score"
    )
    for pk, score in tenth.iterator(chunk_size=READ_CHUNK):
        if (row := corpus.rows.get(pk)) is not None:
            thresholds[row] = max(score, MIN_SCORE)
    affected: set[int] = set()
    for _, scores in corpus.scores(rows):
        affected |= set(np.flatnonzero((scores >= thresholds).any(axis=0)).tolist())
    changed_pks = [int(pk) for pk in corpus.pks[rows]]
    holding = SimilarPaper.objects.filter(similar_id__in=changed_pks).values_list(
        "paper_id", flat=True
    )
    affected |= {corpus.rows[pk] for pk in holding if pk in corpus.rows}
    affected -= set(rows.tolist())
    if not affected:
        return {}
    others = np.asarray(sorted(affected))
    stored = _stored_lists([int(pk) for pk in corpus.pks[others]])
    changed_set = set(changed_pks)
    lists: dict[int, list[Similar]] = {}
    for start in range(0, len(others), CHUNK):
        chunk = others[start : start + CHUNK]
        # Each one's scores with the changed papers only.
        scores = (corpus.vectors[chunk] @ corpus.columns[:, rows]).toarray()
        np.round(scores, DECIMALS, out=scores)
        for row, row_scores in zip(chunk, scores, strict=True):
            if (twins := corpus.twins.get(int(row))) is not None:
                row_scores[np.isin(rows, twins)] = 0.0
            pk = int(corpus.pks[row])
            kept = [item for item in stored.get(pk, []) if item[0] not in changed_set]
            entering = corpus.nearest(row_scores, among=rows)
            lists[pk] = _best(kept + entering)
    return lists


def _best(items: list[Similar]) -> list[Similar]:
    return sorted(items, key=lambda item: (-item[1], item[0]))[:SIMILAR_SHOWN]


# STORING
# ------------------------------------------------------------------------------


def _stored_lists(paper_ids: Sequence[int]) -> dict[int, list[Similar]]:
    lists: dict[int, list[Similar]] = defaultdict(list)
    for start in range(0, len(paper_ids), READ_CHUNK):
        rows = SimilarPaper.objects.filter(
            paper_id__in=paper_ids[start : start + READ_CHUNK]
        ).order_by("paper_id", "rank")
        for paper_id, similar_id, score in rows.values_list(
            "paper_id", "similar_id", "score"
        ):
            lists[paper_id].append((similar_id, score))
    return lists


def store_lists(lists: dict[int, list[Similar]]) -> int:
    """Write the lists that differ from the stored ones, and move those papers'
    pages on; returns how many changed."""
    stored = _stored_lists(list(lists))
    changed = [pk for pk, items in lists.items() if stored.get(pk, []) != items]
    if not changed:
        return 0
    with transaction.atomic():
        SimilarPaper.objects.filter(paper_id__in=changed).delete()
        # A paper deleted since it was read has no list to hold.
        named = changed + [similar for pk in changed for similar, _ in lists[pk]]
        existing = set(Paper.objects.filter(pk__in=named).values_list("pk", flat=True))
        rows = []
        for pk in changed:
            if pk in existing:
                kept = [item for item in lists[pk] if item[0] in existing]
                rows += [
                    (pk, similar, rank, score)
                    for rank, (similar, score) in enumerate(kept, start=1)
                ]
        insert_rows(SimilarPaper, ["paper_id", "similar_id", "rank", "score"], rows)
        similar_changed(changed)
    return len(changed)
