"""For you: each reader's own model (topics.foryou), trained on their signal
(saves and thumbs: papers.library), and the papers it ranks highest among the
WINDOW newest, kept in papers.ReaderModel.

- A change of the signal asks for a training (`request_training`), debounced:
  MOMENTUM_FOR_YOU_TRAIN_DELAY seconds after the first change of a burst, on
  the tagging queue, so a reader saving ten papers in a row trains once.
- A training fits the model on the stored vectors (topics.vectors) of the
  reader's positives and 👎 and a seeded sample of the newest papers they did
  not rate, then scores the WINDOW newest papers and keeps the RECOMMENDED best.
- After an ingest, once the similar papers' pass has stored the new papers'
  vectors, `score_papers` scores them for every reader with a model, a chunk of
  readers at a time in one sparse product that keeps each reader's best, and
  merges those into their lists.
- A full build of similar papers refits the vocabulary: `vocabulary_refitted`
  moves every model onto the new one's columns and scores every list anew.

Why a paper is recommended ("like X, which you saved") is worked out as a page
is read, for the papers it shows: the reader's positive nearest to each.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import Exists
from django.db.models import OuterRef
from django.utils import timezone
from scipy.sparse import csr_matrix
from scipy.sparse import vstack
from sparse_dot_topn import sp_matmul_topn

from core.bulk import update_rows
from core.queue import send_after_commit
from papers.library import rated_papers
from papers.library import signal_papers
from papers.models import Paper
from papers.models import PaperVector
from papers.models import Rating
from papers.models import ReaderModel
from papers.models import SavedPaper
from papers.models import SimilarityIndex
from papers.versions import for_you_changed
from papers.versions import reader_changed
from topics.foryou import fit_reader
from topics.foryou import nearest_positive
from topics.vectors import WEIGHT
from topics.vectors import pack
from topics.vectors import read_vectors
from topics.vectors import remapping
from topics.vectors import stack
from topics.vectors import unpack

logger = logging.getLogger(__name__)

# The newest papers a reader's list is drawn from (and their model's unrated
# papers sampled from): counted in papers, not days, as search's windows are.
WINDOW = 20_000
RECOMMENDED = 500
# A list's stored ids (its scores are float32, as vectors' values).
PAPER_ID = np.dtype("<i8")
# Positives a reader needs before For you is their home feed's first order.
DEFAULT_AT = 5
# Readers scored at once: their weights and a chunk's scores in memory.
READERS_CHUNK = 1000
# The positives a reason is looked for among: the most recent ones.
REASON_POSITIVES = 200


# TRAINING
# ------------------------------------------------------------------------------


def request_training(user_id: int) -> None:
    """Train the reader's model once a burst of signal changes is over: the
    first change marks the reader and schedules a training after the commit;
    the changes made until it starts ride on it."""
    from topics.tasks import train_reader_model  # the tasks module imports this one

    eager = settings.CELERY_TASK_ALWAYS_EAGER
    delay = 0 if eager else settings.MOMENTUM_FOR_YOU_TRAIN_DELAY
    # The training clears the mark as it starts; the timeout frees a reader
    # whose training never ran. A lost send is caught by the nightly sweep.
    try:
        due = cache.add(training_due_key(user_id), 1, delay + 60)
    except Exception:  # the cache is down: train, if not debounced
        logger.warning("cache unavailable: training of %s sent undebounced", user_id)
        due = True
    if due:
        # Never in the request that saved or rated, as tasks in process would run
        # it: the reader's button would wait on the training.
        send_after_commit(train_reader_model, user_id, countdown=delay, apart=True)


def training_due_key(user_id: int) -> str:
    return f"foryou:training-due:{user_id}"


def readers_with_signal() -> list[int]:
    """Every reader who saved or rated a paper."""
    rated = Rating.objects.values_list("user_id", flat=True)
    saved = SavedPaper.objects.values_list("user_id", flat=True)
    return sorted(set(rated.distinct()) | set(saved.distinct()))


@dataclass(frozen=True)
class Signal:
    """A reader's signal: their positives and negatives (paper ids), and a
    digest of it with the vocabulary it would be learnt over."""

    positives: list[int]
    negatives: list[int]
    digest: str


def reader_signal(user_id: int, index: SimilarityIndex) -> Signal:
    vector = PaperVector.objects.filter(paper=OuterRef("pk"))
    rows = list(
        signal_papers(user_id)
        .annotate(vectorised=Exists(vector))
        .values_list("pk", "signal", "vectorised")
    )
    text = f"{index.built_at}|{sorted((pk, signal) for pk, signal, _ in rows)}"
    # A paper saved before the similar papers' pass gave it a vector is not
    # learnt: the digest says so, so once it has one it is (the nightly sweep).
    if unread := sorted(pk for pk, _, vectorised in rows if not vectorised):
        text += f"|without vectors {unread}"
    return Signal(
        positives=[pk for pk, signal, _ in rows if signal > 0],
        negatives=[pk for pk, signal, _ in rows if signal < 0],
        digest=hashlib.sha256(text.encode()).hexdigest(),
    )


def train(user_id: int) -> ReaderModel | None:
    """Fit the reader's model and rank the newest papers with it; a no-op when
    their signal has not changed since the last training. Without a positive
    (or before similar papers were first built) they have no model."""
    try:
        cache.delete(training_due_key(user_id))
    except Exception:  # the cache is down: its mark times out by itself
        logger.warning("cache unavailable: training mark of %s kept", user_id)
    index = SimilarityIndex.objects.filter(pk=1).first()
    if index is None or not index.vocabulary:
        return None
    signal = reader_signal(user_id, index)
    stored = ReaderModel.objects.filter(user_id=user_id).first()
    if stored is not None and stored.signal == signal.digest:
        return stored
    width = len(index.vocabulary)
    rated, rated_vectors = read_vectors(signal.positives + signal.negatives, width)
    positive_ids = set(signal.positives)
    positives = [row for row, pk in enumerate(rated) if pk in positive_ids]
    if not positives:
        deleted, _ = ReaderModel.objects.filter(user_id=user_id).delete()
        if deleted:
            reader_changed([user_id])
            for_you_changed([user_id])
        return None
    window, window_vectors = _window(width)
    unrated = np.flatnonzero(~np.isin(window, rated))
    model = fit_reader(
        vstack([rated_vectors, window_vectors[unrated]], format="csr"),
        positives,
        [row for row, pk in enumerate(rated) if pk not in positive_ids],
        seed=user_id,
    )
    ids, scores = best(window[unrated], model.scores(window_vectors[unrated]))
    now = timezone.now()
    columns, weights = pack(model.weights.indices, model.weights.data)
    recommended, kept_scores = pack_list(ids, scores)
    reader_model, _ = ReaderModel.objects.update_or_create(
        user_id=user_id,
        defaults={
            "terms": columns,
            "weights": weights,
            "positives": len(positives),
            "signal": signal.digest,
            "trained_at": now,
            "recommended": recommended,
            "scores": kept_scores,
            "scored_at": now,
        },
    )
    reader_changed([user_id])
    for_you_changed([user_id])
    return reader_model


def _window(width: int) -> tuple[np.ndarray, csr_matrix]:
    """The WINDOW newest papers with a vector: ids and vectors."""
    ids, vectors = read_vectors(list(_window_ids()), width)
    return np.asarray(ids, dtype=np.int64), vectors


def best(ids: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The RECOMMENDED best, best first; ties to the newer paper (higher id)."""
    scores = np.round(scores.astype(np.float32), 6)
    if len(ids) > RECOMMENDED:
        kept = np.argpartition(-scores, RECOMMENDED - 1)[:RECOMMENDED]
        ids, scores = ids[kept], scores[kept]
    order = np.lexsort((-ids, -scores))
    return ids[order], scores[order]


