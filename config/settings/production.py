"""Production: base with DEBUG forced off and every hardening switch on."""

from __future__ import annotations

import os

os.environ["DJANGO_DEBUG"] = "false"

from django.core.exceptions import ImproperlyConfigured

from config.env import env
from config.env import secret
from config.env import strict_bool
from config.settings.base import *  # noqa: F403
from config.settings.base import STORAGES

# Never the embedded default's key file: every web and worker machine must sign
# with the same key, given to all of them.
if not secret("DJANGO_SECRET_KEY"):
    raise ImproperlyConfigured("DJANGO_SECRET_KEY is required in production")

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
if CACHES["default"]["BACKEND"] in {  # noqa: F405
    "django.core.cache.backends.locmem.LocMemCache",
    "django.core.cache.backends.dummy.DummyCache",
}:
    raise ImproperlyConfigured(
        "CACHE_URL must name a shared cache in production (redis://host:6379/1): "
        "pages, rate limits and one-time tokens are shared by every process"
    )

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = strict_bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=60 * 60 * 24 * 365)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
ACCOUNT_DEFAULT_HTTP_PROTOCOL = "https"
