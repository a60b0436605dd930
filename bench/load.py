"""bench/load: a load check, readers and visitors mixed, with the cache up and down.

    PYTHONPATH=. .venv/bin/python -m bench.load [--papers 25000] [--seconds 60]
        [--connections 64]

Serves bench.pages' database (filled on first use, kept) with gunicorn (2 sync
workers) and a cache of its own, a redis-server on a free port, and loads it
with wrk for --seconds at --connections connections: each request is one of the
home page, a topic page, a paper page, a search and the API's paper list, half
of them as a signed-in reader (bench.pages' reader), half as visitors. Then the
same load again, stopping the cache's redis-server a third of the way in.

Prints each phase's requests per second, its answers by status and its errors
(5xx answers and socket errors), beside the minimal view's rate in the same run;
the API's throttles are raised for it, as only failures are in question. The check is
that both phases have 0 errors. Prerequisites: PostgreSQL on 127.0.0.1, wrk and
redis-server (`apt-get install -y wrk redis-server`).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import bench.pages as pages
import bench.pages_fill as pages_fill
import bench.pages_server as pages_server
from bench.common import BASE_DIR
from bench.common import run_wrk

# Each request picks one of these, signed in or not, at random (wrk's Lua).
SCRIPT = """
paths = {%(paths)s}
cookie = "%(cookie)s"
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args)
  statuses = {}
  math.randomseed(os.time() + math.random(1000))
end
request = function()
  local path = paths[math.random(#paths)]
  if math.random(2) == 1 then
    return wrk.format("GET", path, {["Cookie"] = cookie})
  end
  return wrk.format("GET", path)
end
function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end
function done(summary, latency, requests)
  local total = {}
  for _, thread in ipairs(threads) do
    for status, count in pairs(thread:get("statuses")) do
      total[status] = (total[status] or 0) + count
    end
  end
  for status, count in pairs(total) do
    io.write(string.format("status %%d %%d\\n", status, count))
  end
end
"""


def wrk_mixed(url: str, script: Path, seconds: float, connections: int) -> dict:
    out, rps = run_wrk(
        url, "-t2", f"-c{connections}", f"-d{round(seconds)}s", "-s", str(script)
    )
    statuses = {int(code): int(n) for code, n in re.findall(r"status (\d+) (\d+)", out)}
    sockets = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out
    )
    return {
        "rps": rps,
        "statuses": dict(sorted(statuses.items())),
        # Server errors and dropped connections; throttling (429) is by design.
        "errors": sum(n for code, n in statuses.items() if code >= 500)
        + (sum(map(int, sockets.groups())) if sockets else 0),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--papers", type=int, default=25_000)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--connections", type=int, default=64)
    args = parser.parse_args()
    for tool in ("wrk", "redis-server"):
        if shutil.which(tool) is None:
            sys.exit(f"bench.load needs {tool}: apt-get install -y {tool}")

    url = pages_server.prepare_server_database(args.papers, args.topics, refill=False)
    from topics.models import Topic
    from topics.query import topic_papers

    slug, _ = pages_fill.largest_seed_topic()
    newest = topic_papers(Topic.objects.get(slug=slug)).first()
    paths = [
        "/",
        f"/topics/{slug}/",
        newest.get_absolute_url(),
        pages.SEARCH,
        f"/api/v1/papers/?topic={slug}",
    ]
    _, cookie = pages.bench_reader(slug)
    # Throttling is by design; here the question is whether anything fails.
    os.environ.update(
        MOMENTUM_API_ANON_RATE="1000000/minute", MOMENTUM_API_USER_RATE="1000000/minute"
    )
    port = pages_server.free_port()
    base = f"http://127.0.0.1:{port}"
    cache_port = pages_server.free_port()
    pages_server.CACHE_URL = f"redis://127.0.0.1:{cache_port}/0"
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "mixed.lua"
        script.write_text(
            SCRIPT % {"paths": ", ".join(f'"{p}"' for p in paths), "cookie": cookie}
        )
        cache = start_redis(cache_port)
        try:
            with pages_server.gunicorn(port, Path(tmp) / "gunicorn.log", url):
                minimal = pages_server.wrk(
                    base + "/bench/minimal/", min(args.seconds, 10)
                )
                results["steady"] = wrk_mixed(
                    base, script, args.seconds, args.connections
                )
                # The cache's Redis stops a third of the way into the run.
                stopper = threading.Timer(args.seconds / 3, cache.terminate)
                stopper.start()
                results["cache down"] = wrk_mixed(
                    base, script, args.seconds, args.connections
                )
                stopper.join()
        finally:
            cache.terminate()
            cache.wait(timeout=10)
    report(args, minimal, results)


def start_redis(port: int) -> subprocess.Popen:
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", ""],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=BASE_DIR,
    )
    time.sleep(0.5)
    return server


def report(args, minimal: dict, results: dict) -> None:
    print(
        f"\nbench.load: {args.papers:,} papers, wrk -c{args.connections} for "
        f"{args.seconds:g} s a phase, readers and visitors mixed; minimal view "
        f"{minimal['rps']:,.0f} req/s"
    )
    for phase, result in results.items():
        ratio = result["rps"] / minimal["rps"] if minimal["rps"] else float("nan")
        print(
            f"  {phase:<11} {result['rps']:>8,.1f} req/s ({ratio:.3f}x minimal), "
            f"answers {result['statuses']}, {result['errors']} errors"
        )
    failed = sum(result["errors"] for result in results.values())
    print("  check: " + ("0 errors" if not failed else f"FAILED, {failed} errors"))


if __name__ == "__main__":
    main()
