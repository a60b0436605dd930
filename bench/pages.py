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
import contextlib
import hashlib
import itertools
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

from bench.common import BASE_DIR
from bench.common import BENCH_DATABASE
from bench.common import DEMO_CORPUS
from bench.common import Timer
from bench.common import corpus_rows
from bench.common import run_wrk
from bench.common import setup_django

# Redis database 9: the bench's own, emptied before each run.
CACHE_URL = os.environ.get("BENCH_CACHE_URL", "redis://127.0.0.1:6379/9")
SEED_TOPICS = BASE_DIR / "data" / "demo" / "topics.json"
# Bump when the fill below changes what it stores.
FILL_VERSION = 1
TARGETS = {"visitor": 0.5, "reader": 0.3}
# Signed-in pages with a target (the others are reported).
READER_TARGETS = ("home", "topic")
COLD_TARGET = 2.0
COLD_SAMPLES = 30
SEARCH = "/search/?q=reinforcement+learning"
UPSERT_BATCH = 2000
WORKERS = 2
WRK_THREADS = 2
WRK_CONNECTIONS = 8


# FILL
# ------------------------------------------------------------------------------


def signature(papers: int, topics: int) -> str:
    """What the filled database holds; a match means it can be reused as is."""
    facts = {
        "fill": FILL_VERSION,
        "papers": papers,
        "topics": topics,
        "corpus": DEMO_CORPUS.stat().st_size,
        "seed": hashlib.sha256(SEED_TOPICS.read_bytes()).hexdigest(),
    }
    digest = hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()
    return f"bench.pages {digest[:16]} {papers} papers {topics} topics"


def database_url(papers: int, topics: int) -> str:
    """One scratch database per size, so a small smoke run keeps the full one."""
    return os.environ.get("BENCH_PAGES_DATABASE_URL") or (
        BENCH_DATABASE.rsplit("/", 1)[0] + f"/momentum_bench_pages_p{papers}_t{topics}"
    )


def _psql(url: str, sql: str) -> str:
    server = url.rsplit("/", 1)[0] + "/postgres"
    done = subprocess.run(
        ["psql", server, "-tAc", sql], check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def stored_signature(url: str) -> str:
    """The signature the database was filled with ('' if none or no database)."""
    name = url.rsplit("/", 1)[1]
    return _psql(
        url,
        "SELECT coalesce(shobj_description(oid, 'pg_database'), '') "
        f"FROM pg_database WHERE datname = '{name}'",
    )


def store_signature(url: str, value: str) -> None:
    name = url.rsplit("/", 1)[1]
    _psql(url, f"COMMENT ON DATABASE {name} IS '{value}'")


def synthetic_id(copy: int, number: int) -> str:
    """A distinct arXiv id per (copy, row): YYMM from 1001 on, never a real pair."""
    return f"{10 + copy // 12:02d}{copy % 12 + 1:02d}.{number:05d}"


def recombined_lines(papers: int) -> Iterator[str]:
    """Snapshot lines for `papers` papers from the demo corpus.

    The first copy is the corpus as is; each later copy keeps a paper's
    abstract, authors, categories and dates and takes another paper's title.
    """
    rows = list(corpus_rows())
    for n in range(papers):
        copy, number = divmod(n, len(rows))
        row = rows[number]
        title = rows[(number + copy * 7919) % len(rows)]["title"]
        yield json.dumps({**row, "id": synthetic_id(copy, number), "title": title})


def seed_phrases() -> list[str]:
    """The quoted phrases of the seed topics' rules, in first-seen order."""
    seen: dict[str, None] = {}
    for entry in json.loads(SEED_TOPICS.read_text()):
        for phrase in re.findall(r'"([^"]{4,})"', entry["rule"]):
            seen.setdefault(phrase, None)
    return list(seen)


def generated_rules(count: int, seed: int = 11) -> list[tuple[str, str]]:
    """(name, rule) for `count` topics whose rules recombine the seed phrases."""
    from topics.rules import RuleError
    from topics.rules import compile_rule

    rng = random.Random(seed)
    phrases = seed_phrases()
    shapes = [
        '"{a}" OR "{b}" OR "{c}"',
        'ti:("{a}" OR "{b}") OR abs:"{c}"',
        '("{a}" OR "{b}" OR "{c}") ANDNOT ti:survey',
        '("{a}" OR "{b}") AND (LLM OR "{c}" OR learning)',
        'abs:"{a}" OR ti:"{b}" OR "{c}" OR "{d}"',
    ]
    rules: list[tuple[str, str]] = []
    while len(rules) < count:
        a, b, c, d = rng.sample(phrases, 4)
        rule = rng.choice(shapes).format(a=a, b=b, c=c, d=d)
        try:
            compile_rule(rule)
        except RuleError:
            continue
        rules.append((f"{a.capitalize()} and {b}"[:100], rule))
    return rules


def fill(papers: int, topics: int) -> None:
    """Topics, papers, tags and momentum, through the real pipeline's functions."""
    from django.db import connection
    from django.utils import timezone
    from django.utils.text import slugify

    from papers.ingest.records import Rejected
    from papers.ingest.snapshot import iter_snapshot
    from papers.ingest.upsert import upsert_records
    from papers.models import IngestRun
    from topics.models import Topic
    from topics.momentum import refresh_momentum
    from topics.seed import load_topics
    from topics.tagging import retag_all

    with Timer() as timer:
        seeded = load_topics()
        for number, (name, rule) in enumerate(
            generated_rules(max(topics - len(seeded), 0)), 1
        ):
            Topic.objects.create(
                name=f"{name} ({number})",
                slug=f"bench-{number:03d}-{slugify(name)}"[:120],
                description="Generated by bench.pages from the seed rules' phrases.",
                rule=rule,
            )
    print(f"  topics    {Topic.objects.count():9,}  in {timer.seconds:6.1f} s")

    run = IngestRun.objects.create(source="bench.pages", format="snapshot")
    with Timer() as timer:
        records = iter_snapshot(recombined_lines(papers))
        while batch := list(itertools.islice(records, UPSERT_BATCH)):
            rejected = [r for r in batch if isinstance(r, Rejected)]
            assert not rejected, rejected[:3]
            result = upsert_records(batch)
            run.fetched_count += len(batch)
            run.new_count += len(result.new_ids)
    run.status = IngestRun.Status.SUCCEEDED
    run.finished_at = timezone.now()
    run.save()
    print(f"  papers    {run.new_count:9,}  in {timer.seconds:6.1f} s")

    with Timer() as timer:
        tagged = retag_all()
    print(f"  tagging   {tagged.papers:9,}  in {timer.seconds:6.1f} s")
    with Timer() as timer:
        refresh_momentum()
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    print(f"  momentum, VACUUM ANALYZE   in {timer.seconds:6.1f} s")


def open_kept_database(url: str) -> None:
    """Set Django up on a filled database, kept from an earlier run."""
    setup_django(fresh_database=False, url=url)
    # Migrations added since the fill apply to the kept data, as in production.
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v0"],
        cwd=BASE_DIR,
        check=True,
        env=os.environ,
    )