def pack_list(ids: np.ndarray, scores: np.ndarray) -> tuple[bytes, bytes]:
    """A list of papers packed: int64 ids, float32 scores (little-endian)."""
    return ids.astype(PAPER_ID).tobytes(), scores.astype(WEIGHT).tobytes()


def recommended_list(model: ReaderModel) -> tuple[np.ndarray, np.ndarray]:
    """A reader's recommended papers (ids) and their scores, best first."""
    return unpack_list(model.recommended, model.scores)


def unpack_list(
    ids: bytes | memoryview, scores: bytes | memoryview
) -> tuple[np.ndarray, np.ndarray]:
    return (
        np.frombuffer(bytes(ids), dtype=PAPER_ID).astype(np.int64),
        np.frombuffer(bytes(scores), dtype=WEIGHT),
    )


def recommended(user_id: int) -> list[tuple[int, float]]:
    """(paper id, score) of the reader's recommended papers, best first; none
    without a model."""
    stored = ReaderModel.objects.filter(user_id=user_id)
    packed = stored.values_list("recommended", "scores").first()
    if packed is None:
        return []
    ids, scores = unpack_list(*packed)
    return [(int(pk), float(score)) for pk, score in zip(ids, scores, strict=True)]


# SCORING NEW PAPERS
# ------------------------------------------------------------------------------


