"""bench/api: requests per second of the API's paper list and detail beside a
minimal DRF view.

    PYTHONPATH=. .venv/bin/python -m bench.api [--papers 100000] [--topics 200]
        [--seconds 20] [--refill]

Prerequisites: PostgreSQL and Redis on 127.0.0.1, and wrk (`apt-get install -y wrk`).

Uses bench.pages' database (filled and kept by it: --papers papers through the
real upsert, tagged into --topics topics, momentum stored) and its server:
gunicorn with 2 sync workers on bench.settings (production settings over plain
HTTP, cache in Redis), loaded with `wrk -t2 -c8` for --seconds per address after
a warm-up:
  - minimal-api: a DRF view returning {"ok": true}, with the API's
    authentication and throttling (bench/urls.py);
  - papers:      /api/v1/papers/?topic=<the seed topic with the most papers>;
  - topic:       /api/v1/topics/<that topic>/papers/;
  - paper:       /api/v1/papers/<the newest paper of that topic>/;
  - similar:     /api/v1/papers/<that paper>/similar/ (target: <= 50 ms warm);
and prints requests per second, each ratio to the minimal DRF view (target:
>= 0.35; caching counts when it is invalidated correctly on every change), and
the SQL queries per request on a cold and a warm cache. Throttling stays on, at
rates wrk cannot reach. Last, it checks the served answers are fresh after a
change through the curators' functions, and undoes the change.

Before serving, it builds every paper's similar papers (topics.similar), and
prints how long that took and the process's peak memory; --reuse-similar keeps
a build of this corpus instead (the fill's ingest may have made one).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import shutil
import sys
import tempfile
import time
import urllib.request
from datetime import timedelta
from pathlib import Path

from bench.pages import TARGETS
from bench.pages import average_baseline
from bench.pages import corpus_rows
from bench.pages import largest_seed_topic
from bench.pages import query_counts
from bench.pages_server import CACHE_URL
from bench.pages_server import WORKERS
from bench.pages_server import WRK_CONNECTIONS
from bench.pages_server import WRK_THREADS
from bench.pages_server import free_port
from bench.pages_server import gunicorn
from bench.pages_server import prepare_server_database
from bench.pages_server import wrk

# High enough that wrk never meets them; the throttles still run on every call.
THROTTLE_RATE = "100000000/second"
BASELINE = "minimal-api"


def fetch_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=60) as response:
        return json.loads(response.read())


def freshness(base: str, paths: dict[str, str], slug: str) -> dict[str, bool]:
    """Whether the served answers show a change made right after they were loaded.

    papers/topic: a new paper ingested through the pipeline and pinned to the
    topic (topics.curation.pin_paper) must head both lists. paper: pinning it to
    another topic must show in its detail. Both are undone afterwards.
    """
    from django.utils import timezone

    from papers.ingest.runs import ingest_entries
    from papers.ingest.snapshot import iter_snapshot
    from papers.models import IngestRun
    from papers.models import Paper
    from papers.versions import content_changed
    from topics.curation import pin_paper
    from topics.curation import unpin_paper
    from topics.models import Topic

    for path in paths.values():
        fetch_json(base + path)  # cached now
    fresh = {}
    topic = Topic.objects.get(slug=slug)
    (record,) = iter_snapshot([json.dumps(next(corpus_rows()))])
    now = timezone.now() - timedelta(hours=1)
    probe = dataclasses.replace(
        record, arxiv_id="0901.99998", title="API probe", published=now, updated=now
    )
    run = IngestRun.objects.create(source="bench.api freshness probe")
    try:
        ingest_entries(run, [probe])
        pin_paper(topic, Paper.objects.get(arxiv_id=probe.arxiv_id))
        for name in ("papers", "topic"):
            first = fetch_json(base + paths[name])["results"][0]
            fresh[name] = first["arxiv_id"] == probe.arxiv_id
    finally:
        Paper.objects.filter(arxiv_id=probe.arxiv_id).delete()
        run.delete()
        content_changed()

    arxiv_id = paths["paper"].rstrip("/").rsplit("/", 1)[1]
    paper = Paper.objects.get(arxiv_id=arxiv_id)
    other = Topic.objects.filter(is_active=True).exclude(papers=paper).first()
    assert other is not None
    pin_paper(other, paper)
    try:
        shown = fetch_json(base + paths["paper"])["topics"]
        fresh["paper"] = other.slug in [tag["slug"] for tag in shown]
    finally:
        unpin_paper(other, paper)
    return fresh


def load(base: str, paths: dict[str, str], seconds: float) -> dict[str, dict]:
    results = {}
    warm_up = min(2.0, max(1.0, seconds / 4))
    for name, path in paths.items():
        wrk(base + path, warm_up)
        results[name] = wrk(base + path, seconds)
    average_baseline(results[BASELINE], base + paths[BASELINE], seconds)
    return results


def build_similar(*, reuse: bool) -> str:
    """Build every paper's similar papers (with `reuse`, only if not built for
    this corpus); what it took, as a line to print."""
    from topics.similar import build_all
    from topics.similar import build_if_changed

    result = build_if_changed() if reuse else build_all()
    if result is None:
        return "built before for this corpus (not timed: --reuse-similar)"
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return f"{result} (peak memory of this process {peak:,.0f} MiB)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--topics", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument(
        "--refill", action="store_true", help="fill the database even if it matches"
    )
    parser.add_argument(
        "--reuse-similar",
        action="store_true",
        help="do not build the similar papers again if built for this corpus",
    )
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("bench.api needs wrk: apt-get install -y wrk")

    os.environ["MOMENTUM_API_ANON_RATE"] = THROTTLE_RATE
    os.environ["MOMENTUM_API_USER_RATE"] = THROTTLE_RATE
    url = prepare_server_database(args.papers, args.topics, args.refill)

    from papers.models import Paper

    similar = build_similar(reuse=args.reuse_similar)
    slug, tagged = largest_seed_topic()
    newest = (
        Paper.objects.filter(paper_topics__topic__slug=slug)
        .order_by("-first_announced", "-id")
        .values_list("arxiv_id", flat=True)
        .first()
    )
    paths = {
        BASELINE: "/bench/minimal-api/",
        "papers": f"/api/v1/papers/?topic={slug}",
        "topic": f"/api/v1/topics/{slug}/papers/",
        "paper": f"/api/v1/papers/{newest}/",
        "similar": f"/api/v1/papers/{newest}/similar/",
    }
    counts = query_counts(paths)
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "gunicorn.log"
        with gunicorn(port, log, url):
            base = f"http://127.0.0.1:{port}"
            started = time.monotonic()
            results = load(base, paths, args.seconds)
            fresh = freshness(base, paths, slug)
            took = time.monotonic() - started

    print(
        f"papers: {Paper.objects.count():,}  topic: {slug} ({tagged:,} papers)  "
        f"paper: {newest}"
    )
    print(
        f"gunicorn {WORKERS} sync workers, wrk -t{WRK_THREADS} -c{WRK_CONNECTIONS}, "
        f"{args.seconds:g} s per address after a warm-up ({took:.0f} s in all); "
        f"cache {CACHE_URL}"
    )
    print(f"similar papers: {similar}")
    print()
    print(
        f"{'address':12} {'path':44} {'queries':>9} {'cold':>8} {'KiB':>6} "
        f"{'req/s':>8} {'latency':>9} {'ratio':>6}  target"
    )
    baseline = results[BASELINE]["rps"]
    for name, path in paths.items():
        cold, warm, size, cold_ms = counts[name]
        result = results[name]
        ratio = result["rps"] / baseline
        target = verdict = ""
        if name != BASELINE:
            target = f">= {TARGETS['visitor']:.2f}"
            verdict = " ok" if ratio >= TARGETS["visitor"] else " MISS"
        print(
            f"{name:12} {path[:44]:44} {f'{cold}/{warm}':>9} {cold_ms:6.0f}ms "
            f"{size / 1024:6.1f} {result['rps']:8,.1f} "
            f"{result['latency_ms']:7.1f}ms {ratio:6.2f}  {target}{verdict}"
        )
        if name == BASELINE:
            print(
                f"{'':12} mean of a run before and after the API, "
                f"± {result['spread']:,.1f} req/s"
            )
        if result["failed"]:
            print(f"             {result['failed']:,.0f} failed responses or timeouts")
    print()
    print(
        "queries: SQL queries per request on a cold / warm cache (the same for any "
        "page of the list); cold: time to build on a cold cache, in this process"
    )
    print(
        "fresh after a change: "
        + ", ".join(f"{name} {'yes' if ok else 'NO'}" for name, ok in fresh.items())
        + " (papers, topic: a paper ingested and pinned; paper: pinned to a topic)"
    )


if __name__ == "__main__":
    main()
