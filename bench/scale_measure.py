"""bench/scale's measures: the served pages under wrk, and what a worker runs
(see bench.scale)."""

from __future__ import annotations

import json
import os
import random
import re
import resource
import statistics
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import bench.pages as pages
import bench.pages_fill as pages_fill
import bench.pages_server as pages_server
from bench.common import Timer
from bench.common import corpus_rows
from bench.common import run_wrk

# The ingest batch takes ids of a copy number no fill reaches (1M is 40 copies).
INGEST_COPY = 90
INGEST_PAPERS = 10_000
# Papers the uncached similar loads walk, each asked once: more than a run asks.
SIMILAR_SAMPLE = 20_000
# Papers whose page is timed part by part in process (similar_parts).
SIMILAR_PARTS = 200
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

# Each request picks a path at random and fills in a unique number (so no page
# or API body comes from the cache), a random day and the next paper of its
# thread's share of `papers` (each thread walks its own part of the list, so no
# paper is asked twice while the list lasts); p50/p95 from wrk's own latency
# histogram.
SCRIPT = """
paths = {%(paths)s}
papers = {%(papers)s}
threads = %(threads)d
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
  if #papers > 0 then
    local share = math.floor(#papers / threads)
    path = string.gsub(path, "{paper}", papers[(id * share + n - 1) %% #papers + 1])
  end
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


def wrk_varied(
    url: str,
    paths: list[str],
    seconds: float,
    cookie: str = "",
    days=(0, 0),
    papers: Sequence[str] = (),
    connections: int = pages_server.WRK_CONNECTIONS,
) -> dict[str, float]:
    """wrk over these paths (with {unique}, {day} and {paper} filled in per
    request), at this many connections: requests/s, p50 and p95 latency (ms)
    and answers that were not 2xx/3xx."""
    threads = min(pages_server.WRK_THREADS, connections)
    script_paths = ", ".join(json.dumps(path) for path in paths)
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
        script.write(
            SCRIPT
            % {
                "paths": script_paths,
                "papers": ", ".join(json.dumps(paper) for paper in papers),
                "threads": threads,
                "cookie": cookie,
                "run": random.randrange(1000, 10000),
                "first": days[0],
                "last": days[1],
            }
        )
        script.flush()
        out, rps = run_wrk(
            url,
            f"-t{threads}",
            f"-c{connections}",
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
    pages_server.wrk(url, min(2.0, seconds), cookie)
    return pages_server.wrk(url, seconds, cookie)


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
    return pages_fill.seed_phrases()[:30] + COMMON_QUERIES


def peak_rss_mib(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) / 1024


def similar_built() -> bool:
    """Whether every paper's similar papers are built for the corpus as it is
    (`manage.py similar_papers`; at 100k it takes a long while, so the fill
    leaves it to be run on its own)."""
    from papers.models import SimilarityIndex
    from topics.tagging import corpus_fingerprint

    index = SimilarityIndex.objects.filter(pk=1).first()
    return index is not None and index.fingerprint == corpus_fingerprint()


def similar_sample(count: int) -> list[str]:
    """Up to `count` arXiv ids of papers that have similar papers, in an order
    fixed by a seed."""
    from papers.models import SimilarPaper

    ids = list(
        SimilarPaper.objects.filter(rank=1)
        .order_by("paper_id")
        .values_list("paper__arxiv_id", flat=True)
    )
    return random.Random(20).sample(ids, min(count, len(ids)))


def similar_loads(
    base: str, arxiv_id: str, reader: str, seconds: float
) -> dict[str, Any]:
    """The API's similar papers (a visitor's) and the paper page with its similar
    section (the signed-in reader's): warm, the same paper every request, served
    from the cache; uncached, a paper not asked before each request (the page
    also at a unique address). Each at the bench's load and at one connection
    (`<name>_one`: a request's own latency, nothing queued before it); beside
    them the minimal view's latency at both. Then, in this process, where an
    uncached page's time goes (similar_parts). Nothing when the similar papers
    are not built."""
    if not similar_built():
        print("similar: not built for this corpus (manage.py similar_papers); skipped")
        return {}
    papers = similar_sample(SIMILAR_SAMPLE)
    # The loads walk the sample from its start (and the middle); the in-process
    # timing takes papers from its end.
    parts = similar_parts(papers[-SIMILAR_PARTS:])
    loads = {
        "similar_api": ("/api/v1/papers/{paper}/similar/", ""),
        "similar_page": ("/papers/{paper}/?bench={unique}", reader),
    }
    result: dict[str, Any] = {"similar_parts": parts}
    # One connection first: nothing a saturating load left queued delays it.
    for connections, suffix in ((1, "_one"), (pages_server.WRK_CONNECTIONS, "")):
        result[f"similar_minimal{suffix}"] = wrk_varied(
            base, ["/bench/minimal/"], seconds, connections=connections
        )
        for name, (path, cookie) in loads.items():
            warm = path.replace("{paper}", arxiv_id).split("?")[0]
            pages_server.wrk(base + warm, min(2.0, seconds), cookie)
            result[f"{name}_warm{suffix}"] = wrk_varied(
                base, [warm], seconds, cookie, connections=connections
            )
            # Each run its own part of the sample: no paper is asked twice.
            share = papers[: len(papers) // 2] if suffix else papers[len(papers) // 2 :]
            result[f"{name}_uncached{suffix}"] = wrk_varied(
                base, [path], seconds, cookie, papers=share, connections=connections
            )
    return result


def similar_parts(papers: list[str]) -> dict[str, float]:
    """The median ms, in this process and with nothing cached, of what the paper
    page computes for these papers: the paper itself, its similar section
    (the ids and their rows) and its related papers."""
    from django.core.cache import cache

    from papers.query import get_paper
    from papers.query import related_papers
    from papers.query import similar_ids
    from papers.rows import paper_rows

    cache.clear()
    times: dict[str, list[float]] = {"paper": [], "similar": [], "related": []}
    for arxiv_id in papers:
        with Timer() as paper_timer:
            paper = get_paper(arxiv_id)
        with Timer() as similar_timer:
            similar = similar_ids(paper)
            paper_rows(similar)
        with Timer() as related_timer:
            related_papers(
                paper,
                [tag.topic_id for tag in paper.active_tags],
                besides=similar,
            )
        times["paper"].append(paper_timer.seconds * 1000)
        times["similar"].append(similar_timer.seconds * 1000)
        times["related"].append(related_timer.seconds * 1000)
    return {name: statistics.median(values) for name, values in times.items()}


# The web measures, by name (bench.scale --only picks some).
WEB_MEASURES = (
    "topic_warm",
    "topic_reader",
    "home_feed",
    "paper",
    "search",
    "api_list",
    "api_search",
    "topic_cold",
    "similar",
)


def measure_web(
    url: str, seconds: float, only: frozenset[str] | None = None
) -> dict[str, Any]:
    """The served pages' figures (see the module's docstring); with `only`,
    those measures alone, between the minimal view's two runs."""
    from topics.models import Topic
    from topics.query import topic_papers

    slug, tagged = pages_fill.largest_seed_topic()
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
    port = pages_server.free_port()
    base = f"http://127.0.0.1:{port}"
    result: dict[str, Any] = {"topic": slug, "topic_papers": tagged}

    def topic_cold() -> dict[str, float]:
        cold = pages.cold_topic_page(base, topic_path, slug, reader)
        return {"topic_cold_ms": cold["edited"], "topic_warm_ttfb_ms": cold["warm"]}

    # Each gives its figures under the names the report reads.
    measures: dict[str, Callable[[], dict[str, Any]]] = {
        "topic_warm": lambda: {"topic_warm": warm_and_load(base + topic_path, seconds)},
        "topic_reader": lambda: {
            "topic_reader": warm_and_load(base + topic_path, seconds, reader)
        },
        "home_feed": lambda: {"home_feed": warm_and_load(base + "/", seconds, reader)},
        "paper": lambda: {
            "paper": warm_and_load(base + newest.get_absolute_url(), seconds)
        },
        "search": lambda: {"search": wrk_varied(base, searches, seconds)},
        "api_list": lambda: {
            "api_list": wrk_varied(
                base, ["/api/v1/papers/?cursor={day}.{unique}"], seconds, days=days
            )
        },
        "api_search": lambda: {
            "api_search": wrk_varied(base, api_searches, seconds, days=days)
        },
        "topic_cold": topic_cold,
        "similar": lambda: similar_loads(base, newest.arxiv_id, reader, seconds),
    }
    with (
        tempfile.TemporaryDirectory() as tmp,
        pages_server.gunicorn(port, Path(tmp) / "gunicorn.log", url) as server,
    ):
        minimal = warm_and_load(base + "/bench/minimal/", seconds)
        for name in WEB_MEASURES:
            if only is None or name in only:
                result.update(measures[name]())
        pages_server.average_baseline(minimal, base + "/bench/minimal/", seconds)
        result["minimal"] = minimal
        result["web_rss_mib"] = max(
            peak_rss_mib(pid) for pid in pages_server.worker_pids(server.pid)
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
    from papers.versions import content_changed
    from topics.models import Topic
    from topics.momentum import refresh_momentum
    from topics.preview import preview_rule
    from topics.tagging import IngestTagger
    from topics.tagging import retag_topics

    seeds = [entry["slug"] for entry in json.loads(pages_fill.SEED_TOPICS.read_text())]
    previews = [
        preview_cpu_seconds(seed)
        for seed in Topic.objects.filter(slug__in=seeds).prefetch_related("categories")
    ]
    topic = Topic.objects.prefetch_related("categories").get(slug=slug)
    with Timer() as preview:
        preview_rule(topic.rule, topic=topic)
    with Timer() as retag:
        retag_topics([topic])
    with Timer() as momentum:
        refresh_momentum()
    prefix = pages_fill.synthetic_id(INGEST_COPY, 0).split(".")[0]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "batch.jsonl"
        with path.open("w") as out:
            for number, row in zip(range(INGEST_PAPERS), corpus_rows(), strict=False):
                row["id"] = pages_fill.synthetic_id(INGEST_COPY, number)
                out.write(json.dumps(row) + "\n")
        with Timer() as ingest:
            run = ingest_path(path, tagger=IngestTagger())
    assert run.new_count == INGEST_PAPERS, (run.status, run.new_count)
    Paper.objects.filter(arxiv_id__startswith=f"{prefix}.").delete()
    IngestRun.objects.filter(pk=run.pk).delete()
    content_changed()
    return {
        "preview_s": preview.seconds,
        "preview_cpu_s": statistics.median(previews),
        "preview_cpu_max_s": max(previews),
        "retag_s": retag.seconds,
        "momentum_s": momentum.seconds,
        "ingest_s": ingest.seconds,
        "worker_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def preview_cpu_seconds(topic) -> float:
    """The CPU a rule preview of this topic's rule costs: this process's and
    its PostgreSQL backend's (on this machine, read from /proc)."""
    from topics.preview import preview_rule

    cpu, database = time.process_time(), backend_cpu_seconds()
    preview_rule(topic.rule, topic=topic)
    return time.process_time() - cpu + backend_cpu_seconds() - database


def backend_cpu_seconds() -> float:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    # /proc/<pid>/stat: utime and stime are the 14th and 15th fields.
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def database_bytes() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_database_size(current_database())")
        return cursor.fetchone()[0]