@dataclass
class ScoreResult:
    papers: int = 0  # papers scored
    readers: int = 0  # readers they were scored for
    changed: int = 0  # readers whose list changed

    def __str__(self) -> str:
        return (
            f"{self.papers} papers scored for {self.readers} readers, "
            f"{self.changed} lists changed"
        )


def score_papers(paper_ids: Sequence[int]) -> ScoreResult:
    """Score these papers (new or changed, their vectors stored) for every
    reader with a model and merge them into their lists; papers no longer among
    the WINDOW newest leave the lists."""
    index = SimilarityIndex.objects.filter(pk=1).first()
    if index is None or not index.vocabulary or not paper_ids:
        return ScoreResult()
    width = len(index.vocabulary)
    window = np.sort(_window_ids())
    ids, vectors = read_vectors(
        [pk for pk in paper_ids if _contains(window, pk)], width
    )
    result = ScoreResult(papers=len(ids))
    if not ids:
        return result
    batch = np.asarray(ids, dtype=np.int64)
    in_batch = np.sort(batch)
    # A changed paper may be one a reader rated: it is not recommended to them.
    rated = rated_papers(batch.tolist())
    by_term = vectors.T.tocsr()
    for models in _reader_chunks():
        result.readers += len(models)
        weights = stack([(m.terms, m.weights) for m in models], width)
        # Only each reader's best new papers can enter their list: the product
        # keeps that many per row (the most a reader's rated ones may take
        # away, beside) and never holds the whole readers-by-papers matrix. A
        # paper sharing no term with a model scores nothing and is left out.
        keep = RECOMMENDED + max(len(rated.get(m.user_id, ())) for m in models)
        scores = sp_matmul_topn(
            weights,
            by_term,
            top_n=min(keep, len(ids)),
            threshold=-np.inf,
            n_threads=settings.MOMENTUM_FOR_YOU_THREADS,
        )
        changed = []
        for row, model in enumerate(models):
            begin, end = scores.indptr[row], scores.indptr[row + 1]
            papers, values = batch[scores.indices[begin:end]], scores.data[begin:end]
            if mine := rated.get(model.user_id):
                unrated = np.isin(papers, mine, invert=True)
                papers, values = papers[unrated], values[unrated]
            old_ids, old_scores = recommended_list(model)
            kept = ~_within(in_batch, old_ids) & _within(window, old_ids)
            new_ids, new_scores = best(
                np.concatenate([old_ids[kept], papers]),
                np.concatenate([old_scores[kept], values]),
            )
            if not np.array_equal(new_ids, old_ids):
                model.recommended, model.scores = pack_list(new_ids, new_scores)
                model.scored_at = timezone.now()
                changed.append(model)
        update_rows(ReaderModel, ["recommended", "scores", "scored_at"], changed)
        reader_changed([model.user_id for model in changed])
        for_you_changed([model.user_id for model in changed])
        result.changed += len(changed)
    logger.info("for you: %s", result)
    return result


def _window_ids() -> np.ndarray:
    """The WINDOW newest papers' ids, newest first."""
    newest = Paper.objects.order_by("-first_announced", "-id").values_list(
        "pk", flat=True
    )[:WINDOW]
    return np.asarray(list(newest), dtype=np.int64)


def _within(sorted_ids: np.ndarray, ids: np.ndarray) -> np.ndarray:
    if not len(sorted_ids):
        return np.zeros(len(ids), dtype=bool)
    places = np.minimum(np.searchsorted(sorted_ids, ids), len(sorted_ids) - 1)
    return sorted_ids[places] == ids


def _contains(sorted_ids: np.ndarray, pk: int) -> bool:
    return bool(_within(sorted_ids, np.asarray([pk]))[0])


def _reader_chunks() -> Iterator[list[ReaderModel]]:
    """Every reader model, READERS_CHUNK at a time by user id, each chunk
    locked while the caller works on it (the generator waits inside the
    transaction): a training meanwhile waits, then writes its own list."""
    last = 0
    while True:
        with transaction.atomic():
            models = list(
                ReaderModel.objects.select_for_update()
                .filter(user_id__gt=last)
                .order_by("user_id")[:READERS_CHUNK]
            )
            if not models:
                return
            yield models
        last = models[-1].user_id


