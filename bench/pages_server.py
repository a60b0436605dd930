"""bench/pages' server: the filled database served by gunicorn (production
settings over plain HTTP, cache in Redis), loaded by wrk (see bench.pages)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from bench.common import BASE_DIR
from bench.common import run_wrk
from bench.pages_fill import database_url
from bench.pages_fill import prepare_database

# Redis database 9: the bench's own, emptied before each run.
CACHE_URL = os.environ.get("BENCH_CACHE_URL", "redis://127.0.0.1:6379/9")
WORKERS = 2
WRK_THREADS = 2
WRK_CONNECTIONS = 8


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


def average_baseline(result: dict[str, float], url: str, seconds: float) -> None:
    """Measure the baseline again and keep the mean of its first and last runs:
    the machine's other load drifts during a run."""
    first, last = result["rps"], wrk(url, seconds)["rps"]
    result["rps"] = (first + last) / 2
    result["spread"] = abs(first - last) / 2
