"""Shared set-up for benchmarks: a scratch PostgreSQL database, Django, the corpus."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
DEMO_CORPUS = BASE_DIR / "data" / "demo" / "arxiv-2026-06-07.snapshot.jsonl.gz"
BENCH_DATABASE = os.environ.get(
    "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/momentum_bench"
)


def setup_django(fresh_database: bool = True, url: str = BENCH_DATABASE) -> None:
    """Point Django at a scratch PostgreSQL database (`url`), recreated and migrated."""
    os.environ["DATABASE_URL"] = url
    # DEBUG off: with it on, Django keeps every query in memory.
    os.environ["DJANGO_DEBUG"] = "false"
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-" + "x" * 50)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
    os.environ.setdefault("DJANGO_LOG_LEVEL", "WARNING")
    if fresh_database:
        name = url.rsplit("/", 1)[1]
        server = url.rsplit("/", 1)[0] + "/postgres"
        for sql in (f"DROP DATABASE IF EXISTS {name}", f"CREATE DATABASE {name}"):
            subprocess.run(["psql", server, "-qc", sql], check=True)
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "-v0"],
            cwd=BASE_DIR,
            check=True,
            env=os.environ,
        )
    import django

    django.setup()


def reset_papers() -> None:
    """Empty the paper tables (and what hangs off them) between timed passes."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE papers_paper, papers_author, papers_affiliation CASCADE"
        )


def corpus_rows() -> Iterator[dict]:
    with gzip.open(DEMO_CORPUS, "rt") as lines:
        for line in lines:
            yield json.loads(line)


class Timer:
    def __enter__(self) -> Timer:
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start


def run_wrk(url: str, *arguments: str) -> tuple[str, float]:
    """wrk's output for `url` with these arguments (threads, connections,
    duration, script...), and its requests per second; exits if unreadable."""
    done = subprocess.run(
        ["wrk", "--timeout", "30s", *arguments, url],
        check=True,
        capture_output=True,
        text=True,
    )
    rps = re.search(r"Requests/sec:\s+([\d.]+)", done.stdout)
    if rps is None:
        sys.exit(f"cannot read wrk's output:\n{done.stdout}\n{done.stderr}")
    return done.stdout, float(rps.group(1))
