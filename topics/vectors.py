"""Papers as vectors: the one vocabulary every text model of single papers
shares (similar papers, readers' For you models), and each paper's vector over
it, stored in papers.PaperVector.

A paper is read as the topics' relevance models read it (topics.scoring: the
title twice and the abstract, words and word pairs, sublinear tf-idf, the row
scaled to unit length), so the dot product of two vectors is their cosine. The
vocabulary (terms and idf) is fitted on the corpus by a full build of similar
papers and kept in SimilarityIndex; every stored vector is over it.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from django.db import transaction
from scipy.sparse import csr_matrix
from sklearn.feature_extraction.text import CountVectorizer

from core.bulk import insert_rows
from papers.models import PaperVector
from topics.scoring import MAX_DF
from topics.scoring import MAX_FEATURES
from topics.scoring import MIN_DF
from topics.scoring import VECTORIZER
from topics.scoring import tfidf

READ_CHUNK = 5000
# Stored arrays' layouts: little-endian, whatever the machine.
TERM = np.dtype("<i4")
WEIGHT = np.dtype("<f4")
# A stored row: its columns and values, packed (bytes, or memoryview as the
# database returns them).
Packed = tuple[bytes | memoryview, bytes | memoryview]


@dataclass(frozen=True)
class Vocabulary:
    """The shared features: terms (words and word pairs, sorted) and their idf."""

    terms: list[str]
    idf: np.ndarray

    @classmethod
    def fit(cls, texts: Iterable[str]) -> tuple[Vocabulary, csr_matrix]:
        """Fit on the corpus; returns the vocabulary and the texts' vectors."""
        counter = CountVectorizer(
            min_df=MIN_DF, max_df=MAX_DF, max_features=MAX_FEATURES, **VECTORIZER
        )
        read = 0

        def counted() -> Iterator[str]:
            nonlocal read
            for text in texts:
                read += 1
                yield text

        try:
            counts = counter.fit_transform(counted())
        except ValueError:
            # No term two texts share (an empty or tiny corpus): no features.
            return cls([], np.zeros(0)), csr_matrix((read, 0), dtype=np.float32)
        # Smoothed idf, as scikit-learn's TfidfTransformer (and topics.scoring) has it.
        documents = np.bincount(counts.indices, minlength=counts.shape[1])
        idf = np.log((1.0 + counts.shape[0]) / (1.0 + documents)) + 1.0
        vocabulary = cls(counter.get_feature_names_out().tolist(), idf)
        return vocabulary, vocabulary._vectors(counts)

    def vectors(self, texts: Iterable[str]) -> csr_matrix:
        """Unit-length tf-idf rows (float32), one per text."""
        if not self.terms:
            return csr_matrix((sum(1 for _ in texts), 0), dtype=np.float32)
        counter = CountVectorizer(vocabulary=self.terms, **VECTORIZER)
        return self._vectors(counter.transform(texts))

    def _vectors(self, counts: csr_matrix) -> csr_matrix:
        if not min(counts.shape):
            return csr_matrix(counts.shape, dtype=np.float32)
        return tfidf(counts, self.idf).astype(np.float32).tocsr()


def remapping(old: Sequence[str], new: Sequence[str]) -> np.ndarray:
    """For each column of the old vocabulary, its column in the new one (-1
    where the term is gone)."""
    columns = {term: column for column, term in enumerate(new)}
    return np.asarray([columns.get(term, -1) for term in old], dtype=np.int64)


# STORED
# ------------------------------------------------------------------------------


def pack(columns: np.ndarray, values: np.ndarray) -> tuple[bytes, bytes]:
    return columns.astype(TERM).tobytes(), values.astype(WEIGHT).tobytes()


def unpack(
    columns: bytes | memoryview, values: bytes | memoryview
) -> tuple[np.ndarray, np.ndarray]:
    return (
        np.frombuffer(bytes(columns), dtype=TERM),
        np.frombuffer(bytes(values), dtype=WEIGHT),
    )


def stack(rows: Sequence[Packed], width: int | None = None) -> csr_matrix:
    """One sparse matrix (float32) of packed rows, `width` columns (or as many
    as the highest column needs)."""
    unpacked = [unpack(columns, values) for columns, values in rows]
    lengths = [len(columns) for columns, _ in unpacked]
    indptr = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
    indices = np.concatenate([np.zeros(0, TERM), *(c for c, _ in unpacked)])
    data = np.concatenate([np.zeros(0, WEIGHT), *(v for _, v in unpacked)])
    if width is None:
        width = int(indices.max()) + 1 if len(indices) else 0
    return csr_matrix((data, indices, indptr), shape=(len(rows), width))


def store_vectors(pks: Sequence[int], vectors: csr_matrix) -> None:
    """Replace the stored vectors of these papers (rows of `vectors`, in order)."""
    with transaction.atomic():
        for start in range(0, len(pks), READ_CHUNK):
            PaperVector.objects.filter(pk__in=pks[start : start + READ_CHUNK]).delete()
        rows = []
        for row, pk in enumerate(pks):
            begin, end = vectors.indptr[row], vectors.indptr[row + 1]
            columns, values = pack(vectors.indices[begin:end], vectors.data[begin:end])
            rows.append((pk, columns, values))
            if len(rows) == READ_CHUNK:
                insert_rows(PaperVector, ["paper_id", "terms", "weights"], rows)
                rows = []
        insert_rows(PaperVector, ["paper_id", "terms", "weights"], rows)


def read_vectors(
    pks: Sequence[int], width: int | None = None
) -> tuple[list[int], csr_matrix]:
    """The stored vectors of these papers, those that have one: their ids (in
    the order asked) and their rows, `width` columns (the vocabulary's size;
    without it, as many as their highest column needs)."""
    found: dict[int, Packed] = {}
    pks = list(pks)
    for start in range(0, len(pks), READ_CHUNK):
        rows = PaperVector.objects.filter(pk__in=pks[start : start + READ_CHUNK])
        found.update(
            (pk, (columns, values))
            for pk, columns, values in rows.values_list("pk", "terms", "weights")
        )
    have = [pk for pk in pks if pk in found]
    return have, stack([found[pk] for pk in have], width)
