"""Topic relevance models: learn from a topic's rule and its curators' decisions.

Training set: positives are the curator's pins and the rule's matches the curator
did not exclude; negatives are exclusions plus a seeded sample of other papers from
the topic's categories (its own, else the usual primary categories of its
positives). Curators' decisions weigh more than the rule's guesses.

Model: tf-idf of the title (counted twice) and abstract, logistic regression with
balanced classes (liblinear, so training is deterministic). It is stored as plain
numbers in TopicModel.weights and scored here without unpickling anything.

How a model is used depends on Topic.membership (apply_model): with suggestions it
only fills the review queue; with automatic tags it also adds papers it is confident
about (source "model") and keeps out rule matches it is confident are off-topic
(vetoed, in the queue). Pins and exclusions always win, and readers' flags only add
to the queue.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from scipy.sparse import csr_matrix
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import normalize

from papers.models import Paper
from papers.versions import content_changed
from topics.models import PaperTopic
from topics.models import ReviewItem
from topics.models import Topic
from topics.models import TopicExclusion
from topics.models import TopicModel

# Bump when features or training change: stored models then retrain.
FORMAT = 1
VECTORIZER = {
    "ngram_range": (1, 2),
    "stop_words": "english",
    "lowercase": True,
}
MIN_DF = 2
MAX_DF = 0.5
MAX_FEATURES = 30000
REGULARIZATION = 4.0  # LogisticRegression's C
NEGATIVES_PER_POSITIVE = 5
MIN_NEGATIVES = 500
DECISION_WEIGHT = 10.0  # a curator's decision counts this many rule guesses
FOLDS = 5
# Agreement point: above it the model says "in", below it "out".
BOUNDARY = 0.5
# A category listed by at least this share of the positives is in scope.
SCOPE_SHARE = 0.05
CHUNK_SIZE = 2000
REVIEW_FIELDS = ("score", "rule_terms", "rule_matched", "vetoed")


def paper_text(title: str, abstract: str) -> str:
    # The title twice: it says what the paper is about more densely than the abstract.
    return f"{title}. {title}. {abstract}"


@dataclass(frozen=True)
class TrainingSet:
    paper_ids: list[int]
    texts: list[str]
    labels: np.ndarray  # 1 in the topic, 0 not
    weights: np.ndarray
    decisions: int
    categories: list[str]

    @property
    def positives(self) -> int:
        return int(self.labels.sum())

    @property
    def negatives(self) -> int:
        return len(self.labels) - self.positives

    def fingerprint(self) -> str:
        digest = hashlib.sha256(f"{FORMAT}".encode())
        for row in zip(
            self.paper_ids, self.labels.tolist(), self.weights.tolist(), strict=True
        ):
            digest.update(repr(row).encode())
        digest.update(repr(self.categories).encode())
        return digest.hexdigest()


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


def cross_validate(
    texts: Sequence[str], labels: np.ndarray, weights: np.ndarray
) -> tuple[float, float, float]:
    """Precision, recall and F1 at the boundary, each paper scored by a model that
    never saw it."""
    predicted = np.zeros(len(labels), dtype=bool)
    folds = StratifiedKFold(n_splits=FOLDS, shuffle=True, random_state=0)
    for train, test in folds.split(np.zeros(len(labels)), labels):
        scorer = fit([texts[i] for i in train], labels[train], weights[train])
        predicted[test] = scorer.score([texts[i] for i in test]) >= BOUNDARY
    return precision_recall_f1(predicted, labels.astype(bool))


def precision_recall_f1(
    predicted: np.ndarray, actual: np.ndarray
) -> tuple[float, float, float]:
    hits = int((predicted & actual).sum())
    precision = hits / max(int(predicted.sum()), 1)
    recall = hits / max(int(actual.sum()), 1)
    f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
    return precision, recall, f1


# The database side: what a topic's model learns from, and what it changes.


def training_set(topic: Topic) -> TrainingSet:
    """The topic's positives and negatives, in a deterministic order."""
    tags = PaperTopic.objects.filter(
        topic=topic, source__in=[PaperTopic.Source.RULE, PaperTopic.Source.PIN]
    ).values_list("paper_id", "source")
    # Vetoed rule matches are the model's guess, not the curator's: still positives.
    vetoed = ReviewItem.objects.filter(topic=topic, vetoed=True).values_list(
        "paper_id", flat=True
    )
    positive = {paper_id: source == PaperTopic.Source.PIN for paper_id, source in tags}
    positive.update((paper_id, False) for paper_id in vetoed)
    excluded = set(
        TopicExclusion.objects.filter(topic=topic).values_list("paper_id", flat=True)
    )
    categories = scope_categories(topic, positive)
    pool = sorted(
        set(scope_papers(categories).values_list("pk", flat=True))
        - positive.keys()
        - excluded
    )
    wanted = max(MIN_NEGATIVES, NEGATIVES_PER_POSITIVE * len(positive))
    sampled = random.Random(topic.slug).sample(pool, min(wanted, len(pool)))
    examples = {
        paper_id: (1, DECISION_WEIGHT if pin else 1.0)
        for paper_id, pin in positive.items()
    }
    examples.update((paper_id, (0, DECISION_WEIGHT)) for paper_id in excluded)
    examples.update((paper_id, (0, 1.0)) for paper_id in sampled)
    paper_ids = sorted(examples)
    texts = paper_texts(paper_ids)
    paper_ids = [paper_id for paper_id in paper_ids if paper_id in texts]
    return TrainingSet(
        paper_ids=paper_ids,
        texts=[texts[paper_id] for paper_id in paper_ids],
        labels=np.array([examples[pk][0] for pk in paper_ids], dtype=np.int64),
        weights=np.array([examples[pk][1] for pk in paper_ids]),
        decisions=sum(1 for pin in positive.values() if pin) + len(excluded),
        categories=categories,
    )


