"""Draw the papers of a labeled relevance set from the demo corpus (run once per set).

A set mixes three strata so that clear and near-miss papers are both in it:
  rule   papers the topic's seed rule matches;
  near   papers a broad net of the topic's words matches but the rule does not;
  other  papers from the topic's usual categories that neither matches.
The draw is seeded, so re-running it gives the same papers. Labels are then written
by reading each abstract against the set's definition (data/relevance/<slug>.json).

Round 2 is a validation draw made after the seed rules were tuned on round 1: the
same strata under the tuned rule, leaving out the papers round 1 holds, so that the
rules can be judged on papers they were not tuned on.

    PYTHONPATH=. .venv/bin/python -m bench.relevance.sample rl-for-llm-agents out.jsonl
    PYTHONPATH=. .venv/bin/python -m bench.relevance.sample --round 2 tool-use out.jsonl
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
from dataclasses import dataclass

from bench.common import BASE_DIR
from bench.common import DEMO_CORPUS
from papers.ingest.records import PaperRecord
from papers.ingest.snapshot import iter_snapshot
from topics.rules import Document
from topics.rules import compile_rule


@dataclass(frozen=True)
class Plan:
    net: str  # a broad rule: what a near miss must mention
    categories: frozenset[str]  # where "other" papers are drawn from
    sizes: dict[int, dict[str, int]]  # by round


PLANS = {
    "rl-for-llm-agents": Plan(
        net=(
            '(agent OR agents OR agentic OR tool OR tools OR "multi-turn" OR GUI'
            ' OR web OR "deep research" OR search OR SWE OR interactive'
            ' OR environment) AND ("reinforcement learning" OR RL OR GRPO OR PPO'
            ' OR "policy optimization" OR reward OR RLVR) AND (LLM OR LLMs'
            ' OR "language model" OR VLM OR MLLM OR LRM OR "foundation model"'
            ' OR "reasoning model" OR GPT*)'
        ),
        categories=frozenset({"cs.AI", "cs.CL", "cs.LG", "cs.MA"}),
        sizes={
            1: {"rule": 150, "near": 150, "other": 60},
            2: {"rule": 60, "near": 120, "other": 30},
        },
    ),
    "tool-use": Plan(
        net=(
            '(tool OR tools OR "function calling" OR "function call" OR API'
            ' OR APIs OR MCP) AND (LLM OR LLMs OR "language model" OR agent'
            " OR agents OR agentic)"
        ),
        categories=frozenset({"cs.AI", "cs.CL", "cs.LG", "cs.SE"}),
        sizes={
            1: {"rule": 100, "near": 90, "other": 40},
            2: {"rule": 50, "near": 60, "other": 20},
        },
    ),
}
SEED = 20261130
SEED_TOPICS = BASE_DIR / "data" / "demo" / "topics.json"
LABELED = BASE_DIR / "data" / "relevance"


def document(record: PaperRecord) -> Document:
    return Document.from_fields(
        title=record.title,
        abstract=record.abstract,
        authors=[author.name for author in record.authors],
        categories=sorted(record.categories),
        comment=record.comment,
    )


def draw(slug: str, round_: int = 1) -> list[dict]:
    plan, sizes = PLANS[slug], PLANS[slug].sizes[round_]
    topic = next(t for t in json.loads(SEED_TOPICS.read_text()) if t["slug"] == slug)
    rule, net = compile_rule(topic["rule"]), compile_rule(plan.net)
    drawn_before = set()
    if round_ > 1:
        labeled = json.loads((LABELED / f"{slug}.json").read_text())
        drawn_before = {paper["arxiv_id"] for paper in labeled["papers"]}
    strata: dict[str, list[PaperRecord]] = {name: [] for name in sizes}
    with gzip.open(DEMO_CORPUS, "rb") as lines:
        for record in iter_snapshot(lines):
            if not isinstance(record, PaperRecord) or record.arxiv_id in drawn_before:
                continue
            doc = document(record)
            if rule.match(doc) is not None:
                strata["rule"].append(record)
            elif net.match(doc) is not None:
                strata["near"].append(record)
            elif record.primary_category in plan.categories:
                strata["other"].append(record)
    rng = random.Random(SEED if round_ == 1 else SEED + round_)
    drawn = []
    for name, size in sizes.items():
        pool = sorted(strata[name], key=lambda record: record.arxiv_id)
        for record in rng.sample(pool, min(size, len(pool))):
            drawn.append(
                {
                    "arxiv_id": record.arxiv_id,
                    "round": round_,
                    "stratum": name,
                    "stratum_size": len(pool),
                    "title": record.title,
                    "abstract": record.abstract,
                }
            )
    rng.shuffle(drawn)
    return drawn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("slug", choices=sorted(PLANS))
    parser.add_argument("out")
    parser.add_argument("--round", type=int, default=1, choices=(1, 2))
    args = parser.parse_args()
    with open(args.out, "w") as out:
        for row in draw(args.slug, args.round):
            out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
