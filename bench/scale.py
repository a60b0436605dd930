"""bench/scale: the site at 100k, 300k and 1M papers, beside the minimal view.

    PYTHONPATH=. .venv/bin/python -m bench.scale [--sizes 100k,300k,1m]
        [--seconds 10] [--save FILE] [--refill]

Prerequisites: PostgreSQL and Redis on 127.0.0.1, and wrk (`apt-get install -y wrk`).

Each size has its own database, momentum_scale_<size> (kept and reused while its
signature matches; --refill fills it anew). A fill runs bench.pages' pipeline on
the real demo corpus (its 25,002 papers of June-July 2026 upserted, 200 topics:
the 34 seed topics plus rules recombined from their phrases, every paper tagged)
and then copies those papers in SQL, with their authorships, categories and tags,
under new arXiv ids and with every date moved back by nine more weeks per copy
(the corpus's two months, in whole weeks so announcement weekdays stay), until
there are as many papers as the size asks: 1M papers reach seven years back. The
copies keep their text, so their tags and search vectors are copied too.

Each size is measured in a process of its own, with gunicorn (bench.pages'
server: 2 sync workers, production settings, cache in Redis) loaded by wrk for
--seconds each after a short warm-up:
  - minimal: HttpResponse("ok") behind the site's middleware, before and after
    the pages (their mean is the baseline);
  - topic page warm (a visitor's, from the cache) and signed in; topic page cold
    (a reader's median time to first byte right after the topic changed);
    home feed (a signed-in reader following five topics); paper page;
  - search uncached: every request a new address (seed phrases and common
    words), so none is served from the page cache; p50 and p95;
  - API list, uncached: pages at random cursors, with and without a search.
Then, in a separate process: the admin's rule preview of the largest seed
topic's own rule, as its view computes it (served, it would run in a web worker
under gunicorn's 30 s timeout, which it outlasts at these sizes), and what a
worker runs: re-tag of that topic, the momentum refresh (nightly and after
every run), and the ingest of a 10,000-paper snapshot file (new ids; deleted
afterwards, so the fill is kept).
Last, the database's size and the peak resident memory (VmHWM / ru_maxrss) of a
gunicorn worker and of that worker process.

Prints one column per size; --save FILE writes the figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path
from typing import Any

import bench.pages as pages
from bench.common import BASE_DIR
from bench.common import BENCH_DATABASE
from bench.common import Timer
from bench.common import corpus_rows
from bench.common import run_wrk
from bench.common import setup_django

TOPICS = 200
# Bump when the fill below changes what it stores.
FILL_VERSION = 1
SHIFT_DAYS = 9 * 7
# The ingest batch takes ids of a copy number no fill reaches (1M is 40 copies).
INGEST_COPY = 90
INGEST_PAPERS = 10_000
# Searched besides the seed topics' phrases: common words match a large share.
COMMON_QUERIES = [
    "learning",
    "model",
    "neural network",
    "quantum",
    "graph",
    "diffusion",
    "reinforcement learning",
    "robot",
    "transformer",
    "language model agents",
    "causal inference",
    "benchmark -survey",
]
# The page cache's Redis database for this bench (bench.pages uses 9).
CACHE_URL = os.environ.get("BENCH_CACHE_URL", "redis://127.0.0.1:6379/12")
GIN_INDEX = (
    "CREATE INDEX paper_search_vector_gin ON papers_paper USING gin (search_vector)"
)

# Each request picks a path at random and fills in a unique number (so no page
# or API body comes from the cache) and a random day; p50/p95 from wrk's own
# latency histogram.
SCRIPT = """
paths = {%(paths)s}
cookie = "%(cookie)s"
local counter = 0
function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
end
function init(args)
  n = 0
  math.randomseed(%(run)d + id)
