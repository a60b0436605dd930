"""bench/scale: the site at 100k, 300k and 1M papers, beside the minimal view.

    PYTHONPATH=. .venv/bin/python -m bench.scale [--sizes 100k,300k,1m]
        [--seconds 10] [--save FILE] [--refill] [--only search,api_list]
        [--fill-only]

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
  - API list, uncached: pages at random cursors, with and without a search;
  - similar papers (when built: `manage.py similar_papers`), p50 and p95: the
    API's (a visitor's) and the paper page with its similar section (the
    signed-in reader's), warm (one paper, from the cache) and uncached (a paper
    not asked before each request), beside the minimal view's latency at the
    same load (target: <= 50 ms).
Then, in a separate process: the admin's rule preview of every seed topic's own
rule, as its view computes it, in CPU-seconds of this process and its
PostgreSQL backend (median and the largest; target for a typical rule: <= 1 at
100k, <= 3 at 1M), and the wall time of the largest seed topic's; and what a
worker runs: re-tag of that topic, the momentum refresh (nightly and after
every run), and the ingest of a 10,000-paper snapshot file (new ids; deleted
afterwards, so the fill is kept).
Last, the database's size and the peak resident memory (VmHWM / ru_maxrss) of a
gunicorn worker and of that worker process.

--only NAMES measures only those of the served pages (topic_warm, topic_reader,
home_feed, paper, search, api_list, api_search, topic_cold, similar), still
between the minimal view's two runs, and none of the worker's jobs: a quick
loop for work on one page.

--fill-only fills (or reuses) each size's database and measures nothing, so a
long fill can run ahead of the measures.

Prints one column per size; --save FILE writes the figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import bench.pages_server as pages_server
from bench.common import BASE_DIR
from bench.common import BENCH_DATABASE
from bench.common import Timer
from bench.common import setup_django
from bench.scale_fill import prepare
from bench.scale_measure import WEB_MEASURES
from bench.scale_measure import database_bytes
from bench.scale_measure import measure_web
from bench.scale_measure import worker_jobs

# The page cache's Redis database for this bench (bench.pages uses 9).
CACHE_URL = os.environ.get("BENCH_CACHE_URL", "redis://127.0.0.1:6379/12")


def parse_size(text: str) -> int:
    """100k -> 100000, 1m -> 1000000, 2500 -> 2500."""
    match = re.fullmatch(r"(\d+)([km]?)", text.strip().lower())
    if match is None:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (100k, 1m, 5000)")
    return int(match.group(1)) * {"": 1, "k": 1000, "m": 1_000_000}[match.group(2)]


def only_measures(text: str) -> frozenset[str]:
    """search,api_list -> those names, each one of WEB_MEASURES."""
    names = frozenset(part.strip() for part in text.split(",") if part.strip())
    unknown = names - set(WEB_MEASURES)
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"not a measure: {', '.join(sorted(unknown)) or text!r} "
            f"(one of {', '.join(WEB_MEASURES)})"
        )
    return names


def label(papers: int) -> str:
    if papers % 1_000_000 == 0:
        return f"{papers // 1_000_000}m"
    return f"{papers // 1000}k" if papers % 1000 == 0 else str(papers)


def database_url(papers: int) -> str:
    return BENCH_DATABASE.rsplit("/", 1)[0] + f"/momentum_scale_{label(papers)}"


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
    pages_server.CACHE_URL = CACHE_URL
    os.environ.update(
        {
            key: value
            for key, value in pages_server.server_env(url).items()
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


def fill_size(papers: int, refill: bool) -> dict[str, Any]:
    """Fill one size's database (or reuse it), in this process."""
    url = database_url(papers)
    server_environment(url)
    with Timer() as fill:
        filled = prepare(url, papers, refill)
    if filled:
        print(f"filled in {fill.seconds:.0f} s", flush=True)
    return {"filled": filled, "fill_s": fill.seconds}