def vocabulary_refitted(old: Sequence[str], new: Sequence[str]) -> None:
    """A full build of similar papers refitted the vocabulary: every model's
    columns move to the new one's (weights of terms gone are dropped), and every
    list is scored anew over the newest papers' new vectors. Each reader's next
    change of signal trains them on the new vocabulary itself."""
    if not new:  # an empty corpus: nothing to learn over
        ReaderModel.objects.all().delete()
        return
    columns = remapping(old, new)
    width = len(new)
    window, vectors = _window(width)
    rated = rated_papers()
    for models in _reader_chunks():
        for model in models:
            old_columns, weights = unpack(model.terms, model.weights)
            moved = columns[old_columns]
            kept = moved >= 0
            model.terms, model.weights = pack(moved[kept], weights[kept])
        matrix = stack([(m.terms, m.weights) for m in models], width)
        scores = (matrix @ vectors.T).toarray()
        for model, row in zip(models, scores, strict=True):
            unrated = np.isin(window, rated.get(model.user_id, []), invert=True)
            model.recommended, model.scores = pack_list(
                *best(window[unrated], row[unrated])
            )
            model.scored_at = timezone.now()
        update_rows(
            ReaderModel,
            ["terms", "weights", "recommended", "scores", "scored_at"],
            models,
        )
        reader_changed([model.user_id for model in models])
        for_you_changed([model.user_id for model in models])


# READING
# ------------------------------------------------------------------------------


def list_version(user_id: int) -> str:
    """What a reader's recommendations (and their reasons) were made from: when
    their list was last scored and the signal it learnt; "" without a model."""
    stored = ReaderModel.objects.filter(user_id=user_id)
    found = stored.values_list("scored_at", "signal").first()
    return f"{found[0].isoformat()}|{found[1]}" if found else ""


def positives_learnt(user_id: int) -> int:
    """How many positives the reader's model learnt from (0: no model)."""
    stored = ReaderModel.objects.filter(user_id=user_id)
    return stored.values_list("positives", flat=True).first() or 0


def scores_for(
    user_ids: Sequence[int], paper_ids: Sequence[int]
) -> dict[int, dict[int, float]]:
    """Each of these readers' model scores of these papers: readers with a
    model, papers with a vector (two queries, one sparse product)."""
    models = list(
        ReaderModel.objects.filter(user_id__in=list(user_ids)).values_list(
            "user_id", "terms", "weights"
        )
    )
    if not models or not paper_ids:
        return {}
    ids, vectors = read_vectors(paper_ids)
    weights = stack([(terms, values) for _, terms, values in models])
    width = max(weights.shape[1], vectors.shape[1])
    weights.resize((weights.shape[0], width))
    vectors.resize((vectors.shape[0], width))
    scores = (weights @ vectors.T).toarray()
    return {
        user_id: dict(zip(ids, row.tolist(), strict=True))
        for (user_id, _, _), row in zip(models, scores, strict=True)
    }


@dataclass(frozen=True)
class Reason:
    """Why a paper is recommended: it is like this paper of the reader's."""

    arxiv_id: str
    title: str
    saved: bool  # saved, or else rated 👍


def reasons(user_id: int, paper_ids: Sequence[int]) -> dict[int, Reason]:
    """For each of these papers, the reader's positive most like it (among
    their REASON_POSITIVES most recent). Two queries."""
    if not paper_ids:
        return {}
    # `signal` and `is_saved` are signal_papers' annotations.
    positives = list(
        signal_papers(user_id)
        .filter(signal__gt=0)  # type: ignore[misc]
        .values_list("pk", "arxiv_id", "title", "is_saved")[:REASON_POSITIVES]
    )
    have, vectors = read_vectors([pk for pk, *_ in positives] + list(paper_ids))
    rows = {pk: row for row, pk in enumerate(have)}
    liked = [p for p in positives if p[0] in rows]
    shown = [pk for pk in paper_ids if pk in rows]
    if not liked or not shown:
        return {}
    nearest = nearest_positive(
        vectors[[rows[pk] for pk in shown]], vectors[[rows[p[0]] for p in liked]]
    )
    return {
        pk: Reason(arxiv_id=liked[n][1], title=liked[n][2], saved=liked[n][3])
        for pk, n in zip(shown, nearest, strict=True)
    }
