"""bench/pages: requests per second of the home and topic pages beside a minimal view.

    PYTHONPATH=. .venv/bin/python -m bench.pages [--papers 100000] [--topics 200]
        [--seconds 20] [--refill] [--profile DIR]

Prerequisites: PostgreSQL and Redis on 127.0.0.1, and wrk (`apt-get install -y wrk`).

Fills a scratch PostgreSQL database, momentum_bench_pages_p<papers>_t<topics>,
with --papers papers recombined from the demo corpus (each real paper's metadata
under a distinct id, later copies with the title of another paper) through the
real bulk upsert, the 34 seed topics plus generated ones up to --topics (rules
recombined from the seed rules' phrases), then tags every paper and stores
momentum. The filled database is kept and reused while its signature (sizes,
corpus, seed topics) matches, with migrations added since applied to it;
--refill forces a new fill.

Then serves the site with gunicorn (2 sync workers, bench.settings: production
settings over plain HTTP, cache in Redis) and loads, for --seconds each after a
short warm-up, with `wrk -t2 -c8`:
  - minimal: a view returning HttpResponse("ok") behind the same middleware;
  - home:    the home page (a signed-in reader's: their feed);
  - topic:   the page of the seed topic with the most papers;
  - paper:   the newest paper of that topic;
  - search:  a search for "reinforcement learning";
each for a visitor and for a signed-in reader who follows five topics and saved
ten of the topic page's papers, and prints requests per second and each page's
ratio to the minimal view (targets: visitors >= 0.5, signed-in home and topic
>= 0.3; caching counts when it is invalidated correctly on every change), with
the SQL queries each page runs on a cold and a warm cache. Then the topic page
cold: the reader's median time to first byte right after someone follows another
topic or this one (the page must stay rendered) and after this topic's
description is edited (it renders anew, within 2x a warm page's time). Last,
it checks that the served pages are fresh after a change (a paper ingested
through the pipeline shows on the home page, an edited topic description on the
topic page) and undoes the change.

--profile DIR also records each page's load with py-spy (collapsed stacks of one
gunicorn worker, DIR/<page>.txt); the profiler takes CPU, so the rates of that
run are lower than without it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.common import Timer
from bench.common import corpus_rows
from bench.pages_fill import SEED_TOPICS
from bench.pages_fill import largest_seed_topic
from bench.pages_server import CACHE_URL
from bench.pages_server import WORKERS
from bench.pages_server import WRK_CONNECTIONS
from bench.pages_server import WRK_THREADS
from bench.pages_server import average_baseline
from bench.pages_server import fetch
from bench.pages_server import free_port
from bench.pages_server import gunicorn
from bench.pages_server import prepare_server_database
from bench.pages_server import worker_pids
from bench.pages_server import wrk

TARGETS = {"visitor": 0.5, "reader": 0.3}
# Signed-in pages with a target (the others are reported).
READER_TARGETS = ("home", "topic")
COLD_TARGET = 2.0
COLD_SAMPLES = 30
SEARCH = "/search/?q=reinforcement+learning"


def query_counts(
    paths: dict[str, str], reader: object = None
) -> dict[str, tuple[int, int, int, float]]:
    """(queries on a cold cache, on a warm cache, bytes, cold ms) per page, for a
    visitor or, with `reader`, for that user signed in."""
    from django.core.cache import cache
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    if reader is not None:
        client.force_login(reader)
    cache.clear()  # sessions stay in the database
    counts = {}
    for name, path in paths.items():
        client.get(path)  # templates compiled, connections open
        cache.clear()  # sessions stay in the database
        runs = []
        for _ in range(2):
            with CaptureQueriesContext(connection) as queries, Timer() as timer:
                response = client.get(path)
            assert response.status_code == 200, (path, response.status_code)
            runs.append((len(queries), timer.seconds * 1000))
        counts[name] = (runs[0][0], runs[1][0], len(response.content), runs[0][1])
    return counts


def bench_reader(slug: str) -> tuple[object, str]:
    """The signed-in reader (following five topics, this one first, and having
    saved ten of its newest papers) and the Cookie header of their session."""
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY
    from django.contrib.auth import HASH_SESSION_KEY
    from django.contrib.auth import SESSION_KEY
    from django.contrib.sessions.backends.cached_db import SessionStore
    from django.middleware.csrf import _get_new_csrf_string

    from accounts.models import User
    from papers.library import set_saved
    from topics.following import set_following
    from topics.models import Topic
    from topics.query import topic_papers

    email = "bench-reader@momentum.localhost"
    user = User.objects.filter(email=email).first() or User.objects.create_user(
        email, "bench-reader-password"
    )
    topic = Topic.objects.get(slug=slug)
    seeds = [entry["slug"] for entry in json.loads(SEED_TOPICS.read_text())]
    others = Topic.objects.filter(slug__in=seeds, is_active=True).exclude(pk=topic.pk)
    for followed in [topic, *others.order_by("slug")[:4]]:
        set_following(user, followed, True)
    for paper in topic_papers(topic)[:10]:
        set_saved(user, paper, True)
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    return user, f"sessionid={session.session_key}; csrftoken={_get_new_csrf_string()}"


def cold_topic_page(base: str, path: str, slug: str, cookie: str) -> dict[str, float]:
    """The reader's median time to the topic page's first byte (ms): warm; right
    after someone follows another topic, or this one (both must leave the page
    rendered); and right after this topic's description is edited, as admin
    does (the page renders anew)."""
    from accounts.models import User
    from topics.following import set_following
    from topics.models import Topic

    email = "bench-other@momentum.localhost"
    other_user = User.objects.filter(email=email).first() or User.objects.create_user(
        email, "bench-other-password"
    )
    this = Topic.objects.get(slug=slug)
    other = Topic.objects.filter(is_active=True).exclude(pk=this.pk).order_by("slug")[0]
    description = this.description

    def edit(n: int) -> None:
        this.description = f"{description} " if n % 2 == 0 else description
        this.save()

    def timed(change: Callable[[int], None] | None) -> float:
        times = []
        for n in range(COLD_SAMPLES):
            if change is not None:
                change(n)
            with Timer() as timer:
                fetch(base + path, cookie)
            times.append(timer.seconds * 1000)
        return sorted(times)[len(times) // 2]

    fetch(base + path, cookie)
    result = {
        "warm": timed(None),
        "other": timed(lambda n: set_following(other_user, other, n % 2 == 0)),
        "followed": timed(lambda n: set_following(other_user, this, n % 2 == 0)),
        "edited": timed(edit),
    }
    this.description = description
    this.save()
    set_following(other_user, this, False)
    set_following(other_user, other, False)
    return result


def freshness(base: str, paths: dict[str, str], slug: str) -> dict[str, bool]:
    """Whether the served pages show a change made right after they were loaded.

    Home: a new paper ingested through the pipeline (papers.ingest.runs) must be
    listed. Topic: an edited description (Topic.save, as admin does) must show.
    Both are undone afterwards, so the kept database stays as filled.
    """
    import dataclasses
    from datetime import timedelta

    from django.utils import timezone

    from papers.ingest.runs import ingest_entries
    from papers.ingest.snapshot import iter_snapshot
    from papers.models import IngestRun
    from papers.models import Paper
    from papers.versions import content_changed
    from topics.models import Topic

    marker = f"Bench freshness probe {time.time_ns()}"
    for path in (paths["home"], paths["topic"]):
        fetch(base + path)  # in the cache now, if pages are cached
    fresh = {}

    (record,) = iter_snapshot([json.dumps(next(corpus_rows()))])
    now = timezone.now() - timedelta(hours=1)
    probe = dataclasses.replace(
        record, arxiv_id="0901.99999", title=marker, published=now, updated=now
    )
    run = IngestRun.objects.create(source="bench.pages freshness probe")
    try:
        ingest_entries(run, [probe])
        fresh["home"] = marker in fetch(base + paths["home"])
    finally:
        Paper.objects.filter(arxiv_id=probe.arxiv_id).delete()
        run.delete()
        content_changed()

    topic = Topic.objects.get(slug=slug)
    description = topic.description
    topic.description = marker
    topic.save()
    try:
        fresh["topic"] = marker in fetch(base + paths["topic"])
    finally:
        topic.description = description
        topic.save()
    return fresh


def load(
    base: str,
    paths: dict[str, str],
    seconds: float,
    master: int,
    profile: Path | None,
    cookie: str = "",
) -> dict[str, dict[str, float]]:
    results = {}
    warm_up = min(2.0, max(1.0, seconds / 4))
    for name, path in paths.items():
        if name == "minimal" and cookie:
            continue  # measured once, for both
        wrk(base + path, warm_up, cookie)
        spy = None
        if profile is not None:
            spy = subprocess.Popen(
                [
                    str(Path(sys.executable).parent / "py-spy"),
                    "record",
                    "--format",
                    "raw",
                    "-d",
                    str(max(1, round(seconds))),
                    "-p",
                    str(worker_pids(master)[0]),
                    "-o",
                    str(profile / f"{name}{'-reader' if cookie else ''}.txt"),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        results[name] = wrk(base + path, seconds, cookie)
        if spy is not None:
            spy.wait(timeout=seconds + 30)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--topics", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument(
        "--refill", action="store_true", help="fill the database even if it matches"
    )
    parser.add_argument(
        "--profile", type=Path, help="write py-spy collapsed stacks per page here"
    )
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("bench.pages needs wrk: apt-get install -y wrk")
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)

    url = prepare_server_database(args.papers, args.topics, args.refill)

    from topics.models import Topic
    from topics.query import topic_papers

    slug, tagged = largest_seed_topic()
    newest = topic_papers(Topic.objects.get(slug=slug)).first()
    paths = {
        "minimal": "/bench/minimal/",
        "home": "/",
        "topic": f"/topics/{slug}/",
        "paper": newest.get_absolute_url(),
        "search": SEARCH,
    }
    reader, cookie = bench_reader(slug)
    counts = {"visitor": query_counts(paths), "reader": query_counts(paths, reader)}
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "gunicorn.log"
        with gunicorn(port, log, url) as server:
            results = {
                "visitor": load(base, paths, args.seconds, server.pid, args.profile),
                "reader": load(
                    base, paths, args.seconds, server.pid, args.profile, cookie
                ),
            }
            # The machine's other load drifts: the minimal view runs first and
            # last, and the pages are compared with the mean of the two.
            minimal = results["visitor"]["minimal"]
            average_baseline(minimal, base + paths["minimal"], args.seconds)
            cold = cold_topic_page(base, paths["topic"], slug, cookie)
            fresh = freshness(base, paths, slug)
    report(args, paths, tagged, counts, results, cold, fresh)


def report(args, paths, tagged, counts, results, cold, fresh) -> None:
    from papers.models import Paper
    from topics.models import Topic

    papers = Paper.objects.count()
    topics = Topic.objects.filter(is_active=True).count()
    print(
        f"papers: {papers:,}  topics: {topics:,}  "
        f"topic page: {paths['topic']} ({tagged:,} papers)"
    )
    print(
        f"gunicorn {WORKERS} sync workers, wrk -t{WRK_THREADS} -c{WRK_CONNECTIONS}, "
        f"{args.seconds:g} s per page after a warm-up; cache {CACHE_URL}"
    )
    minimal = results["visitor"]["minimal"]
    print(
        f"minimal  {minimal['rps']:8,.1f} req/s (mean of a run before and after the "
        f"pages, ± {minimal['spread']:,.1f})"
    )
    for audience, title in [("visitor", "visitors"), ("reader", "signed in")]:
        print()
        print(
            f"{title:9} {'path':34} {'queries':>9} {'cold':>8} {'KiB':>6} "
            f"{'req/s':>8} {'latency':>9} {'ratio':>6}  target"
        )
        for name, path in paths.items():
            if name == "minimal":
                continue
            cold_count, warm, size, cold_ms = counts[audience][name]
            result = results[audience][name]
            ratio = result["rps"] / minimal["rps"]
            target = TARGETS[audience]
            if audience == "reader" and name not in READER_TARGETS:
                target = None
            verdict = "" if target is None else (" ok" if ratio >= target else " MISS")
            wanted = "" if target is None else f">= {target:.2f}"
            print(
                f"{name:9} {path[:34]:34} {f'{cold_count}/{warm}':>9} "
                f"{cold_ms:6.0f}ms {size / 1024:6.1f} {result['rps']:8,.1f} "
                f"{result['latency_ms']:7.1f}ms {ratio:6.2f}  {wanted}{verdict}"
            )
            if result["failed"]:
                print(f"          {result['failed']:,.0f} failed responses or timeouts")
    print()
    print(
        "queries: SQL queries per request on a cold / warm cache; cold: time to "
        "render on a cold cache (one request each, in this process)"
    )
    ratio = cold["edited"] / cold["warm"]
    verdict = "ok" if ratio <= COLD_TARGET else "MISS"
    print(
        f"topic page, signed in, median of {COLD_SAMPLES} requests: warm "
        f"{cold['warm']:.1f} ms; after someone follows another topic "
        f"{cold['other']:.1f} ms ({cold['other'] / cold['warm']:.2f}x), this topic "
        f"{cold['followed']:.1f} ms ({cold['followed'] / cold['warm']:.2f}x); "
        f"after its description is edited (rendered anew) {cold['edited']:.1f} ms "
        f"({ratio:.2f}x, target <= {COLD_TARGET:g}x {verdict})"
    )
    print(
        "fresh after a change: "
        + ", ".join(f"{name} {'yes' if ok else 'NO'}" for name, ok in fresh.items())
        + " (home: a paper ingested; topic: its description edited)"
    )
    if args.profile is not None:
        print(f"py-spy stacks: {args.profile}/<page>.txt (rates lowered by profiling)")


if __name__ == "__main__":
    main()
