"""bench/tagging: papers tagged per second against 100, 1,000 and 5,000 topics.

    .venv/bin/python -m bench.tagging [--papers 50000]

Builds each paper's rule document and matches it against a RuleSet of N topic
rules, for N = 100, 1,000 and 5,000, over the demo corpus repeated to --papers.
The rules are generated deterministically from the corpus's own title phrases,
in the shapes curators write (phrases, AND, OR, ANDNOT, field prefixes, a few
wildcards and category scopes), so they match like real topics do. Prints
papers per second for each N and the cost of 1,000 and 5,000 topics relative to
100 (target: 1,000 topics cost at most 3x 100 — the matcher must not be a loop of
regular expressions over every topic). No database: this measures the matcher.
"""

from __future__ import annotations

import argparse
import itertools
import random
import re
from collections import Counter

from bench.common import Timer
from bench.common import corpus_rows

# Includes the words the rule language refuses in lower case (and, or, not).
STOP = set(
    "a an the of and or not in on to for with by from at as is are be via using "
    "towards toward into over under through its their our we this that".split()
)
WORD = re.compile(r"[A-Za-z][A-Za-z-]{3,}")


def title_phrases(rows: list[dict]) -> list[str]:
    """Two-word phrases that recur in titles: the vocabulary of real topics."""
    counts: Counter[str] = Counter()
    for row in rows:
        words = [w.lower() for w in WORD.findall(row["title"]) if w.lower() not in STOP]
        counts.update(f"{a} {b}" for a, b in itertools.pairwise(words))
    return [phrase for phrase, count in counts.most_common(20_000) if count >= 2]


def make_rules(phrases: list[str], count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    shapes = [
        'abs:"{p}"',
        'ti:"{p}" OR abs:"{q}"',
        'abs:"{p}" AND abs:{w}',
        '(ti:"{p}" OR ti:"{q}") ANDNOT ti:survey',
        'all:"{p}" AND cat:cs.*',
        'abs:"{p}" AND (abs:{stem}* OR ti:"{q}")',
    ]
    rules = []
    for _ in range(count):
        p, q = rng.sample(phrases, 2)
        w = rng.choice(p.split()).strip("-")
        rules.append(rng.choice(shapes).format(p=p, q=q, w=w, stem=w[:5]))
    return rules


def documents(rows: list[dict], papers: int):
    from topics.rules import Document

    for row in itertools.islice(itertools.cycle(rows), papers):
        yield Document.from_fields(
            title=row["title"],
            abstract=row["abstract"],
            authors=row["authors"].split(", "),
            categories=row["categories"].split(),
            comment=row.get("comments") or "",
        )


def rate(rows: list[dict], papers: int, rules: list[str]) -> tuple[float, int]:
    from topics.rules import RuleSet
    from topics.rules import compile_rule

    rule_set = RuleSet({n: compile_rule(text) for n, text in enumerate(rules)})
    tags = 0
    with Timer() as timer:
        for doc in documents(rows, papers):
            tags += len(rule_set.match(doc))
    return papers / timer.seconds, tags


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--papers", type=int, default=50_000)
    args = parser.parse_args()
    rows = list(corpus_rows())
    phrases = title_phrases(rows)
    results = {}
    for topics in (100, 1_000, 5_000):
        results[topics] = rate(rows, args.papers, make_rules(phrases, topics))
        per_second, tags = results[topics]
        print(
            f"{topics:>5,} topics: {per_second:8,.0f} papers/s, "
            f"{tags / args.papers:6.2f} tags per paper"
        )
    base = results[100][0]
    for topics in (1_000, 5_000):
        print(
            f"cost of {topics:,} topics / 100 topics: {base / results[topics][0]:.2f}x"
        )
    print("target: 1,000 topics cost at most 3.00x 100 topics")


if __name__ == "__main__":
    main()
