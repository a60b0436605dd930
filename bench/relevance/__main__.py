"""Precision, recall and F1 of topic membership on the hand-labeled sets:
the rule alone versus rule plus model (automatic tags), the model evaluated by
cross-validation so that it never scores a paper whose label it learned from.

    PYTHONPATH=. .venv/bin/python -m bench.relevance [--folds 5] [--reuse]

A scratch PostgreSQL database is filled with the demo corpus and the seed topics
(as `make run` does). For each fold, the labels of the other folds become curator
decisions (relevant: pin; not relevant: exclusion) through topics.curation, the
topic's training set is read by topics.relevance as in production, the held-out
papers are removed from it altogether, and the fitted model decides the held-out
papers as a topic with automatic tags would. Each fold runs in a transaction that
is rolled back.

Figures are given on the labeled sample, and weighted by stratum (each paper
counts for the papers of the corpus its stratum stands for) as an estimate for
the whole corpus.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass

import numpy as np

from bench.common import BASE_DIR
from bench.common import DEMO_CORPUS
from bench.common import Timer
from bench.common import setup_django

LABELED_SETS = sorted((BASE_DIR / "data" / "relevance").glob("*.json"))
BENCH_DATABASE = "postgres://postgres@127.0.0.1:5432/momentum_relevance"


class Rollback(Exception):
    pass


@dataclass(frozen=True)
class Judged:
    predicted: np.ndarray
    actual: np.ndarray
    weights: np.ndarray  # papers of the corpus each labeled paper stands for

    def figures(self, weighted: bool) -> tuple[float, float, float]:
        w = self.weights if weighted else np.ones(len(self.actual))
        hits = float(w[self.predicted & self.actual].sum())
        precision = hits / max(float(w[self.predicted].sum()), 1e-9)
        recall = hits / max(float(w[self.actual].sum()), 1e-9)
        f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
        return precision, recall, f1


def load_corpus() -> None:
    from papers.ingest.runs import ingest_path
    from papers.models import Paper
    from topics.seed import load_topics
    from topics.tagging import retag_all

    if Paper.objects.exists():
        return
    load_topics()
    ingest_path(DEMO_CORPUS)
    retag_all()


def evaluate(labeled: dict, folds: int) -> tuple[Judged, Judged]:
    from django.db import transaction

    from papers.models import Paper
    from topics import curation
    from topics import relevance
    from topics.models import PaperTopic
    from topics.models import Topic

    topic = Topic.objects.get(slug=labeled["topic"])
    papers = labeled["papers"]
    by_arxiv_id = dict(
        Paper.objects.filter(arxiv_id__in=[p["arxiv_id"] for p in papers]).values_list(
            "arxiv_id", "pk"
        )
    )
    ids = np.array([by_arxiv_id[p["arxiv_id"]] for p in papers])
    actual = np.array([p["relevant"] for p in papers])
    strata = labeled["sampling"]["strata"]
    weights = np.array(
        [strata[p["stratum"]]["of"] / strata[p["stratum"]]["drawn"] for p in papers]
    )
    rule_tagged = set(
        PaperTopic.objects.filter(
            topic=topic, source=PaperTopic.Source.RULE
        ).values_list("paper_id", flat=True)
    )
    rule = np.array([pk in rule_tagged for pk in ids])

    # Folds stratified by label and stratum, dealt in a fixed order.
    fold_of = np.zeros(len(papers), dtype=int)
    order = sorted(
        range(len(papers)), key=lambda i: (papers[i]["stratum"], actual[i], ids[i])
    )
    for position, i in enumerate(order):
        fold_of[i] = position % folds
    confidence = topic.model_confidence
    combined = np.zeros(len(papers), dtype=bool)
    for fold in range(folds):
        held_out = fold_of == fold
        try:
            with transaction.atomic():
                for i in np.flatnonzero(~held_out):
                    paper = Paper(pk=int(ids[i]))
                    if actual[i]:
                        curation.pin_paper(topic, paper)
                    else:
                        curation.exclude_paper(topic, paper)
                data = relevance.training_set(topic)
                raise Rollback
        except Rollback:
            pass
        keep = ~np.isin(np.array(data.paper_ids), ids[held_out])
        texts = [text for text, kept in zip(data.texts, keep, strict=True) if kept]
        scorer = relevance.fit(texts, data.labels[keep], data.weights[keep])
        test = np.flatnonzero(held_out)
        held_texts = relevance.paper_texts([int(ids[i]) for i in test])
        scores = scorer.score([held_texts[int(ids[i])] for i in test])
        # As a topic with automatic tags decides (relevance.apply_model).
        combined[test] = np.where(
            rule[test], scores > 1 - confidence, scores >= confidence
        )
    return Judged(rule, actual, weights), Judged(combined, actual, weights)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument(
        "--reuse", action="store_true", help="keep the scratch database if filled"
    )
    args = parser.parse_args()
    setup_django(fresh_database=not args.reuse, url=BENCH_DATABASE)
    with Timer() as loading:
        load_corpus()
    print(f"corpus and seed topics ready in {loading.seconds:.0f} s")
    for path in LABELED_SETS:
        labeled = json.loads(path.read_text())
        with Timer() as timer:
            rule, combined = evaluate(labeled, args.folds)
        relevant = int(rule.actual.sum())
        print(
            f"\n{labeled['name']} ({len(labeled['papers'])} labeled, {relevant} "
            f"relevant; {args.folds}-fold, {timer.seconds:.0f} s)"
        )
        print(f"  {'':<16}{'precision':>10}{'recall':>8}{'F1':>7}   corpus estimate")
        for name, judged in (("rule only", rule), ("rule + model", combined)):
            p, r, f = judged.figures(weighted=False)
            wp, wr, wf = judged.figures(weighted=True)
            print(
                f"  {name:<16}{p:>10.3f}{r:>8.3f}{f:>7.3f}"
                f"   P {wp:.3f} R {wr:.3f} F1 {wf:.3f}"
            )
        ratio = combined.figures(False)[2] / rule.figures(False)[2]
        print(f"  F1 ratio rule + model / rule only: {ratio:.2f}")


if __name__ == "__main__":
    main()