end
request = function()
  n = n + 1
  local unique = "%(run)d" .. id .. string.format("%%07d", n)
  local path = string.gsub(paths[math.random(#paths)], "{unique}", unique)
  path = string.gsub(path, "{day}", tostring(math.random(%(first)d, %(last)d)))
  if cookie ~= "" then
    return wrk.format("GET", path, {["Cookie"] = cookie})
  end
  return wrk.format("GET", path)
end
function done(summary, latency, requests)
  io.write(string.format("p50 %%f\\n", latency:percentile(50)))
  io.write(string.format("p95 %%f\\n", latency:percentile(95)))
  io.write(string.format("non2xx %%d\\n", summary.errors.status))
end
"""


def parse_size(text: str) -> int:
    """100k -> 100000, 1m -> 1000000, 2500 -> 2500."""
    match = re.fullmatch(r"(\d+)([km]?)", text.strip().lower())
    if match is None:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (100k, 1m, 5000)")
    return int(match.group(1)) * {"": 1, "k": 1000, "m": 1_000_000}[match.group(2)]


def label(papers: int) -> str:
    if papers % 1_000_000 == 0:
        return f"{papers // 1_000_000}m"
    return f"{papers // 1000}k" if papers % 1000 == 0 else str(papers)


def database_url(papers: int) -> str:
    return BENCH_DATABASE.rsplit("/", 1)[0] + f"/momentum_scale_{label(papers)}"


def signature(papers: int) -> str:
    return (
        f"bench.scale v{FILL_VERSION} {papers} papers {TOPICS} topics "
        + (pages.signature(corpus_size(), TOPICS).split()[1])
    )


def corpus_size() -> int:
    return sum(1 for _ in corpus_rows())


# FILL
# ------------------------------------------------------------------------------


def prepare(url: str, papers: int, refill: bool) -> bool:
    """Fill the size's database, or reuse it; True when it was filled now."""
    wanted = signature(papers)
    name = url.rsplit("/", 1)[1]
    if not refill and pages.stored_signature(url) == wanted:
        print(f"database: reusing {name} ({wanted})", flush=True)
        pages.open_kept_database(url)
        return False
    print(f"database: filling {name}", flush=True)
    setup_django(fresh_database=True, url=url)
    pages.fill(corpus_size(), TOPICS)
    replicate(papers)

    from django.db import connection

    from topics.momentum import refresh_momentum

    with Timer() as timer:
        refresh_momentum()
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    print(f"  momentum, VACUUM ANALYZE   in {timer.seconds:6.1f} s", flush=True)
    pages.store_signature(url, wanted)
    return True


def copied_models() -> list:
    """The tables a copy of a paper takes rows in, parents first."""
    from papers.models import Authorship
    from papers.models import Paper
    from topics.models import PaperTopic

    return [
        Paper,
        Paper.categories.through,
        Authorship,
        Authorship.affiliations.through,
        PaperTopic,
    ]


def replicate(papers: int) -> None:
    """Copy the stored papers and what hangs off them until there are `papers`.

    Copy c gives every row the id `id + c * stride` (stride: the table's largest
    id plus one, so copies never collide), the papers the arXiv ids of bench.pages'
    copy c, and moves every date back c * SHIFT_DAYS. The rows copied were
    checked when first stored, so triggers and foreign-key checks are off
    (session_replication_role) and the search vectors are copied, not computed;
    the full-text index is built once at the end.
    """
    from django.db import connection
    from django.db import transaction

    from papers.models import Paper

    base = Paper.objects.count()
    models = copied_models()
    with connection.cursor() as cursor:
        strides = {}
        for model in models:
            cursor.execute(
                f"SELECT coalesce(max(id), 0) + 1 FROM {model._meta.db_table}"
            )
            strides[model] = cursor.fetchone()[0]
        cursor.execute("DROP INDEX paper_search_vector_gin")
        cursor.execute("SET session_replication_role = replica")
        copy = 1
        with Timer() as timer:
            while (done := base * copy) < papers:
                rows = min(base, papers - done)
                with transaction.atomic():
                    last = _last_base_paper(cursor, rows, strides[Paper])
                    for model in models:
                        cursor.execute(_copy_sql(model, copy, strides, last))
                copy += 1
                print(f"  copy {copy - 1:3}  {done + rows:9,} papers", flush=True)
        cursor.execute("SET session_replication_role = DEFAULT")
        print(f"  copies    {papers - base:9,}  in {timer.seconds:6.1f} s", flush=True)
        with Timer() as timer:
            cursor.execute("SET maintenance_work_mem = '1GB'")
            cursor.execute(GIN_INDEX)
            for model in models:
                table = model._meta.db_table
                cursor.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                    f"(SELECT max(id) FROM {table}))"
                )
        print(f"  full-text index            in {timer.seconds:6.1f} s", flush=True)


def _last_base_paper(cursor, rows: int, stride: int) -> int:
    """The id of the `rows`-th paper of the first fill, in id order."""
    cursor.execute(
        "SELECT id FROM papers_paper WHERE id < %s ORDER BY id OFFSET %s LIMIT 1",
        [stride, rows - 1],
    )
    return cursor.fetchone()[0]


def _copy_sql(model, copy: int, strides: dict, last: int) -> str:
    """INSERT ... SELECT of copy `copy` of the first fill's rows of `model` that
    belong to its papers up to id `last`."""
    from django.db import models as fields

    from papers.models import Authorship
    from papers.models import Paper

    days = copy * SHIFT_DAYS
    prefix = pages.synthetic_id(copy, 0).split(".")[0]
    columns, values = [], []
    for field in model._meta.concrete_fields:
        column = field.column
        target = field.related_model if field.is_relation else None
        if field.primary_key:
            value = f"{column} + {copy * strides[model]}"
        elif target in (Paper, Authorship):
            value = f"{column} + {copy * strides[target]}"
        elif model is Paper and column == "arxiv_id":
            value = f"'{prefix}.' || split_part(arxiv_id, '.', 2)"
        elif isinstance(field, fields.DateTimeField):
            value = f"{column} - interval '{days} days'"
        elif isinstance(field, fields.DateField):
            value = f"{column} - {days}"
        else:
            value = column
        columns.append(column)
        values.append(value)
    table = model._meta.db_table
    if model is Paper:
        where = f"id <= {last}"
    elif model is Authorship.affiliations.through:
        where = (
            "authorship_id IN (SELECT id FROM papers_authorship "
            f"WHERE paper_id <= {last})"
        )
    else:
        where = f"paper_id <= {last}"
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) "
        f"SELECT {', '.join(values)} FROM {table} WHERE {where}"
    )