def scope_categories(topic: Topic, positives: Iterable[int]) -> list[str]:
    """The categories whose papers the model scores and samples negatives from:
    the topic's own, else those at least SCOPE_SHARE of its positives are listed in."""
    own = sorted(category.code for category in topic.categories.all())
    if own:
        return own
    positives = list(positives)
    through = Paper.categories.through
    counts = Counter(
        through.objects.filter(paper_id__in=positives).values_list(
            "category__code", flat=True
        )
    )
    return sorted(
        code for code, count in counts.items() if count >= SCOPE_SHARE * len(positives)
    )


def scope_papers(categories: Sequence[str]) -> QuerySet[Paper]:
    return Paper.objects.filter(categories__code__in=categories).distinct()


def train(topic: Topic, *, force: bool = False) -> TopicModel:
    """Train the topic's model (or record why not) and apply it to every paper in
    scope. Does nothing when the training set has not changed, unless forced."""
    data = training_set(topic)
    fingerprint = data.fingerprint()
    current = TopicModel.objects.filter(topic=topic).first()
    if current and current.fingerprint == fingerprint and not force:
        return current
    enough = (
        data.positives >= settings.MOMENTUM_MODEL_MIN_POSITIVES
        and data.decisions >= settings.MOMENTUM_MODEL_MIN_DECISIONS
    )
    scorer = None
    scores: dict[str, float | None] = {"precision": None, "recall": None, "f1": None}
    if enough:
        scorer = fit(data.texts, data.labels, data.weights)
        scorer.categories = data.categories
        precision, recall, f1 = cross_validate(data.texts, data.labels, data.weights)
        scores = {"precision": precision, "recall": recall, "f1": f1}
    model, _ = TopicModel.objects.update_or_create(
        topic=topic,
        defaults={
            "state": TopicModel.State.TRAINED if enough else TopicModel.State.TOO_FEW,
            "version": (current.version + 1) if current else 1,
            "positives": data.positives,
            "negatives": data.negatives,
            "decisions": data.decisions,
            "fingerprint": fingerprint,
            "weights": scorer.to_weights() if scorer else {},
            "trained_at": timezone.now(),
            **scores,
        },
    )
    # Rule only: the model is there for curators to judge, and changes nothing.
    apply_model(topic, scorer if topic.membership != Topic.Membership.RULE else None)
    return model


