"""/healthz for load balancers and operators: each dependency's state.

503 only when this node cannot serve, which is when the database does not
answer, or (production) collectstatic's manifest lacks one of the site's own
files, which every page naming it fails on with a 500. The cache and the
broker are reported but do not fail the check: pages render uncached without
the cache (config.cache), and work waits in the database for the broker
(their sweeps send it once it is back).

Each queue's workers are reported by their last heartbeat (beat sends one
every MOMENTUM_HEARTBEAT_SECONDS, config/celery_app.py): a queue none has
answered for STALE_HEARTBEATS of them has its workers dead, or stuck on a
long task, or beat is dead; but the ingest queue's is "running" while a
harvest's lease is live (it makes progress). With tasks run in-process there
are none.

The cache and the broker are asked beside the database, and what has not
answered within TIMEOUT is reported down: one Redis that hangs (frozen,
partitioned) would otherwise hold the probe for both of their socket timeouts,
past a load balancer's, and take every node sharing it out at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import ThreadPoolExecutor
from functools import cache as once

from django.conf import settings
from django.contrib.staticfiles.finders import FileSystemFinder
from django.contrib.staticfiles.storage import ManifestFilesMixin
from django.contrib.staticfiles.storage import staticfiles_storage
from django.core.cache import cache
from django.db import connection
from django.http import HttpRequest
from django.http import HttpResponse
from django.http import JsonResponse

from config.celery_app import HEARTBEAT_KEY
from config.celery_app import app
from papers.ingest.harvest import harvesting_now

TIMEOUT = 1.0
STALE_HEARTBEATS = 3
# Threads kept for the checks of Redis; a check past its timeout finishes
# there (its own socket timeouts end it) while the probe has answered.
_checks = ThreadPoolExecutor(max_workers=4, thread_name_prefix="healthz")


def probes(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    """Middleware: /healthz is answered before anything reads the request's
    host. A load balancer probes each node by its own address (Host:
    10.0.0.5:8000), which DJANGO_ALLOWED_HOSTS does not name: it was refused
    with a 400, and every healthy node taken out."""

    def middleware(request: HttpRequest) -> HttpResponse:
        if request.path == "/healthz":
            return healthz(request)
        return get_response(request)

    return middleware


def healthz(request: HttpRequest) -> JsonResponse:
    deadline = time.monotonic() + TIMEOUT
    cache_state = _checks.submit(_state, _cache)
    broker_state = _checks.submit(_state, _broker)
    heartbeats = _checks.submit(_heartbeats)
    # In this thread: its kept connection, not one opened per probe.
    database = _state(_database)
    checks = {
        "database": database,
        "cache": _answer(cache_state, deadline),
        "broker": _answer(broker_state, deadline),
    }
    if isinstance(storage := staticfiles_storage, ManifestFilesMixin):
        checks["static"] = _state(lambda: _collected(storage))
    workers = _workers(
        heartbeats,
        deadline,
        cache_ok=checks["cache"] == "ok",
        database_ok=database == "ok",
    )
    serving = checks["database"] == "ok" and checks.get("static", "ok") == "ok"
    degraded = any(
        state != "ok" and not state.startswith("running:")
        for state in [*checks.values(), *workers.values()]
    )
    status = "error" if not serving else "degraded" if degraded else "ok"
    body = {"status": status, **checks} | ({"workers": workers} if workers else {})
    return JsonResponse(body, status=200 if serving else 503)


def _state(check: Callable[[], None]) -> str:
    try:
        check()
    except Exception as exc:  # any failure is that dependency's state
        return f"down: {type(exc).__name__}: {exc}"[:300]
    return "ok"


def _answer(state: Future[str], deadline: float) -> str:
    try:
        return state.result(timeout=max(deadline - time.monotonic(), 0))
    except TimeoutError:
        return f"down: no answer within {TIMEOUT:g} s"


def _heartbeats() -> dict[str, float]:
    """When a worker of each queue last answered a heartbeat (Unix time)."""
    keys = {queue: HEARTBEAT_KEY.format(queue=queue) for queue in _queues()}
    seen = cache.get_many(list(keys.values()))
    return {queue: seen[key] for queue, key in keys.items() if key in seen}


def _workers(
    heartbeats: Future[dict[str, float]],
    deadline: float,
    *,
    cache_ok: bool,
    database_ok: bool,
) -> dict[str, str]:
    """Each queue's workers: ok, or why not."""
    queues = _queues()
    if not cache_ok:
        return dict.fromkeys(
            queues, "unknown: the cache, which keeps heartbeats, is down"
        )
    try:
        seen = heartbeats.result(timeout=max(deadline - time.monotonic(), 0))
    except TimeoutError:
        return dict.fromkeys(queues, f"unknown: no answer within {TIMEOUT:g} s")
    period = settings.HEARTBEAT["schedule"]
    states = {}
    for queue in queues:
        ago = time.time() - seen[queue] if queue in seen else None
        if ago is None:
            states[queue] = (
                f"unknown: no heartbeat yet (beat sends one every {period} s)"
            )
        elif ago > STALE_HEARTBEATS * period:
            harvest = _harvesting() if queue == "ingest" and database_ok else None
            states[queue] = harvest or (
                f"down: no worker has answered for {ago / 60:.0f} min (dead, or "
                "busy with a long task; or beat is down)"
            )
        else:
            states[queue] = "ok"
    return states


def _harvesting() -> str | None:
    """The ingest queue's worker answers no heartbeat while it harvests, for
    hours at most; a harvest's lease, which lapses when it makes no progress
    (MOMENTUM_INGEST_CLAIM_SECONDS), says it is at work, not dead."""
    source = harvesting_now()
    if source is None:
        return None
    minutes = settings.MOMENTUM_INGEST_CLAIM_SECONDS // 60
    return (
        f"running: harvesting {source.name} (it began or stored a page "
        f"within {minutes} min)"
    )


def _queues() -> list[str]:
    # Tasks run in-process: no workers to report.
    return [] if settings.CELERY_TASK_ALWAYS_EAGER else settings.HEARTBEAT_QUEUES


def _database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def _collected(storage: ManifestFilesMixin) -> None:
    missing = []
    for name in _site_files():
        try:
            storage.stored_name(name)
        except ValueError:  # not in the manifest: a page naming it is a 500
            missing.append(name)
    if missing:
        raise LookupError(
            f"{', '.join(missing)} not collected: run manage.py collectstatic "
            "and restart this node"
        )


@once
def _site_files() -> list[str]:
    """The site's own static files (static/), which its pages name."""
    return sorted(path for path, _ in FileSystemFinder().list([]))


def _cache() -> None:
    # Past config.cache's resilience, which would hide an outage: ask Redis.
    client = getattr(cache, "_cache", None)
    if client is not None and hasattr(client, "get_client"):
        client.get_client(write=True).ping()


def _broker() -> None:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return  # tasks run in this process: there is no broker to reach
    with app.connection_for_write(connect_timeout=TIMEOUT) as conn:
        # celery-types has an int; kombu passes it on as seconds (a float works).
        conn.ensure_connection(max_retries=0, timeout=TIMEOUT)  # type: ignore[arg-type]
