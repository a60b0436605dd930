"""bench/ask: Ask about this topic on the labeled questions: retrieval, then answers.

    PYTHONPATH=. .venv/bin/python -m bench.ask [--limit 5] [--verbose]
    PYTHONPATH=. .venv/bin/python -m bench.ask --rebuild-scope-ids

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

Then the offline answerer answers each question from the sources the site
would give it (MOMENTUM_ASK_SOURCES), and is scored against
data/ask/answers.json: cited-paper recall (the share of must-cite papers
cited, and the share of questions citing all of theirs), key-fact coverage
(the share of key facts found in the answer's text), the share of claims
containing a content term of the question, and claims that are a paper's
title (must be 0).

The bench writes only to its scratch database. The tests
(tests/ask/test_recall.py, test_answer_quality.py) load the same subset by the
ids kept in data/ask/scope_ids.txt; `--rebuild-scope-ids` rewrites that file
from the seed rules (and does nothing else), and tests/ask/test_scope_ids.py
checks that it matches them.
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
from typing import TYPE_CHECKING

from bench.common import BASE_DIR

if TYPE_CHECKING:
    from topics.ask.answerers import Answer
from bench.common import corpus_rows

QUESTIONS = BASE_DIR / "data" / "ask" / "questions.json"
ANSWERS = BASE_DIR / "data" / "ask" / "answers.json"
# The ids of needed_rows(), kept so the tests skip matching 25,000 papers
# against the rules (half a minute); rebuilt only by --rebuild-scope-ids.
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


def load_labeled_answers(
    path: Path = ANSWERS, questions: Path = QUESTIONS
) -> list[dict]:
    """Each labeled answer merged with its question (topic, text, window)."""
    by_id = {q["id"]: q for q in load_questions(questions)}
    return [
        {**by_id[label["id"]], **label}
        for label in json.loads(path.read_text())["answers"]
    ]


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


def rebuild_scope_ids() -> None:
    """The explicit command: the fixture rewritten from the seed rules."""
    before = read_scope_ids()
    rows = needed_rows(load_questions())
    write_scope_ids(rows)
    print(f"{SCOPE_IDS.relative_to(BASE_DIR)}: {len(before)} -> {len(rows)} ids")


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


@dataclass(frozen=True)
class Graded:
    """One offline answer scored against its label."""

    label: dict
    answer: Answer

    @property
    def cited_ids(self) -> set[str]:
        return {source.paper.arxiv_id for source in self.answer.cited}

    def cited_recall(self) -> float:
        must = set(self.label["must_cite"])
        return len(must & self.cited_ids) / len(must)

    def facts_found(self) -> list[str]:
        text = _folded(self.answer.text)
        return [f for f in self.label["key_facts"] if _folded(f) in text]

    def fact_coverage(self) -> float:
        return len(self.facts_found()) / len(self.label["key_facts"])

    def claims_on_topic(self) -> int:
        """Claims containing at least one content term of the question."""
        from topics.ask.text import question_sequence
        from topics.ask.text import stem
        from topics.ask.text import token_stems

        wanted = {stem(w) for w in question_sequence(self.label["question"]) if w}
        return sum(bool(wanted & set(token_stems(c.text))) for c in self.answer.claims)

    def title_claims(self) -> int:
        """Sentences of the claims that are (part of) a retrieved paper's title."""
        from topics.ask.text import split_sentences

        titles = [_folded(s.paper.title) for s in self.answer.sources]
        return sum(
            any(_folded(sentence).rstrip(".") in t for t in titles)
            for claim in self.answer.claims
            for sentence in split_sentences(claim.text)
        )


def _folded(text: str) -> str:
    return " ".join(text.lower().split())


def answer_all(labels: list[dict]) -> list[Graded]:
    """The offline answer to each labeled question, from the site's sources."""
    from topics.ask.asking import topic_scope
    from topics.ask.extractive import ExtractiveAnswerer
    from topics.ask.retrieval import retrieve
    from topics.ask.retrieval import term_weights
    from topics.models import Topic

    topics = {t.slug: t for t in Topic.objects.all()}
    graded = []
    for label in labels:
        scope = topic_scope(
            topics[label["topic"]],
            weeks=label.get("weeks"),
            until=AS_OF if label.get("weeks") else None,
        )
        sources = retrieve(scope, label["question"])
        weights = term_weights(scope, label["question"])
        answer = ExtractiveAnswerer(weights).answer(label["question"], sources)
        graded.append(Graded(label, answer))
    return graded


def answer_summary(graded: list[Graded]) -> dict[str, float]:
    """The answer figures over all labeled questions."""
    claims = sum(len(g.answer.claims) for g in graded)
    return {
        "questions": len(graded),
        "cited-paper recall": sum(g.cited_recall() for g in graded) / len(graded),
        "all must-cite cited": sum(g.cited_recall() == 1 for g in graded) / len(graded),
        "key-fact coverage": sum(g.fact_coverage() for g in graded) / len(graded),
        "claims": claims,
        "claims with a question term": sum(g.claims_on_topic() for g in graded)
        / max(1, claims),
        "title-sentences": sum(g.title_claims() for g in graded),
    }


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
    parser.add_argument(
        "--rebuild-scope-ids",
        action="store_true",
        help=f"rewrite {SCOPE_IDS.relative_to(BASE_DIR)} from the seed rules, only",
    )
    args = parser.parse_args()
    if args.rebuild_scope_ids:
        rebuild_scope_ids()
        return
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
        print(
            f"note: {SCOPE_IDS.relative_to(BASE_DIR)} no longer matches the seed "
            "rules (the tests load it); rebuild it with --rebuild-scope-ids"
        )
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
    graded = answer_all(load_labeled_answers())
    if args.verbose:
        print("\noffline answers: cited-paper recall, key facts found, question")
        for g in graded:
            found = len(g.facts_found())
            print(
                f"{g.cited_recall():4.2f} {found}/{len(g.label['key_facts'])}", end=""
            )
            print(f" {g.label['id']}")
    print()
    for name, value in answer_summary(graded).items():
        shown = f"{value:.3f}" if isinstance(value, float) else str(value)
        print(f"{'offline answers: ' + name:48} {shown:>7}")


if __name__ == "__main__":
    main()