def prepare_database(url: str, papers: int, topics: int, refill: bool) -> None:
    """Reuse the filled database when its signature matches, else fill it anew."""
    wanted = signature(papers, topics)
    name = url.rsplit("/", 1)[1]
    if not refill and stored_signature(url) == wanted:
        print(f"database: reusing {name} ({wanted})")
        open_kept_database(url)
        return
    print(f"database: filling {name}")
    setup_django(fresh_database=True, url=url)
    fill(papers, topics)
    store_signature(url, wanted)


# PAGES
# ------------------------------------------------------------------------------


def prepare_server_database(papers: int, topics: int, refill: bool) -> str:
    """Fill (or reuse) the database and set this process up as the server runs,
    for the script's own Django (fill, query counts, freshness); return its URL."""
    url = database_url(papers, topics)
    os.environ.update(
        {
            key: value
            for key, value in server_env(url).items()
            if key.startswith(("DJANGO_", "CACHE_"))
        }
    )
    prepare_database(url, papers, topics, refill)
    return url


def largest_seed_topic() -> tuple[str, int]:
    from django.db.models import Count

    from topics.models import Topic

    seed = [entry["slug"] for entry in json.loads(SEED_TOPICS.read_text())]
    topic = (
        Topic.objects.filter(slug__in=seed, is_active=True)
        .annotate(n=Count("paper_topics"))
        .order_by("-n", "slug")
        .first()
    )
    assert topic is not None, "no seed topic"
    return topic.slug, topic.n


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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_env(url: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="bench.settings",
        DATABASE_URL=url,
        DJANGO_DEBUG="false",
        DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost,testserver",
        CACHE_URL=CACHE_URL,
        DJANGO_LOG_LEVEL="WARNING",
        PYTHONPATH=str(BASE_DIR),
    )
    env.setdefault("DJANGO_SECRET_KEY", "bench-only-" + "x" * 50)
    env.pop("CELERY_BROKER_URL", None)
    return env


@contextlib.contextmanager
def gunicorn(port: int, log: Path, url: str) -> Iterator[subprocess.Popen]:
    """gunicorn serving bench.settings on 127.0.0.1:port until the block ends."""
    command = [
        str(Path(sys.executable).parent / "gunicorn"),
        "config.wsgi",
        "-w",
        str(WORKERS),
        "-b",
        f"127.0.0.1:{port}",
        "--log-level",
        "warning",
    ]
    with log.open("w") as out:
        server = subprocess.Popen(
            command, cwd=BASE_DIR, env=server_env(url), stdout=out, stderr=out
        )
    try:
        wait_until_up(f"http://127.0.0.1:{port}/bench/minimal/", server, log)
        yield server
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def wait_until_up(url: str, server: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"gunicorn exited ({server.returncode}):\n{log.read_text()}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"gunicorn did not answer {url} within 60 s:\n{log.read_text()}")


def worker_pids(master: int) -> list[int]:
    children = Path(f"/proc/{master}/task/{master}/children").read_text()
    return [int(pid) for pid in children.split()]


def wrk(url: str, seconds: float, cookie: str = "") -> dict[str, float]:
    """Run wrk against url (with this Cookie header); requests/s, mean latency
    (ms) and failed responses."""
    headers = ["-H", f"Cookie: {cookie}"] if cookie else []
    out, rps = run_wrk(
        url,
        f"-t{WRK_THREADS}",
        f"-c{WRK_CONNECTIONS}",
        f"-d{max(1, round(seconds))}s",
        *headers,
    )
    latency = re.search(r"Latency\s+([\d.]+)(us|ms|s)\b", out)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    errors = re.search(r"Socket errors:.*timeout (\d+)", out)
    return {
        "rps": rps,
        "latency_ms": float(latency.group(1)) * scale[latency.group(2)]
        if latency
        else float("nan"),
        "failed": float(bad.group(1) if bad else 0)
        + float(errors.group(1) if errors else 0),
    }


def fetch(url: str, cookie: str = "") -> str:
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read().decode()


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


def average_baseline(result: dict[str, float], url: str, seconds: float) -> None:
    """Measure the baseline again and keep the mean of its first and last runs:
    the machine's other load drifts during a run."""
    first, last = result["rps"], wrk(url, seconds)["rps"]
    result["rps"] = (first + last) / 2
    result["spread"] = abs(first - last) / 2


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
