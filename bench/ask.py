"""bench/ask: retrieval quality of Ask about this topic on the labeled questions.

    PYTHONPATH=. .venv/bin/python -m bench.ask [--limit 5] [--verbose]

Recreates a scratch PostgreSQL database (momentum_bench_ask, or
BENCH_ASK_DATABASE_URL), loads from the demo corpus the papers that the rules
of the questions' topics can match (through the real upsert, then the real
tagging with all seed topics), and asks every question of
data/ask/questions.json through topics.ask.retrieval. Prints recall@5 and MRR
per topic, for the windowed questions, and overall.

recall@k counts the relevant papers in the first k sources, divided by
min(k, number relevant), so a question with more relevant papers than k can
still score 1. MRR is the mean of 1 / rank of the first relevant paper (0 if
none is retrieved in the first `--depth` sources).

The tests (tests/ask/test_recall.py) load the same subset, by the ids kept in
data/ask/scope_ids.txt, and assert a floor.
"""

from __future__ import annotations

import argparse
import json
import os
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from bench.common import BASE_DIR
from bench.common import corpus_rows

QUESTIONS = BASE_DIR / "data" / "ask" / "questions.json"
# The ids of needed_rows(), kept so the test skips matching 25,000 papers
# against the rules (half a minute); the bench rewrites it when it is stale.
SCOPE_IDS = BASE_DIR / "data" / "ask" / "scope_ids.txt"
SEED_TOPICS = BASE_DIR / "data" / "demo" / "topics.json"
# The corpus's latest announcement day: `weeks` windows end here, as they do on
# the site (momentum's as-of day), whatever day the bench runs.
AS_OF = date(2026, 7, 24)


@dataclass(frozen=True)
class Result:
    question: dict
    ranked: list[str]

    def recall(self, k: int) -> float:
        relevant = set(self.question["relevant"])
        found = len(relevant & set(self.ranked[:k]))
        return found / min(k, len(relevant))

    def reciprocal_rank(self) -> float:
        relevant = set(self.question["relevant"])
        for rank, arxiv_id in enumerate(self.ranked, 1):
            if arxiv_id in relevant:
                return 1 / rank
        return 0.0


def load_questions(path: Path = QUESTIONS) -> list[dict]:
    return json.loads(path.read_text())["questions"]


def needed_rows(questions: list[dict]) -> list[dict]:
    """The corpus rows that the rules of the questions' topics match (ignoring
    category scopes, which the real tagging then applies)."""
    from topics.rules import Document
    from topics.rules import compile_rule

    slugs = {q["topic"] for q in questions}
    seeds = json.loads(SEED_TOPICS.read_text())
    rules = [compile_rule(t["rule"]) for t in seeds if t["slug"] in slugs]
    rows = []
    for row in corpus_rows():
        document = Document.from_fields(
            title=row["title"],
            abstract=row["abstract"],
            authors=row["authors"].split(", "),
            categories=row["categories"].split(),
            comment=row.get("comments") or "",
        )
        if any(rule.match(document) for rule in rules):
            rows.append(row)
    return rows


def rows_by_id(ids: set[str]) -> list[dict]:
    """The corpus rows with these arXiv ids."""
    return [row for row in corpus_rows() if row["id"] in ids]


def read_scope_ids(path: Path = SCOPE_IDS) -> set[str]:
    return set(path.read_text().split())


def write_scope_ids(rows: list[dict], path: Path = SCOPE_IDS) -> None:
    path.write_text("".join(f"{row['id']}\n" for row in sorted(rows, key=_id)))


def _id(row: dict) -> str:
    return row["id"]


def load_papers(rows: Iterable[dict]) -> int:
    """Upsert the rows and tag them with every seed topic; returns papers stored."""
    from papers.ingest.records import PaperRecord
    from papers.ingest.snapshot import iter_snapshot
    from papers.ingest.upsert import upsert_records
    from topics.seed import load_topics
    from topics.tagging import tag_papers

    records = [
        entry
        for entry in iter_snapshot(json.dumps(row) for row in rows)
        if isinstance(entry, PaperRecord)
    ]
    load_topics(SEED_TOPICS)
    result = upsert_records(records)
    tag_papers(result.changed_ids)
    return len(result.changed_ids)


def ask_all(questions: list[dict], depth: int = 10) -> list[Result]:
    from topics.ask.asking import topic_scope
    from topics.ask.retrieval import retrieve
    from topics.models import Topic

    topics = {t.slug: t for t in Topic.objects.all()}
    results = []
    for question in questions:
        scope = topic_scope(
            topics[question["topic"]],
            weeks=question.get("weeks"),
            until=AS_OF if question.get("weeks") else None,
        )
        sources = retrieve(scope, question["question"], limit=depth)
        results.append(Result(question, [s.paper.arxiv_id for s in sources]))
    return results


def summary(results: list[Result], k: int = 5) -> dict[str, tuple[int, float, float]]:
    """{group: (questions, recall@k, MRR)} per topic, windowed, and "all"."""
    groups: dict[str, list[Result]] = defaultdict(list)
    for result in results:
        groups[f"topic {result.question['topic']}"].append(result)
        if result.question.get("weeks"):
            groups["windowed (last N weeks)"].append(result)
        groups["all"].append(result)
    return {
        name: (
            len(members),
            sum(r.recall(k) for r in members) / len(members),
            sum(r.reciprocal_rank() for r in members) / len(members),
        )
        for name, members in sorted(groups.items(), key=lambda kv: kv[0] == "all")
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=5, help="k of recall@k")
    parser.add_argument("--verbose", action="store_true", help="print each question")
    args = parser.parse_args()
    from bench.common import setup_django

    setup_django(
        url=os.environ.get(
            "BENCH_ASK_DATABASE_URL",
            "postgres://postgres@127.0.0.1:5432/momentum_bench_ask",
        )
    )
    questions = load_questions()
    rows = needed_rows(questions)
    if {row["id"] for row in rows} != read_scope_ids():
        write_scope_ids(rows)
        print(f"rewrote {SCOPE_IDS.relative_to(BASE_DIR)}: the rules match new papers")
    stored = load_papers(rows)
    print(f"{len(questions)} questions; {stored} papers loaded and tagged")
    results = ask_all(questions)
    if args.verbose:
        for r in results:
            q = r.question
            print(f"{r.recall(args.limit):4.2f} {r.reciprocal_rank():4.2f} {q['id']}")
    print(f"{'scope':40} {'n':>3} {f'recall@{args.limit}':>9} {'MRR':>6}")
    for name, (count, recall, mrr) in summary(results, args.limit).items():
        print(f"{name:40} {count:3d} {recall:9.3f} {mrr:6.3f}")


if __name__ == "__main__":
    main()
