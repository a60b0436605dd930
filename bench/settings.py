"""Settings for bench.pages: production settings, served over plain HTTP on loopback.

Production with these changes for a benchmark on one machine: no redirect to HTTPS
(wrk speaks plain HTTP to 127.0.0.1); static files served by WhiteNoise from
the finders with plain storage, so no collectstatic run is needed; and what
production requires given for loopback: links to 127.0.0.1, no mail sent, and
tasks run in-process unless a broker is named (bench.scale names one).
ROOT_URLCONF adds the minimal view the pages are measured against (bench/urls.py).
"""

from __future__ import annotations

import os

from config.env import redis_url

os.environ.setdefault("DJANGO_SECURE_SSL_REDIRECT", "false")
os.environ.setdefault("MOMENTUM_SITE_URL", "http://127.0.0.1:8000")
os.environ.setdefault("EMAIL_URL", "dummymail://")
# Production requires a broker. With none named, tasks run in-process (below),
# and production's check is given an address nothing connects to.
BROKER_NAMED = bool(os.environ.get("CELERY_BROKER_URL"))
if not BROKER_NAMED:
    os.environ["CELERY_BROKER_URL"] = "redis://127.0.0.1:1/0"

from config.settings.production import *  # noqa: E402, F403
from config.settings.production import STORAGES  # noqa: E402

DEBUG = False
if not BROKER_NAMED:
    del os.environ["CELERY_BROKER_URL"]  # nor in the processes this one starts
    CELERY_BROKER_URL = ""
    CELERY_TASK_ALWAYS_EAGER = True
    REDIS_URL = redis_url("REDIS_URL")  # not the stand-in
ROOT_URLCONF = "bench.urls"
STORAGES = {
    **STORAGES,
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# No collected files to serve (and no warning that var/staticfiles is missing).
STATIC_ROOT = None
WHITENOISE_USE_FINDERS = True