# MEASURE
# ------------------------------------------------------------------------------


def wrk_varied(
    url: str, paths: list[str], seconds: float, cookie: str = "", days=(0, 0)
) -> dict[str, float]:
    """wrk over these paths (with {unique} and {day} filled in per request):
    requests/s, p50 and p95 latency (ms) and answers that were not 2xx/3xx."""
    script_paths = ", ".join(json.dumps(path) for path in paths)
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
        script.write(
            SCRIPT
            % {
                "paths": script_paths,
                "cookie": cookie,
                "run": random.randrange(1000, 10000),
                "first": days[0],
                "last": days[1],
            }
        )
        script.flush()
        out, rps = run_wrk(
            url,
            f"-t{pages.WRK_THREADS}",
            f"-c{pages.WRK_CONNECTIONS}",
            f"-d{max(1, round(seconds))}s",
            "-s",
            script.name,
        )
    figures = dict(re.findall(r"^(p50|p95|non2xx) ([\d.]+)$", out, re.MULTILINE))
    if len(figures) < 3:
        sys.exit(f"cannot read the script's figures in wrk's output:\n{out}")
    return {
        "rps": rps,
        "p50_ms": float(figures["p50"]) / 1000,
        "p95_ms": float(figures["p95"]) / 1000,
        "failed": float(figures["non2xx"]),
    }