def run_size(
    papers: int, seconds: float, refill: bool, only: frozenset[str] | None = None
) -> dict[str, Any]:
    """One size, measured in this process (Django set up on its database); with
    `only`, those web measures and no worker jobs."""
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
        result.update(measure_web(url, seconds, only))
    with Timer() as jobs:
        if only is None:
            result.update(
                child("--worker-jobs", result["topic"], "--size", str(papers))
            )
    result["web_s"], result["jobs_s"] = web.seconds, jobs.seconds
    result["database_bytes"] = database_bytes()
    return result


# The similar papers' loads (bench.scale_measure.similar_loads), by row title.
SIMILAR_LOADS = {
    "similar_api_warm": "similar API warm",
    "similar_api_uncached": "similar API uncached",
    "similar_page_warm": "similar page warm",
    "similar_page_uncached": "similar page uncached",
}
SIMILAR_TARGET_MS = 50

# (title, the figure it reads, its cell): a row is printed when every size has it.
ROWS = [
    ("papers", "papers", lambda r: f"{r['papers']:,}"),
    (
        "fill (s; 0 when reused)",
        "fill_s",
        lambda r: f"{r['fill_s'] if r['filled'] else 0:.0f}",
    ),
    ("minimal req/s", "minimal", lambda r: f"{r['minimal']['rps']:,.0f}"),
    ("topic warm req/s (x min)", "topic_warm", lambda r: _rate(r, "topic_warm")),
    (
        "topic TTFB ms, edited / warm (signed in)",
        "topic_cold_ms",
        lambda r: (
            f"{r['topic_cold_ms']:.1f} / {r['topic_warm_ttfb_ms']:.1f} "
            f"({r['topic_cold_ms'] / r['topic_warm_ttfb_ms']:.1f}x)"
        ),
    ),
    ("topic signed-in req/s", "topic_reader", lambda r: _rate(r, "topic_reader")),
    ("home feed req/s", "home_feed", lambda r: _rate(r, "home_feed")),
    ("paper page req/s", "paper", lambda r: _rate(r, "paper")),
    ("search uncached req/s", "search", lambda r: _rate(r, "search")),
    ("search p50 / p95 ms", "search", lambda r: _percentiles(r, "search")),
    ("API list req/s", "api_list", lambda r: _rate(r, "api_list")),
    ("API list p50 / p95 ms", "api_list", lambda r: _percentiles(r, "api_list")),
    ("API search req/s", "api_search", lambda r: _rate(r, "api_search")),
    (
        "API search p50 / p95 ms",
        "api_search",
        lambda r: _percentiles(r, "api_search"),
    ),
    *(
        row
        for name, title in SIMILAR_LOADS.items()
        for row in (
            (f"{title} req/s", name, lambda r, name=name: _rate(r, name)),
            (f"{title} p50/p95 ms", name, lambda r, name=name: _percentiles(r, name)),
            (
                "  at 1 connection",
                f"{name}_one",
                lambda r, name=name: _percentiles(r, f"{name}_one"),
            ),
        )
    ),
    (
        "minimal p50/p95 ms",
        "similar_minimal",
        lambda r: _percentiles(r, "similar_minimal"),
    ),
    (
        "  at 1 connection",
        "similar_minimal_one",
        lambda r: _percentiles(r, "similar_minimal_one"),
    ),
    (
        "page parts ms (1 process)",
        "similar_parts",
        lambda r: " / ".join(f"{ms:.1f}" for ms in r["similar_parts"].values()),
    ),
    (
        "rule preview s (largest seed topic)",
        "preview_s",
        lambda r: f"{r['preview_s']:.1f}",
    ),
    (
        "rule preview CPU s, seed rules median / max",
        "preview_cpu_s",
        lambda r: f"{r['preview_cpu_s']:.2f} / {r['preview_cpu_max_s']:.2f}",
    ),
    ("re-tag one topic s", "retag_s", lambda r: f"{r['retag_s']:.1f}"),
    ("momentum refresh s", "momentum_s", lambda r: f"{r['momentum_s']:.1f}"),
    ("ingest 10k papers s", "ingest_s", lambda r: f"{r['ingest_s']:.1f}"),
    (
        "database size MiB",
        "database_bytes",
        lambda r: f"{r['database_bytes'] / 2**20:,.0f}",
    ),
    ("web worker peak RSS MiB", "web_rss_mib", lambda r: f"{r['web_rss_mib']:.0f}"),
    (
        "worker peak RSS MiB",
        "worker_rss_mib",
        lambda r: f"{r['worker_rss_mib']:.0f}",
    ),
    ("size took (s)", "total_s", lambda r: f"{r['total_s']:.0f}"),
]


