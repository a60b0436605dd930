"""Three-way membership on the hand-labeled sets, per topic and per round, on
rounds the model did not train on.

    PYTHONPATH=. .venv/bin/python -m bench.relevance [--reuse]

A scratch PostgreSQL database is filled with the demo corpus and the seed topics
(as `make run` does), and each topic's training set is read as production reads
it (topics.relevance). For each round, the other round's labels become curator
decisions (bench.relevance.simulate) and the round's own papers are removed
from training altogether; the model and its thresholds (fitted to the topic's
precision and recall targets, 0.95 and 0.90) then decide the round's papers in,
out or pending.

Printed per round: precision of the papers decided automatically (with its
exact 95 % interval, and the precision the model expected of its edges on the
decisions they were not drawn on) and recall (the band left aside; recall of
every relevant paper too), the band (pending papers, in the sample and as a
share of the round's candidate papers, each labeled paper standing for its
stratum), and F1 if the band were judged correctly. Then learning curves: a
simulated curator deciding 0, 50, 100 and 200 papers, uncertainty-first
(retraining after each burst of 50) against a random order, with F1 of the
round's membership (pending papers out) and F1 with the band judged correctly.
Two curators:
  - reviewing the round itself, as the review queue asks: a decided paper is
    in or out as its label says, and the model, retrained on the decisions,
    decides the rest, none of which it trained on;
  - model only: the curator decides the other round's papers, so the round's
    F1 moves only through what the model learned.
The last line per topic says how far a second, blind reading of round 1 agrees
with its labels: the ceiling.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import numpy as np

from bench.common import BASE_DIR
from bench.common import DEMO_CORPUS
from bench.common import Timer
from bench.common import setup_django

LABELED_SETS = sorted((BASE_DIR / "data" / "relevance").glob("*.json"))
BENCH_DATABASE = "postgres://postgres@127.0.0.1:5432/momentum_relevance"
STEPS = (0, 50, 100, 200)


def load_corpus() -> None:
    from papers.ingest.runs import ingest_path
    from papers.models import Paper
    from topics.seed import load_topics
    from topics.tagging import retag_all

    if Paper.objects.exists():
        load_topics()  # definitions and settings as the file has them now
        return
    load_topics()
    ingest_path(DEMO_CORPUS)
    retag_all()


def labeled_arrays(labeled: dict):
    from bench.relevance.simulate import Labeled
    from bench.relevance.simulate import load_texts
    from papers.models import Paper
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
    rule_tagged = set(
        PaperTopic.objects.filter(
            topic=topic, source=PaperTopic.Source.RULE
        ).values_list("paper_id", flat=True)
    )
    return topic, Labeled(
        ids=ids,
        actual=np.array([p["relevant"] for p in papers], dtype=bool),
        rounds=np.array([p["round"] for p in papers]),
        rule=np.array([pk in rule_tagged for pk in ids], dtype=bool),
        weights=stratum_weights(labeled),
        texts=load_texts(ids),
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


def candidates(labeled: dict, round_: int) -> int:
    strata = labeled["sampling"]["rounds"][str(round_)]["strata"]
    return sum(stratum["of"] for stratum in strata.values())


def interval(hits: int, decided: int) -> str:
    """The exact (Clopper-Pearson) 95 % interval of a precision of hits/decided:
    a few dozen papers decided "in" cannot tell 0.93 from 0.95."""
    from scipy.stats import binomtest

    if not decided:
        return ""
    ci = binomtest(hits, decided).proportion_ci(confidence_level=0.95)
    return f", 95% interval {ci.low:.3f}-{ci.high:.3f}"


def report_round(labeled: dict, topic, data, base, round_: int, *, curve: bool) -> None:
    from bench.relevance.simulate import curator_curve
    from bench.relevance.simulate import decide_all
    from bench.relevance.simulate import f1
    from bench.relevance.simulate import train
    from bench.relevance.simulate import with_decisions

    targets = {
        "target": topic.precision_target,
        "recall_target": topic.recall_target,
    }
    test = data.rounds == round_
    other = ~test
    actual = data.actual[test]
    with Timer() as timer:
        model = train(with_decisions(base, data, other, test), **targets)
        outcome = decide_all(model, data, test)
    auto, band = outcome.member, outcome.band
    hits = int((auto & actual).sum())
    precision = hits / max(int(auto.sum()), 1)
    # On the decided papers (the band left aside), and of every relevant paper.
    recall = hits / max(int((actual & ~band).sum()), 1)
    recall_all = hits / max(int(actual.sum()), 1)
    band_share = float(data.weights[test][band].sum()) / candidates(labeled, round_)
    judged = f1(auto | (band & actual), actual)
    t = model.thresholds
    edges = (
        f"in ≥ {t.include_at:.2f}, out ≤ {t.exclude_at:.2f}" if t else "no thresholds"
    )
    print(
        f"  round {round_} ({int(test.sum())} papers, {int(actual.sum())} relevant;"
        f" trained on round {3 - round_}'s {int(other.sum())} decisions; {edges};"
        f" {timer.seconds:.0f} s)"
    )
    expected = f"; the model expected {t.precision:.3f}" if t else ""
    print(
        f"    decided automatically: precision {precision:.3f}"
        f" ({hits} of {int(auto.sum())}{interval(hits, int(auto.sum()))}{expected})"
        f" recall {recall:.3f}"
        f" ({int(auto.sum())} in, {int((~auto & ~band).sum())} out; recall of all"
        f" relevant {recall_all:.3f}) | band {int(band.sum())} papers ="
        f" {band_share:.1%} of {candidates(labeled, round_)} candidates |"
        f" F1 if the band is judged correctly {judged:.3f}"
    )
    if not curve:
        return
    pools = (
        (f"reviewing round {round_}", test),
        (f"model only, round {3 - round_}", other),
    )
    print(f"    {'curator deciding':<40} F1 automatic (pending out)   F1 band judged")
    for where, pool in pools:
        for name, first in (("uncertainty-first", True), ("random order", False)):
            curve = curator_curve(
                base,
                data,
                pool=pool,
                test=test,
                steps=STEPS,
                uncertain_first=first,
                **targets,
            )
            autos = " ".join(f"{f1(o.member, actual):.3f}@{k}" for k, o in curve)
            bands = " ".join(
                f"{f1(o.member | (o.band & actual), actual):.3f}" for _, o in curve
            )
            print(f"    {where + ', ' + name:<40} {autos}   {bands}")


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--reuse", action="store_true", help="keep the scratch database if filled"
    )
    parser.add_argument(
        "--no-curve", action="store_true", help="skip the learning curves"
    )
    args = parser.parse_args()
    setup_django(fresh_database=not args.reuse, url=BENCH_DATABASE)
    if args.reuse:  # a kept database still needs this code's migrations
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "-v0"], cwd=BASE_DIR, check=True
        )
    from topics.relevance import training_set

    with Timer() as loading:
        load_corpus()
    print(f"corpus and seed topics ready in {loading.seconds:.0f} s")
    for path in LABELED_SETS:
        labeled = json.loads(path.read_text())
        topic, data = labeled_arrays(labeled)
        # The topic's training set with no decisions, read once.
        base = training_set(topic)
        print(
            f"\n{labeled['name']} (precision target {topic.precision_target:.2f},"
            f" recall target {topic.recall_target:.2f};"
            f" {len(data.ids)} labeled papers)"
        )
        for round_ in (1, 2):
            report_round(labeled, topic, data, base, round_, curve=not args.no_curve)
        print(f"  {agreement(labeled['papers'])}")


if __name__ == "__main__":
    main()