def warm_and_load(url: str, seconds: float, cookie: str = "") -> dict[str, float]:
    pages.wrk(url, min(2.0, seconds), cookie)
    return pages.wrk(url, seconds, cookie)


def announced_days() -> tuple[int, int]:
    """The 5th and 95th percentile days of announcement, as ordinals."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT percentile_disc(array[0.05, 0.95]) WITHIN GROUP "
            "(ORDER BY first_announced) FROM papers_paper"
        )
        first, last = cursor.fetchone()[0]
    return first.toordinal(), last.toordinal()


def search_queries() -> list[str]:
    return pages.seed_phrases()[:30] + COMMON_QUERIES


def peak_rss_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024


def measure_web(url: str, seconds: float) -> dict[str, Any]:
    """The served pages' figures (see the module's docstring)."""
    from topics.models import Topic
    from topics.query import topic_papers

    slug, tagged = pages.largest_seed_topic()
    topic = Topic.objects.get(slug=slug)
    newest = topic_papers(topic).first()
    _, reader = pages.bench_reader(slug)
    days = announced_days()
    searches = [
        f"/search/?q={urllib.parse.quote_plus(q)}&bench={{unique}}"
        for q in search_queries()
    ]
    api_searches = [
        f"/api/v1/papers/?q={urllib.parse.quote_plus(q)}&cursor={{day}}.{{unique}}"
        for q in search_queries()
    ]
    topic_path = f"/topics/{slug}/"
    port = pages.free_port()
    base = f"http://127.0.0.1:{port}"
    result: dict[str, Any] = {"topic": slug, "topic_papers": tagged}
    with (
        tempfile.TemporaryDirectory() as tmp,
        pages.gunicorn(port, Path(tmp) / "gunicorn.log", url) as server,
    ):
        minimal = warm_and_load(base + "/bench/minimal/", seconds)
        result["topic_warm"] = warm_and_load(base + topic_path, seconds)
        result["topic_reader"] = warm_and_load(base + topic_path, seconds, reader)
        result["home_feed"] = warm_and_load(base + "/", seconds, reader)
        result["paper"] = warm_and_load(base + newest.get_absolute_url(), seconds)
        result["search"] = wrk_varied(base, searches, seconds)
        result["api_list"] = wrk_varied(
            base, ["/api/v1/papers/?cursor={day}.{unique}"], seconds, days=days
        )
        result["api_search"] = wrk_varied(base, api_searches, seconds, days=days)
        cold = pages.cold_topic_page(base, topic_path, slug, reader)
        result["topic_cold_ms"] = cold["this"]
        result["topic_warm_ttfb_ms"] = cold["warm"]
        pages.average_baseline(minimal, base + "/bench/minimal/", seconds)
        result["minimal"] = minimal
        result["web_rss_mib"] = max(
            peak_rss_mib(pid) for pid in pages.worker_pids(server.pid)
        )
    return result


def worker_jobs(slug: str) -> dict[str, float]:
    """Timed in this process: the admin's rule preview of the topic's own rule
    (as its view computes it), then what a worker runs: re-tag of the topic, the
    momentum refresh, the ingest of a 10,000-paper file; and this process's peak
    memory."""
    from papers.ingest.runs import ingest_path
    from papers.models import IngestRun
    from papers.models import Paper
    from papers.pagecache import content_changed
    from topics.models import Topic
    from topics.momentum import refresh_momentum
    from topics.preview import preview_rule
    from topics.tagging import IngestTagger
    from topics.tagging import retag_topics

    topic = Topic.objects.prefetch_related("categories").get(slug=slug)
    with Timer() as preview:
        preview_rule(topic.rule, topic=topic)
    with Timer() as retag:
        retag_topics([topic])
    with Timer() as momentum:
        refresh_momentum()
    prefix = pages.synthetic_id(INGEST_COPY, 0).split(".")[0]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "batch.jsonl"
        with path.open("w") as out:
            for number, row in zip(range(INGEST_PAPERS), corpus_rows(), strict=False):
                row["id"] = pages.synthetic_id(INGEST_COPY, number)
                out.write(json.dumps(row) + "\n")
        with Timer() as ingest:
            run = ingest_path(path, tagger=IngestTagger())
    assert run.new_count == INGEST_PAPERS, (run.status, run.new_count)
    Paper.objects.filter(arxiv_id__startswith=f"{prefix}.").delete()
    IngestRun.objects.filter(pk=run.pk).delete()
    content_changed()
    return {
        "preview_s": preview.seconds,
        "retag_s": retag.seconds,
        "momentum_s": momentum.seconds,
        "ingest_s": ingest.seconds,
        "worker_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def database_bytes() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_database_size(current_database())")
        return cursor.fetchone()[0]


# RUN
# ------------------------------------------------------------------------------


def child(*options: str) -> dict[str, Any]:
    """Run this module with these options in a new process; its JSON answer."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run(
            [sys.executable, "-m", "bench.scale", *options, "--out", out.name],
            cwd=BASE_DIR,
            env=os.environ,
            check=True,
        )
        return json.loads(Path(out.name).read_text())


