"""Settings for bench.pages: production settings, served over plain HTTP on loopback.

Production with two changes for a benchmark on one machine: no redirect to HTTPS
(wrk speaks plain HTTP to 127.0.0.1), and static files served by WhiteNoise from
the finders with plain storage, so no collectstatic run is needed. ROOT_URLCONF
adds the minimal view the pages are measured against (bench/urls.py).
"""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SECURE_SSL_REDIRECT", "false")

from config.settings.production import *  # noqa: F403
from config.settings.production import STORAGES

DEBUG = False
ROOT_URLCONF = "bench.urls"
STORAGES = {
    **STORAGES,
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# No collected files to serve (and no warning that var/staticfiles is missing).
STATIC_ROOT = None
WHITENOISE_USE_FINDERS = True
