"""bench/preview: CPU and wall time of a curator's rule preview, per seed rule.

    PYTHONPATH=. .venv/bin/python -m bench.preview [--papers 25002] [--full-scan 3]
        [--refill]

Prerequisite: PostgreSQL on 127.0.0.1.

Fills a scratch PostgreSQL database, momentum_bench_preview_p<papers>, with
--papers papers recombined from the demo corpus (bench.pages' recombination: each
real paper's metadata under a distinct id, later copies with another paper's
title) through the real bulk upsert, then derives every paper's index terms once
(as tagging and ingest do when they store papers). The filled database is kept
and reused while its signature matches; --refill forces a new fill.

Then previews each of the 34 seed rules (with its categories) as admin does,
topics.preview.preview_rule: the database's prefilter finds the candidates, those
their index terms surely decide are counted as they are, and the matcher checks
the rest ("checked"). For the first --full-scan rules it also times the old
way, matching every paper (topics.preview.rule_matching_ids without prefilter),
checks that both find the same papers, and prints the ratio. CPU is this
process's time.process_time() (the database server's own CPU shows in the wall
time only). Target: at most 1 CPU-second per preview at 100,000 papers.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import statistics
import time
from collections.abc import Callable

from bench.common import BENCH_DATABASE
from bench.common import DEMO_CORPUS
from bench.common import Timer
from bench.common import setup_django
from bench.pages_fill import SEED_TOPICS
from bench.pages_fill import open_kept_database
from bench.pages_fill import recombined_lines
from bench.pages_fill import store_signature
from bench.pages_fill import stored_signature

FILL_VERSION = 1
UPSERT_BATCH = 1000
TARGET_CPU_SECONDS = 1.0


def signature(papers: int) -> str:
    facts = {
        "fill": FILL_VERSION,
        "papers": papers,
        "corpus": DEMO_CORPUS.stat().st_size,
    }
    digest = hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()
    return f"bench.preview {digest[:16]} {papers} papers"


def database_url(papers: int) -> str:
    return os.environ.get("BENCH_PREVIEW_DATABASE_URL") or (
        BENCH_DATABASE.rsplit("/", 1)[0] + f"/momentum_bench_preview_p{papers}"
    )


def fill(papers: int) -> None:
    from papers.ingest.records import Rejected
    from papers.ingest.snapshot import iter_snapshot
    from papers.ingest.upsert import upsert_records
    from topics.prefilter import refresh_rule_documents

    with Timer() as timer:
        records = iter_snapshot(recombined_lines(papers))
        while batch := list(itertools.islice(records, UPSERT_BATCH)):
            rejected = [r for r in batch if isinstance(r, Rejected)]
            assert not rejected, rejected[:3]
            upsert_records(batch)
    print(f"  papers {papers:9,}  in {timer.seconds:6.1f} s")
    with Timer() as timer:
        derived = refresh_rule_documents()
    print(f"  terms  {derived:9,}  in {timer.seconds:6.1f} s (once, as ingest does)")
    vacuum_analyze()


def vacuum_analyze() -> None:
    """Statistics for the planner, and the GIN index's pending entries merged
    (PostgreSQL merges them as they accumulate; a bulk fill leaves many)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


def prepare_database(papers: int, refill: bool) -> None:
    url = database_url(papers)
    wanted = signature(papers)
    name = url.rsplit("/", 1)[1]
    if not refill and stored_signature(url) == wanted:
        print(f"database: reusing {name} ({wanted})")
        # Migrations added since the fill apply to the kept data, and terms of
        # an older version are derived again, before anything is timed.
        open_kept_database(url)
        from topics.prefilter import refresh_rule_documents

        with Timer() as timer:
            derived = refresh_rule_documents()
        print(f"  terms  {derived:9,}  derived again in {timer.seconds:6.1f} s")
        vacuum_analyze()
        return
    print(f"database: filling {name}")
    setup_django(fresh_database=True, url=url)
    fill(papers)
    store_signature(url, wanted)


def timed(work: Callable[[], object]) -> tuple[object, float, float]:
    """work's result, CPU seconds and wall seconds."""
    cpu, wall = time.process_time(), time.perf_counter()
    result = work()
    return result, time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=25_002)
    parser.add_argument(
        "--full-scan",
        type=int,
        default=3,
        help="time the old full scan for this many of the seed rules (each costs "
        "about a minute per 100,000 papers)",
    )
    parser.add_argument("--refill", action="store_true")
    args = parser.parse_args()
    prepare_database(args.papers, args.refill)

    from papers.models import Paper
    from topics.preview import preview_rule
    from topics.preview import rule_matching_ids
    from topics.rules import compile_rule

    seeds = json.loads(SEED_TOPICS.read_text())
    print(f"\n{Paper.objects.count():,} papers, {len(seeds)} seed rules\n")
    print(
        f"{'rule':32} {'matches':>7} {'checked':>7} {'CPU s':>7} {'wall s':>7}"
        f" {'full CPU':>8} {'full wall':>9} {'CPU ratio':>9}"
    )
    cpus, walls, ratios = [], [], []
    for number, seed in enumerate(seeds):
        scope = seed.get("categories", [])
        preview, cpu, wall = timed(
            lambda seed=seed, scope=scope: preview_rule(seed["rule"], categories=scope)
        )
        cpus.append(cpu)
        walls.append(wall)
        line = (
            f"{seed['slug'][:32]:32} {preview.count:7,} {preview.checked:7,}"
            f" {cpu:7.3f} {wall:7.3f}"
        )
        if number < args.full_scan:
            rule = compile_rule(seed["rule"])
            (scanned, _), full_cpu, full_wall = timed(
                lambda rule=rule, scope=scope: rule_matching_ids(
                    rule, scope, prefilter=False
                )
            )
            prefiltered, _ = rule_matching_ids(rule, scope)
            assert scanned == prefiltered, f"{seed['slug']}: results differ"
            ratios.append(full_cpu / cpu)
            line += f" {full_cpu:8.2f} {full_wall:9.2f} {full_cpu / cpu:8.0f}x"
        print(line)
    print(
        f"\nprefiltered preview: CPU median {statistics.median(cpus):.3f} s, "
        f"max {max(cpus):.3f} s; wall median {statistics.median(walls):.3f} s, "
        f"max {max(walls):.3f} s"
    )
    if ratios:
        print(
            f"full scan / prefilter CPU, {len(ratios)} rule(s): "
            f"{min(ratios):.0f}x to {max(ratios):.0f}x (same papers found)"
        )
    verdict = "met" if max(cpus) <= TARGET_CPU_SECONDS else "NOT met"
    print(
        f"target <= {TARGET_CPU_SECONDS:.0f} CPU-second per preview: {verdict} at "
        f"{args.papers:,} papers"
    )


if __name__ == "__main__":
    main()