def server_environment(url: str) -> None:
    """This process (and its children) set up as bench.pages' server runs."""
    pages.CACHE_URL = CACHE_URL
    os.environ.update(
        {
            key: value
            for key, value in pages.server_env(url).items()
            if key.startswith(("DJANGO_", "CACHE_"))
        }
    )
    # Throttling is by design; here the question is what a request costs.
    os.environ.update(
        MOMENTUM_API_ANON_RATE="1000000/minute",
        MOMENTUM_API_USER_RATE="1000000/minute",
        # Tasks that saves send (re-tags) wait here; nothing runs them.
        CELERY_BROKER_URL=os.environ.get("BENCH_BROKER_URL", CACHE_URL),
    )


def run_size(papers: int, seconds: float, refill: bool) -> dict[str, Any]:
    """One size, measured in this process (Django set up on its database)."""
    url = database_url(papers)
    server_environment(url)
    with Timer() as fill:
        filled = prepare(url, papers, refill)

    from django.core.cache import cache

    from papers.models import Paper

    cache.clear()
    result: dict[str, Any] = {
        "papers": Paper.objects.count(),
        "filled": filled,
        "fill_s": fill.seconds,
    }
    with Timer() as web:
        result.update(measure_web(url, seconds))
    with Timer() as jobs:
        result.update(child("--worker-jobs", result["topic"], "--size", str(papers)))
    result["web_s"], result["jobs_s"] = web.seconds, jobs.seconds
    result["database_bytes"] = database_bytes()
    return result


ROWS = [
    ("papers", lambda r: f"{r['papers']:,}"),
    ("fill (s; 0 when reused)", lambda r: f"{r['fill_s'] if r['filled'] else 0:.0f}"),
    ("minimal req/s", lambda r: f"{r['minimal']['rps']:,.0f}"),
    ("topic warm req/s (x min)", lambda r: _rate(r, "topic_warm")),
    ("topic cold TTFB ms", lambda r: f"{r['topic_cold_ms']:.0f}"),
    ("topic signed-in req/s", lambda r: _rate(r, "topic_reader")),
    ("home feed req/s", lambda r: _rate(r, "home_feed")),
    ("paper page req/s", lambda r: _rate(r, "paper")),
    ("search uncached req/s", lambda r: _rate(r, "search")),
    ("search p50 / p95 ms", lambda r: _percentiles(r, "search")),
    ("API list req/s", lambda r: _rate(r, "api_list")),
    ("API list p50 / p95 ms", lambda r: _percentiles(r, "api_list")),
    ("API search req/s", lambda r: _rate(r, "api_search")),
    ("API search p50 / p95 ms", lambda r: _percentiles(r, "api_search")),
    ("rule preview s", lambda r: f"{r['preview_s']:.1f}"),
    ("re-tag one topic s", lambda r: f"{r['retag_s']:.1f}"),
    ("momentum refresh s", lambda r: f"{r['momentum_s']:.1f}"),
    ("ingest 10k papers s", lambda r: f"{r['ingest_s']:.1f}"),
    ("database size MiB", lambda r: f"{r['database_bytes'] / 2**20:,.0f}"),
    ("web worker peak RSS MiB", lambda r: f"{r['web_rss_mib']:.0f}"),
    ("worker peak RSS MiB", lambda r: f"{r['worker_rss_mib']:.0f}"),
    ("size took (s)", lambda r: f"{r['total_s']:.0f}"),
]


