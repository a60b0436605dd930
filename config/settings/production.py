"""Production: base with DEBUG forced off and every hardening switch on."""

from __future__ import annotations

import os

os.environ["DJANGO_DEBUG"] = "false"

from django.core.exceptions import ImproperlyConfigured

from config.env import given
from config.env import integer
from config.env import secret
from config.env import strict_bool
from config.settings.base import *  # noqa: F403
from config.settings.base import STORAGES

# Never the embedded default's key file: every web and worker machine must sign
# with the same key, given to all of them.
if not secret("DJANGO_SECRET_KEY"):
    raise ImproperlyConfigured("DJANGO_SECRET_KEY is required in production")

# Each of these has an embedded default wrong for a deployment: only localhost
# served, links to 127.0.0.1, tasks run inside web requests, digests written to
# var/mail and marked sent. The operator names them (consolemail:// is a name).
REQUIRED = [
    "DJANGO_ALLOWED_HOSTS",
    "MOMENTUM_SITE_URL",
    "CELERY_BROKER_URL",
    "EMAIL_URL",
    "CACHE_URL",  # and a shared one (below)
]
if missing := [name for name in REQUIRED if not given(name, "")]:
    raise ImproperlyConfigured(
        f"{', '.join(missing)} must be set in production (README: Operating it)"
    )

# The collected files (collectstatic), hashed and compressed, cached for ever.
STORAGES = {
    **STORAGES,
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = False
WHITENOISE_AUTOREFRESH = False

# Page versions, API ETags, rate limits, training debounce and stream tokens are
# shared state: with several processes, a per-process cache would let them drift.
# Redis only: config.cache keeps the site up without it and /healthz asks it;
# other schemes failed every request (a table never made, a module Django or
# this install lacks) or kept a cache per machine.
if CACHES["default"]["BACKEND"] != "config.cache.ResilientRedisCache":  # noqa: F405
    raise ImproperlyConfigured(
        "CACHE_URL must name a shared cache in production, a Redis one "
        "(redis://host:6379/1): pages, rate limits and one-time tokens are shared "
        "by every process"
    )

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = strict_bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
# Load balancers probe /healthz (config.urls) over plain HTTP: a redirect would
# hide its 200 or 503 (request.path without its leading "/").
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = integer("DJANGO_SECURE_HSTS_SECONDS", default=60 * 60 * 24 * 365)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
ACCOUNT_DEFAULT_HTTP_PROTOCOL = "https"