def _rate(result: dict, name: str) -> str:
    rps = result[name]["rps"]
    return f"{rps:,.1f} ({rps / result['minimal']['rps']:.3f}x)"


def _percentiles(result: dict, name: str) -> str:
    return f"{result[name]['p50_ms']:.0f} / {result[name]['p95_ms']:.0f}"


def report(results: dict[str, dict[str, Any]], seconds: float) -> None:
    print(
        f"\nbench.scale: gunicorn {pages_server.WORKERS} sync workers, wrk "
        f"-t{pages_server.WRK_THREADS} -c{pages_server.WRK_CONNECTIONS}, "
        f"{seconds:g} s per "
        f"measure; x min: the rate over the minimal view's in the same run"
    )
    print(f"{'':26}" + "".join(f"{name:>22}" for name in results))
    for title, figure, cell in ROWS:
        if all(figure in r for r in results.values()):
            print(f"{title:26}" + "".join(f"{cell(r):>22}" for r in results.values()))
    failed = {
        name: sum(
            r[key]["failed"] for key in ("search", "api_list", "api_search") if key in r
        )
        for name, r in results.items()
    }
    if any(failed.values()):
        print(f"failed answers (non-2xx/3xx) in the varied loads: {failed}")
    for name, r in results.items():
        if "similar_minimal" not in r:
            continue
        for suffix, at in (("_one", "1 connection"), ("", "the bench's load")):
            verdicts = [
                f"{title.removeprefix('similar ')} "
                + ("ok" if r[load + suffix]["p95_ms"] <= SIMILAR_TARGET_MS else "MISS")
                for load, title in SIMILAR_LOADS.items()
            ]
            print(
                f"similar papers at {name}, p95 <= {SIMILAR_TARGET_MS} ms at {at}: "
                + ", ".join(verdicts)
            )
        print(
            "page parts: the median ms of an uncached paper page's paper / similar "
            "section / related papers, in one process"
        )
    names = list(results)
    if len(names) > 1 and all(
        "search" in r and "api_list" in r for r in results.values()
    ):
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
    parser.add_argument(
        "--fill-only",
        action="store_true",
        help="fill (or reuse) the databases and measure nothing",
    )
    parser.add_argument(
        "--only",
        type=only_measures,
        help="measure only these served pages (comma-separated: "
        + ", ".join(WEB_MEASURES)
        + "), no worker jobs",
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
    if args.size and args.fill_only:
        args.out.write_text(json.dumps(fill_size(args.size, args.refill)))
        return
    if args.size:
        result = run_size(args.size, args.seconds, args.refill, args.only)
        args.out.write_text(json.dumps(result))
        return

    refill = ["--refill"] if args.refill else []
    if args.fill_only:
        for papers in args.sizes:
            print(f"\n== {label(papers)} papers", flush=True)
            child("--size", str(papers), "--fill-only", *refill)
        return
    if shutil.which("wrk") is None:
        sys.exit("bench.scale needs wrk: apt-get install -y wrk")
    results: dict[str, dict[str, Any]] = {}
    for papers in args.sizes:
        print(f"\n== {label(papers)} papers", flush=True)
        options = ["--size", str(papers), "--seconds", str(args.seconds)]
        if args.only:
            options += ["--only", ",".join(sorted(args.only))]
        with Timer() as timer:
            result = child(*options, *refill)
        result["total_s"] = timer.seconds
        results[label(papers)] = result
        if args.save:
            args.save.write_text(json.dumps(results, indent=2))
        report(results, args.seconds)


if __name__ == "__main__":
    main()
