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
is rolled back. A second model, trained on the rule alone, shows what the curator
decisions add.

Figures are given on the labeled sample: on all of it, on round 1 (the seed rules
were tuned on it) and on round 2 (drawn after tuning, so the rules never saw it);
for each round also weighted by stratum (each paper counts for the papers of the
corpus its stratum stands for) as an estimate for the whole corpus. The last line
says how far a second, blind reading of round 1 agrees with its labels: the
ceiling any rule or model can be held to.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from bench.common import BASE_DIR
from bench.common import DEMO_CORPUS
from bench.common import Timer
from bench.common import setup_django

if TYPE_CHECKING:  # Django is set up at run time, after the bench picks its database
    from topics.relevance import Scorer
    from topics.relevance import TrainingSet

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


def evaluate(labeled: dict, folds: int) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Each paper's label, and its membership as decided by the rule alone, by
    rule plus a model trained with the other folds' labels as curator decisions,
    and by rule plus a model trained on the rule alone ("no decisions")."""
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
    rule_tagged = set(
        PaperTopic.objects.filter(
            topic=topic, source=PaperTopic.Source.RULE
        ).values_list("paper_id", flat=True)
    )
    rule = np.array([pk in rule_tagged for pk in ids])
    undecided = relevance.training_set(topic)

    # Folds stratified by round, stratum and label, dealt in a fixed order.
    fold_of = np.zeros(len(papers), dtype=int)
    order = sorted(
        range(len(papers)),
        key=lambda i: (papers[i]["round"], papers[i]["stratum"], actual[i], ids[i]),
    )
    for position, i in enumerate(order):
        fold_of[i] = position % folds
    confidence = topic.model_confidence
    decided = {
        "rule + model": np.zeros(len(papers), dtype=bool),
        "no decisions": np.zeros(len(papers), dtype=bool),
    }
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
        test = np.flatnonzero(held_out)
        held_texts = relevance.paper_texts([int(ids[i]) for i in test])
        texts = [held_texts[int(ids[i])] for i in test]
        for name, training in zip(decided, (data, undecided), strict=True):
            scores = fit_without(training, ids[held_out]).score(texts)
            # As a topic with automatic tags decides (relevance.apply_model).
            decided[name][test] = np.where(
                rule[test], scores > 1 - confidence, scores >= confidence
            )
    return actual, {"rule only": rule, **decided}


def fit_without(data: TrainingSet, paper_ids: np.ndarray) -> Scorer:
    """A model fitted on the training set with these papers removed altogether."""
    from topics import relevance

    keep = ~np.isin(np.array(data.paper_ids), paper_ids)
    texts = [text for text, kept in zip(data.texts, keep, strict=True) if kept]
    return relevance.fit(texts, data.labels[keep], data.weights[keep])


def agreement(papers: list[dict]) -> str:
    """How often a second, blind reading agrees with the labels (Cohen's kappa)."""
    pairs = [(p["relevant"], p["second"]) for p in papers if "second" in p]
    if not pairs:
        return "no second reading"
    first, second = (np.array(column) for column in zip(*pairs, strict=True))
    observed = float((first == second).mean())
    expected = float(first.mean() * second.mean())
    expected += float((1 - first.mean()) * (1 - second.mean()))
    kappa = (observed - expected) / (1 - expected)
    f1 = 2 * float((first & second).sum()) / float(first.sum() + second.sum())
    return (
        f"second blind reading of round 1 agrees on {int((first == second).sum())}"
        f" of {len(pairs)} papers (kappa {kappa:.3f}; its F1 against the labels"
        f" {f1:.3f})"
    )


def stratum_weights(labeled: dict) -> np.ndarray:
    """For each paper, the papers of the corpus it stands for in its round's draw."""
    rounds = labeled["sampling"]["rounds"]
    return np.array(
        [
            rounds[str(p["round"])]["strata"][p["stratum"]]["of"]
            / rounds[str(p["round"])]["strata"][p["stratum"]]["drawn"]
            for p in labeled["papers"]
        ]
    )


def report(labeled: dict, actual: np.ndarray, decided: dict[str, np.ndarray]) -> None:
    papers = labeled["papers"]
    rounds = np.array([p["round"] for p in papers])
    weights = stratum_weights(labeled)
    subsets = (
        ("all labeled papers", np.ones(len(papers), dtype=bool)),
        ("round 1 (the rules were tuned on it)", rounds == 1),
        ("round 2 (drawn after tuning: validation)", rounds == 2),
    )
    for title, subset in subsets:
        relevant = int(actual[subset].sum())
        print(f"  {title}: {int(subset.sum())} papers, {relevant} relevant")
        print(f"    {'':<16}{'precision':>10}{'recall':>8}{'F1':>7}   corpus estimate")
        for name, predicted in decided.items():
            judged = Judged(predicted[subset], actual[subset], weights[subset])
            p, r, f = judged.figures(weighted=False)
            line = f"    {name:<16}{p:>10.3f}{r:>8.3f}{f:>7.3f}"
            if len(set(rounds[subset])) == 1:
                wp, wr, wf = judged.figures(weighted=True)
                line += f"   P {wp:.3f} R {wr:.3f} F1 {wf:.3f}"
            print(line)
    f1 = {
        name: Judged(p, actual, weights).figures(False)[2]
        for name, p in decided.items()
    }
    ratio = f1["rule + model"] / f1["rule only"]
    print(f"  F1 ratio rule + model / rule only: {ratio:.2f}")
    print(f"  {agreement(papers)}")


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
            actual, decided = evaluate(labeled, args.folds)
        print(f"\n{labeled['name']} ({args.folds}-fold, {timer.seconds:.0f} s)")
        report(labeled, actual, decided)


if __name__ == "__main__":
    main()