def scorer_of(topic: Topic) -> Scorer | None:
    """The topic's trained scorer, if it has one and its membership uses it."""
    if topic.membership == Topic.Membership.RULE:
        return None
    model = TopicModel.objects.filter(
        topic=topic, state=TopicModel.State.TRAINED
    ).first()
    return Scorer.from_weights(model.weights) if model else None


def active_scorers() -> list[tuple[Topic, Scorer]]:
    """The active topics whose membership uses a trained model, with their scorers."""
    found = []
    for topic in Topic.objects.filter(is_active=True).exclude(
        membership=Topic.Membership.RULE
    ):
        scorer = scorer_of(topic)
        if scorer is not None:
            found.append((topic, scorer))
    return found


def apply_model(
    topic: Topic, scorer: Scorer | None, paper_ids: Iterable[int] | None = None
) -> None:
    """Bring the topic's model tags, vetoes and review queue in line with `scorer`
    for these papers (default: every paper in scope or already in the queue).

    With no scorer (rule only, or too few decisions) the rule alone decides: model
    tags and vetoes are undone and only readers' flags stay in the queue.
    """
    if paper_ids is None:
        ids = set(
            PaperTopic.objects.filter(topic=topic).values_list("paper_id", flat=True)
        )
        ids.update(
            ReviewItem.objects.filter(topic=topic).values_list("paper_id", flat=True)
        )
        if scorer is not None:
            ids.update(scope_papers(scorer.categories).values_list("pk", flat=True))
        paper_ids = ids
    apply_models([(topic, scorer)], paper_ids)


def apply_models(
    models: Sequence[tuple[Topic, Scorer | None]], paper_ids: Iterable[int]
) -> None:
    """apply_model for several topics over the same papers (new papers at ingest):
    each chunk of papers is read and split into terms once for all of them."""
    ids = sorted(paper_ids)
    scoring = any(scorer is not None for _, scorer in models)
    for start in range(0, len(ids), CHUNK_SIZE):
        chunk = ids[start : start + CHUNK_SIZE]
        if scoring:
            terms = {pk: terms_of(text) for pk, text in paper_texts(chunk).items()}
        else:  # no model reads them: only which papers still exist matters
            existing = Paper.objects.filter(pk__in=chunk).values_list("pk", flat=True)
            terms = {pk: [] for pk in existing}
        for topic, scorer in models:
            _apply_chunk(topic, scorer, terms)


