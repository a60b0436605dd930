"""Background tasks' settings (Celery), imported by base.py: the broker, time
limits, the beat schedule and the queues. The environment decides, as in base."""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from config.env import cron_schedule
from config.env import every
from config.env import given
from config.env import integer
from config.env import redis_url

# CELERY
# ------------------------------------------------------------------------------
# Without a broker, tasks run in-process (the embedded default).
CELERY_BROKER_URL = redis_url("CELERY_BROKER_URL")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_TIMEZONE = "UTC"
CELERY_TASK_SOFT_TIME_LIMIT = integer("MOMENTUM_TASK_SOFT_TIME_LIMIT", 300)
CELERY_TASK_TIME_LIMIT = integer("MOMENTUM_TASK_TIME_LIMIT", 360)
if CELERY_TASK_SOFT_TIME_LIMIT >= CELERY_TASK_TIME_LIMIT:
    # The soft limit lets a task save its work; past the hard one it is killed.
    raise ImproperlyConfigured(
        "MOMENTUM_TASK_SOFT_TIME_LIMIT must be below MOMENTUM_TASK_TIME_LIMIT "
        f"({CELERY_TASK_SOFT_TIME_LIMIT} >= {CELERY_TASK_TIME_LIMIT})"
    )
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A request that sends a task gives up on a broker that is down within about a
# second (core.queue then leaves the work to its sweep) instead of hanging.
CELERY_BROKER_CONNECTION_TIMEOUT = 1.0
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 2,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.5,
}
# What tags the papers every ingest stores (papers.ingest.runs.Tagger): named
# here, so that papers does not import topics, the app above it.
MOMENTUM_INGEST_TAGGER = "topics.tagging.IngestTagger"
# What a change of a reader's signal (a save or a rating: papers.library) asks
# for: a training of their For you model, named here for the same reason.
MOMENTUM_SIGNAL_CHANGED = "topics.recommend.request_training"
# The longest task, an ingest backfill, is stopped after this many seconds.
MOMENTUM_INGEST_TIME_LIMIT = integer("MOMENTUM_INGEST_TIME_LIMIT", 3 * 60 * 60)
# Redis hands an unacknowledged (late-acked) task to another worker after this
# long: past the longest task's hard limit, so a task still running is never
# run twice. A worker killed mid-harvest does not wait for it: beat resumes the
# source as soon as its lease expires (papers.ingest.harvest.take_due_sources).
#
# A broker that takes connections and answers nothing (frozen, partitioned,
# failing over) is given up on as one that is down, each command after two
# seconds: a request's send would otherwise wait for good. Longer than the
# worker's one-second BRPOP polls, which it would cut short.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": MOMENTUM_INGEST_TIME_LIMIT + 15 * 60,
    "socket_timeout": 2.0,
    "socket_connect_timeout": 1.0,
}