def _rate(result: dict, name: str) -> str:
    rps = result[name]["rps"]
    return f"{rps:,.1f} ({rps / result['minimal']['rps']:.3f}x)"


def _percentiles(result: dict, name: str) -> str:
    return f"{result[name]['p50_ms']:.0f} / {result[name]['p95_ms']:.0f}"


def report(results: dict[str, dict[str, Any]], seconds: float) -> None:
    print(
        f"\nbench.scale: gunicorn {pages.WORKERS} sync workers, wrk "
        f"-t{pages.WRK_THREADS} -c{pages.WRK_CONNECTIONS}, {seconds:g} s per "
        f"measure; x min: the rate over the minimal view's in the same run"
    )
    print(f"{'':26}" + "".join(f"{name:>22}" for name in results))
    for title, cell in ROWS:
        print(f"{title:26}" + "".join(f"{cell(r):>22}" for r in results.values()))
    failed = {
        name: sum(r[key]["failed"] for key in ("search", "api_list", "api_search"))
        for name, r in results.items()
    }
    if any(failed.values()):
        print(f"failed answers (non-2xx/3xx) in the varied loads: {failed}")
    names = list(results)
    if len(names) > 1:
        first, last = results[names[0]], results[names[-1]]
        growth = {
            "search p95": last["search"]["p95_ms"] / first["search"]["p95_ms"],
            "API list p95": last["api_list"]["p95_ms"] / first["api_list"]["p95_ms"],
            "API list req/s": first["api_list"]["rps"] / last["api_list"]["rps"],
        }
        print(
            f"growth {names[0]} -> {names[-1]} (target <= 2x): "
            + ", ".join(f"{name} {value:.2f}x" for name, value in growth.items())
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sizes",
        type=lambda text: [parse_size(part) for part in text.split(",")],
        default=[100_000, 300_000, 1_000_000],
        help="comma-separated paper counts: 100k,300k,1m",
    )
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--save", type=Path, help="write the figures as JSON here")
    parser.add_argument(
        "--refill", action="store_true", help="fill the databases even if they match"
    )
    # Internal: one size, or a worker's jobs, in a process of its own.
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--worker-jobs", metavar="SLUG", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker_jobs:
        server_environment(database_url(args.size))
        setup_django(fresh_database=False, url=database_url(args.size))
        args.out.write_text(json.dumps(worker_jobs(args.worker_jobs)))
        return
    if args.size:
        result = run_size(args.size, args.seconds, args.refill)
        args.out.write_text(json.dumps(result))
        return

    if shutil.which("wrk") is None:
        sys.exit("bench.scale needs wrk: apt-get install -y wrk")
    results: dict[str, dict[str, Any]] = {}
    for papers in args.sizes:
        print(f"\n== {label(papers)} papers", flush=True)
        options = ["--size", str(papers), "--seconds", str(args.seconds)]
        with Timer() as timer:
            result = child(*options, *(["--refill"] if args.refill else []))
        result["total_s"] = timer.seconds
        results[label(papers)] = result
        if args.save:
            args.save.write_text(json.dumps(results, indent=2))
        report(results, args.seconds)


if __name__ == "__main__":
    main()
