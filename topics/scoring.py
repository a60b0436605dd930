"""The relevance model's arithmetic: tf-idf of the title (counted twice) and
abstract, logistic regression with balanced classes (liblinear, so training is
deterministic), stored as plain numbers (TopicModel.weights) and scored here
without unpickling anything. No database: topics.relevance trains from it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.sparse import csr_matrix
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import normalize

# Bump when features or training change: stored models then retrain.
FORMAT = 2
VECTORIZER = {
    "ngram_range": (1, 2),
    "stop_words": "english",
    "lowercase": True,
}
MIN_DF = 2
MAX_DF = 0.5
MAX_FEATURES = 30000
REGULARIZATION = 4.0  # LogisticRegression's C


def paper_text(title: str, abstract: str) -> str:
    # The title twice: it says what the paper is about more densely than the abstract.
    return f"{title}. {title}. {abstract}"


class Scorer:
    """A fitted model: the probability that a paper belongs to the topic."""

    def __init__(
        self,
        vocabulary: Sequence[str],
        idf: Sequence[float],
        coef: Sequence[float],
        intercept: float,
        categories: Sequence[str] = (),
    ) -> None:
        self.vocabulary = list(vocabulary)
        self.idf = np.asarray(idf, dtype=np.float64)
        self.coef = np.asarray(coef, dtype=np.float64)
        self.intercept = float(intercept)
        self.categories = list(categories)
        self._index = {term: i for i, term in enumerate(self.vocabulary)}

    def score(self, texts: Sequence[str]) -> np.ndarray:
        return self.score_terms([terms_of(text) for text in texts])

    def score_terms(self, documents: Sequence[Sequence[str]]) -> np.ndarray:
        """Scores of texts already split into terms (terms_of), which topics scoring
        the same papers share."""
        if not documents:
            return np.zeros(0)
        features = tfidf(self.counts(documents), self.idf)
        return 1.0 / (1.0 + np.exp(-(features @ self.coef + self.intercept)))

    def counts(self, documents: Sequence[Sequence[str]]) -> csr_matrix:
        """Term counts over the vocabulary, as CountVectorizer would give them."""
        rows, columns = [], []
        for row, terms in enumerate(documents):
            for term in terms:
                column = self._index.get(term)
                if column is not None:
                    rows.append(row)
                    columns.append(column)
        # Repeated (row, column) pairs add up: the term's count.
        return csr_matrix(
            (np.ones(len(rows)), (rows, columns)),
            shape=(len(documents), len(self.vocabulary)),
        )

    def to_weights(self) -> dict:
        return {
            "format": FORMAT,
            "vocabulary": self.vocabulary,
            "idf": [round(float(x), 6) for x in self.idf],
            "coef": [round(float(x), 6) for x in self.coef],
            "intercept": round(self.intercept, 6),
            "categories": self.categories,
        }

    @classmethod
    def from_weights(cls, weights: dict) -> Scorer | None:
        if weights.get("format") != FORMAT:
            return None
        return cls(
            weights["vocabulary"],
            weights["idf"],
            weights["coef"],
            weights["intercept"],
            weights.get("categories", ()),
        )


_analyze = CountVectorizer(**VECTORIZER).build_analyzer()


def terms_of(text: str) -> list[str]:
    """The text's terms (words and word pairs) as every topic's model reads them."""
    return _analyze(text)


def tfidf(counts: csr_matrix, idf: np.ndarray) -> csr_matrix:
    """Sublinear term frequency times idf, each row scaled to unit length."""
    features = counts.astype(np.float64)
    features.data = np.log(features.data) + 1.0
    features = features.multiply(idf).tocsr()
    return normalize(features)


def fit(texts: Sequence[str], labels: np.ndarray, weights: np.ndarray) -> Scorer:
    """Fit a scorer; the same inputs always give the same numbers."""
    counter = CountVectorizer(
        min_df=MIN_DF, max_df=MAX_DF, max_features=MAX_FEATURES, **VECTORIZER
    )
    counts = counter.fit_transform(texts)
    vocabulary = counter.get_feature_names_out().tolist()
    # Smoothed idf, as scikit-learn's TfidfTransformer computes it.
    documents = np.bincount(counts.indices, minlength=counts.shape[1])
    idf = np.log((1.0 + counts.shape[0]) / (1.0 + documents)) + 1.0
    classifier = LogisticRegression(
        C=REGULARIZATION,
        class_weight="balanced",
        solver="liblinear",
        random_state=0,
        max_iter=1000,
    )
    classifier.fit(tfidf(counts, idf), labels, sample_weight=weights)
    return Scorer(vocabulary, idf, classifier.coef_[0], classifier.intercept_[0])