# The daily crons' ticks may wait hours for a busy worker; the digests' one
# most of its quarter hour.
CELERY_BEAT_SCHEDULE = {
    # Each source keeps its own schedule (FeedSource.next_run_at); this tick
    # only sends the ones that are due.
    "enqueue-due-sources": {
        "task": "papers.tasks.enqueue_due_sources",
        **every("MOMENTUM_SOURCES_TICK_SECONDS", 300),
    },
    # Opens the digests whose send time has come in each user's time zone and
    # sends them (notifications.delivery); safe to fire twice. Every quarter
    # hour: a reader's whole hour is :30 or :45 in UTC in India or Nepal, and
    # an hourly tick sent theirs half an hour late.
    "send-due-digests": {
        "task": "notifications.tasks.send_due_digests",
        "schedule": cron_schedule("MOMENTUM_DIGEST_CRON", "*/15 * * * *"),
        "options": {"expires": 14 * 60},
    },
    # Hands out the digests waiting for a send task (notifications.delivery):
    # one deferred by a temporary failure once its retry time has come, one
    # whose task was lost or whose worker died holding it. Every minute, so a
    # retry comes about when its backoff says, whatever became of the worker
    # that deferred it.
    "send-waiting-digests": {
        "task": "notifications.tasks.send_waiting_digests",
        **every("MOMENTUM_DIGEST_SWEEP_SECONDS", 60),
    },
    # Re-tags asked for but lost (the broker down, a worker killed) go again.
    "resend-lost-retags": {
        "task": "topics.tasks.resend_lost_retags",
        **every("MOMENTUM_RETAG_SWEEP_SECONDS", 600),
    },
    # The full-text index of the newest papers, rebuilt when they have doubled
    # (papers.recent_index; a no-op most days).
    "refresh-recent-search-index": {
        "task": "papers.tasks.refresh_recent_search_index",
        "schedule": cron_schedule("MOMENTUM_RECENT_INDEX_CRON", "15 2 * * *"),
        "options": {"expires": 6 * 60 * 60},
    },
    # Retrains every active topic's relevance model; unchanged ones are skipped.
    "train-topic-models": {
        "task": "topics.tasks.train_topic_models",
        "schedule": cron_schedule("MOMENTUM_MODEL_CRON", "30 3 * * *"),
        "options": {"expires": 6 * 60 * 60},
    },
    # Similar papers of papers changed since the last pass, should the send
    # after an ingest have been lost (a no-op when nothing changed).
    "update-similar-papers": {
        "task": "topics.tasks.update_similar_papers",
        **every("MOMENTUM_SIMILAR_SWEEP_SECONDS", 3600),
    },
    # Trains the readers whose saves or ratings changed since their model was
    # trained (a training whose send was lost); unchanged ones are skipped.
    "train-reader-models": {
        "task": "topics.tasks.train_reader_models",
        "schedule": cron_schedule("MOMENTUM_FOR_YOU_CRON", "0 4 * * *"),
        "options": {"expires": 6 * 60 * 60},
    },
    # Saved searches' matches among new papers, should the send after an
    # ingest have been lost (a no-op when no paper is new).
    "match-saved-searches": {
        "task": "topics.tasks.match_saved_searches",
        **every("MOMENTUM_SAVED_SEARCH_SWEEP_SECONDS", 3600),
    },
    # Sessions past their expiry (a browser that never logged out) hold their
    # reader's address; nothing else deletes them (accounts.tasks).
    "clear-expired-sessions": {
        "task": "accounts.tasks.clear_expired_sessions",
        "schedule": cron_schedule("MOMENTUM_SESSIONS_CRON", "45 4 * * *"),
        "options": {"expires": 6 * 60 * 60},
    },
    # Rule previews' index terms of papers whose terms are stale: after a
    # release that changed them, every paper's (a no-op most days).
    "derive-rule-terms": {
        "task": "topics.tasks.derive_rule_terms",
        **every("MOMENTUM_RULE_TERMS_SWEEP_SECONDS", 600),
    },
    # Sends the judge each topic's pending papers (a no-op with no judge set).
    "judge-topics": {
        "task": "topics.tasks.judge_topics",
        **every("MOMENTUM_JUDGE_SWEEP_SECONDS", 900),
    },
}
# Each queue's workers answer a heartbeat (config/celery_app.py) every
# MOMENTUM_HEARTBEAT_SECONDS, and /healthz says when one last did: workers or
# beat that died, or a queue whose only worker is stuck, show there. The
# judge's queue only with a judge set, and AskPDF's fetch queue only with a
# folder of PDFs to fetch into: without one, no worker takes it, and its
# heartbeats would pile up in Redis.
HEARTBEAT = every("MOMENTUM_HEARTBEAT_SECONDS", 300)
HEARTBEAT_QUEUES = [
    "ingest",
    *(["fetch"] if given("MOMENTUM_ASK_PDF_DIR", "") else []),
    "tagging",
    "email",
    *(["judge"] if given("MOMENTUM_JUDGE_API_BASE", "") else []),
]
CELERY_BEAT_SCHEDULE |= {
    f"heartbeat-{queue}": {
        "task": "heartbeat",
        "args": [queue],
        **HEARTBEAT,
        "options": {**HEARTBEAT["options"], "queue": queue},
    }
    for queue in HEARTBEAT_QUEUES
}
# What beat sends often and only repeats what its last message would do, so is
# not sent while its queue still holds a message (config.celery_app.Scheduler):
# a queue whose worker is down, or never started, holds one of each, not one a
# tick (Redis keeps even an expired message until a worker takes it).
BEAT_SKIPPED_WHILE_QUEUED = {"heartbeat", "notifications.tasks.send_waiting_digests"}
CELERY_BEAT_SCHEDULER = "config.celery_app:Scheduler"
CELERY_TASK_ROUTES = {
    # The judge's calls to a language model wait on it: their own, low-priority
    # queue, so ingest and tagging never queue behind them.
    "topics.tasks.judge_pending_papers": {"queue": "judge"},
    # AskPDF's fetch of a paper's PDF, which a reader waits for: not behind a
    # harvest on the ingest queue's one worker, for hours. The arXiv limiter,
    # shared through Redis, still spaces its requests and the harvest's.
    "topics.tasks.fetch_paper_pdf": {"queue": "fetch"},
    "papers.tasks.*": {"queue": "ingest"},
    "topics.tasks.*": {"queue": "tagging"},
    "notifications.tasks.*": {"queue": "email"},
    "accounts.tasks.*": {"queue": "email"},
}
