"""A simulated reader's "For you" on the labeled sets, against arxiv-sanity's
per-user model and the topic's own newest-first feed.

    PYTHONPATH=. .venv/bin/python -m bench.foryou [--readers 8]

No database (Django is set up, as the product's modules need, but asked
nothing): the demo corpus (data/demo) and the labeled sets (data/relevance) are
read from the repository. Each simulated reader saves 20 papers labeled
relevant to one topic (a seeded draw per reader); a second reader does the same
and also gives 👎 to 10 papers labeled not relevant. Every model ranks the
labeled papers the reader did not rate, and precision of its top 50 is counted
against the labels. The labeled papers are an enriched sample (the seed rule's
matches, near misses and a few others: bench/relevance/sample.py), so the pool
is harder than the corpus, where most papers are plainly off-topic.

Compared:
  - For you (topics.foryou): the product's features and model;
  - arxiv-sanity: tf-idf as arxiv-sanity-lite's compute.py builds it (title,
    authors and abstract; 20,000 word and word-pair features, sublinear tf,
    max_df 0.1, min_df 5) and its per-user LinearSVC (C=0.01, balanced)
    against every other paper of the corpus, which cannot use a 👎;
  - the topic's newest first: the papers its seed rule matched, newest first,
    as a reader following the topic reads them.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from email.utils import parsedate_to_datetime

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import average_precision_score
from sklearn.svm import LinearSVC

from bench.common import BASE_DIR
from bench.common import corpus_rows
from bench.common import setup_django

# topics' modules import the models, so Django is set up; no query is made.
setup_django(fresh_database=False)

from topics.foryou import fit_reader  # noqa: E402
from topics.scoring import paper_text  # noqa: E402
from topics.vectors import Vocabulary  # noqa: E402

TOPICS = ["rl-for-llm-agents", "tool-use"]
SAVES = 20
DOWNVOTES = 10
TOP = 50


def arxiv_sanity_vectors(rows: list[dict]):
    vectorizer = TfidfVectorizer(
        strip_accents="unicode",
        stop_words="english",
        token_pattern=r"(?u)\b[a-zA-Z_][a-zA-Z0-9_]+\b",
        ngram_range=(1, 2),
        max_features=20000,
        sublinear_tf=True,
        max_df=0.1,
        min_df=5,
    )
    texts = [f"{r['title']} | {r['authors']} | {r['abstract']}" for r in rows]
    return vectorizer.fit_transform(texts).tocsr()


def arxiv_sanity_scores(vectors, positives) -> np.ndarray:
    labels = np.zeros(vectors.shape[0])
    labels[positives] = 1
    svm = LinearSVC(class_weight="balanced", max_iter=10000, tol=1e-6, C=0.01)
    svm.fit(vectors, labels)
    return svm.decision_function(vectors)


def first_version(row: dict) -> float:
    """When the paper's first version was submitted (a POSIX timestamp)."""
    return min(parsedate_to_datetime(v["created"]).timestamp() for v in row["versions"])


def precision_at(scores: np.ndarray, relevant: np.ndarray) -> float:
    top = np.argsort(-scores, kind="stable")[:TOP]
    return float(relevant[top].mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--readers", type=int, default=8)
    args = parser.parse_args()

    rows = list(corpus_rows())
    row_of = {row["id"]: i for i, row in enumerate(rows)}
    started = time.perf_counter()
    texts = [paper_text(r["title"], r["abstract"]) for r in rows]
    vocabulary, ours = Vocabulary.fit(texts)
    print(
        f"{len(rows):,} papers; shared vocabulary {len(vocabulary.terms):,} terms "
        f"fitted and vectorised in {time.perf_counter() - started:.1f} s"
    )
    theirs = arxiv_sanity_vectors(rows)

    for slug in TOPICS:
        path = BASE_DIR / "data" / "relevance" / f"{slug}.json"
        evaluate(json.loads(path.read_text()), rows, row_of, ours, theirs, args.readers)


def evaluate(labeled: dict, rows, row_of, ours, theirs, readers: int) -> None:
    """Print each ranking's precision@TOP for `readers` simulated readers."""
    papers = [p for p in labeled["papers"] if p["arxiv_id"] in row_of]
    index = np.array([row_of[p["arxiv_id"]] for p in papers])
    relevant = np.array([p["relevant"] for p in papers])
    rule = np.array([p["stratum"] == "rule" for p in papers])
    # Newest first among the rule's matches, the rest after.
    by_date = np.empty(len(papers))
    by_date[np.argsort([first_version(rows[i]) for i in index], kind="stable")] = (
        np.arange(len(papers))
    )
    newest_first = by_date + rule * len(papers)
    precision: dict[str, list[float]] = {}
    average: dict[str, list[float]] = {}
    train_seconds: list[float] = []

    def record(name: str, scores: np.ndarray, pool: np.ndarray) -> None:
        precision.setdefault(name, []).append(
            precision_at(scores[pool], relevant[pool])
        )
        average.setdefault(name, []).append(
            average_precision_score(relevant[pool], scores[pool])
        )

    for reader in range(readers):
        draw = random.Random(reader)
        saved = draw.sample(list(np.flatnonzero(relevant)), SAVES)
        downvoted = draw.sample(list(np.flatnonzero(~relevant)), DOWNVOTES)
        for rated, label in ((saved, "saves"), (saved + downvoted, "saves + 👎")):
            pool = np.setdiff1d(np.arange(len(papers)), rated)
            negatives = [index[i] for i in rated if not relevant[i]]
            positives = [index[i] for i in rated if relevant[i]]
            started = time.perf_counter()
            model = fit_reader(ours, positives, negatives, seed=reader)
            train_seconds.append(time.perf_counter() - started)
            record(f"For you, {label}", model.scores(ours[index]), pool)
            if label == "saves":
                sanity = arxiv_sanity_scores(theirs, positives)[index]
                record("arxiv-sanity, saves", sanity, pool)
                record("topic, newest first", newest_first, pool)

    print(
        f"\n{labeled['name']}: {len(papers)} labeled papers, "
        f"{relevant.sum()} relevant ({relevant.mean():.0%}); {readers} readers"
    )
    print(f"  {'ranking':26s} precision@{TOP}   (min)   average precision")
    for name, values in precision.items():
        print(
            f"  {name:26s} {np.mean(values):.3f}        "
            f"({np.min(values):.2f})  {np.mean(average[name]):.3f}"
        )
    print(
        f"  training a reader's model: median {np.median(train_seconds):.2f} s, "
        f"max {np.max(train_seconds):.2f} s with {len(rows):,} papers"
    )


if __name__ == "__main__":
    main()