@transaction.atomic
def _apply_chunk(
    topic: Topic, scorer: Scorer | None, terms: dict[int, list[str]]
) -> None:
    """apply_model for one chunk: `terms` holds each existing paper's terms."""
    paper_ids = list(terms)
    scores: dict[int, float | None] = dict.fromkeys(paper_ids)
    if scorer is not None:
        in_scope = paper_ids
        if scorer.categories:
            in_scope = list(
                scope_papers(scorer.categories)
                .filter(pk__in=paper_ids)
                .values_list("pk", flat=True)
            )
        values = scorer.score_terms([terms[paper_id] for paper_id in in_scope])
        scores.update(zip(in_scope, (round(float(v), 4) for v in values), strict=True))
    tags = {
        tag.paper_id: tag
        for tag in PaperTopic.objects.filter(topic=topic, paper_id__in=paper_ids)
    }
    items = {
        item.paper_id: item
        for item in ReviewItem.objects.filter(topic=topic, paper_id__in=paper_ids)
    }
    excluded = set(
        TopicExclusion.objects.filter(topic=topic, paper_id__in=paper_ids).values_list(
            "paper_id", flat=True
        )
    )
    auto = scorer is not None and topic.membership == Topic.Membership.AUTO
    confidence = topic.model_confidence
    new_tags, rescored, dropped = [], [], []
    new_items, changed_items, resolved = [], [], []
    for paper_id in paper_ids:
        score, tag, item = scores[paper_id], tags.get(paper_id), items.get(paper_id)
        pinned = tag is not None and tag.source == PaperTopic.Source.PIN
        decided = pinned or paper_id in excluded
        if tag and tag.source == PaperTopic.Source.RULE:
            rule_terms = tag.matched_terms
        elif item and item.vetoed:
            rule_terms = item.rule_terms
        else:
            rule_terms = None
        rule = rule_terms is not None
        # Papers outside the model's scope have no score: the rule alone decides.
        judged = auto and score is not None and not decided
        veto = judged and rule and score is not None and score <= 1 - confidence
        model_tag = judged and not rule and score is not None and score >= confidence
        # The tag: as the curator, the rule or the model has it; else none.
        if pinned or (not decided and ((rule and not veto) or model_tag)):
            if tag is None:
                source = PaperTopic.Source.RULE if rule else PaperTopic.Source.MODEL
                new_tags.append(
                    PaperTopic(
                        topic=topic,
                        paper_id=paper_id,
                        source=source,
                        matched_terms=rule_terms or [],
                        score=score,
                    )
                )
            elif tag.score != score:
                tag.score = score
                rescored.append(tag)
        elif tag is not None:
            dropped.append(tag.pk)
        # The review item: where model and rule disagree on a paper no curator has
        # decided, or where readers flagged it (until a curator decides).
        disagree = score is not None and (score >= BOUNDARY) != rule
        if not ((disagree and not decided) or (item and item.flags)):
            if item is not None:
                resolved.append(item.pk)
            continue
        fields = dict(
            zip(REVIEW_FIELDS, (score, rule_terms or [], rule, veto), strict=True)
        )
        if item is None:
            new_items.append(ReviewItem(topic=topic, paper_id=paper_id, **fields))
        elif any(getattr(item, name) != value for name, value in fields.items()):
            for name, value in fields.items():
                setattr(item, name, value)
            item.updated_at = timezone.now()
            changed_items.append(item)
    PaperTopic.objects.bulk_create(new_tags, ignore_conflicts=True)
    PaperTopic.objects.bulk_update(rescored, ["score"])
    PaperTopic.objects.filter(pk__in=dropped).delete()
    ReviewItem.objects.bulk_create(new_items)
    ReviewItem.objects.bulk_update(changed_items, [*REVIEW_FIELDS, "updated_at"])
    ReviewItem.objects.filter(pk__in=resolved).delete()
    if new_tags or rescored or dropped:
        gone = set(dropped)
        touched = [tag.paper_id for tag in [*new_tags, *rescored]]
        touched += [tag.paper_id for tag in tags.values() if tag.pk in gone]
        content_changed(topics=[topic], papers=touched)


def paper_texts(paper_ids: Sequence[int]) -> dict[int, str]:
    """Each paper's text as the model reads it, by id (missing papers left out)."""
    texts = {}
    for start in range(0, len(paper_ids), CHUNK_SIZE):
        chunk = paper_ids[start : start + CHUNK_SIZE]
        for pk, title, abstract in Paper.objects.filter(pk__in=chunk).values_list(
            "pk", "title", "abstract"
        ):
            texts[pk] = paper_text(title, abstract)
    return texts


def model_summary(model: TopicModel | None) -> str:
    """One line for admin: the model's state, training size and scores."""
    if model is None:
        return "Not trained yet."
    if model.state == TopicModel.State.TOO_FEW:
        return (
            f"Too few decisions to train ({model.positives} positives, "
            f"{model.decisions} curator decisions; needs "
            f"{settings.MOMENTUM_MODEL_MIN_POSITIVES} and "
            f"{settings.MOMENTUM_MODEL_MIN_DECISIONS}): the rule alone decides."
        )
    return (
        f"v{model.version}, trained {model.trained_at:%Y-%m-%d %H:%M} on "
        f"{model.positives} positives and {model.negatives} negatives "
        f"({model.decisions} curator decisions); cross-validated precision "
        f"{model.precision:.2f}, recall {model.recall:.2f}, F1 {model.f1:.2f}."
    )
