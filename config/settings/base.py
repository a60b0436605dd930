"""Settings for every environment. The environment decides; see .env.example.

With no variables set this runs the embedded default: SQLite, Celery tasks run
in-process, email written to var/mail/.
"""

from __future__ import annotations

from pathlib import Path

from csp.constants import NONE
from csp.constants import SELF
from django.core.exceptions import ImproperlyConfigured

from config.env import BASE_DIR
from config.env import chat_service
from config.env import choice
from config.env import env
from config.env import given
from config.env import integer
from config.env import local_secret_key
from config.env import log_level
from config.env import mail_address
from config.env import number
from config.env import rate
from config.env import redis_url
from config.env import secret
from config.env import service_url
from config.env import site_url
from config.env import strict_bool
from config.env import url_template
from config.settings.tasks import *  # noqa: F403
from config.settings.tasks import CELERY_BROKER_URL

# GENERAL
# ------------------------------------------------------------------------------
DEBUG = strict_bool("DJANGO_DEBUG", default=True)
VAR_DIR = Path(given("MOMENTUM_VAR_DIR", str(BASE_DIR / "var")))
EMBEDDED = not given("DATABASE_URL", "")
SECRET_KEY = secret("DJANGO_SECRET_KEY")
if not SECRET_KEY and EMBEDDED:
    # The embedded default keeps a random key of its own, so the server, the
    # demo's commands and their signed links (unsubscribe) all agree on it.
    SECRET_KEY = local_secret_key(VAR_DIR / "secret_key")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("DJANGO_SECRET_KEY is required when DEBUG is off")
    SECRET_KEY = "insecure-development-key-only-used-with-debug-on"
# An empty DJANGO_ALLOWED_HOSTS= is unset too (env.list would read no host).
LOCAL_HOSTS = ["127.0.0.1", "localhost"]
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=[]) or LOCAL_HOSTS
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])
TIME_ZONE = "UTC"
# As every page says (<html lang="en">), and so do the feeds (Django's Feed).
LANGUAGE_CODE = "en"
USE_I18N = True
# The site's words in place of allauth's on its pages (locale/en/LC_MESSAGES).
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_TZ = True
SITE_ID = 1
# The address every link in mail, feeds and the arXiv User-Agent starts with, and
# the site's name in mail (both written to the Sites record: accounts.sites).
MOMENTUM_SITE_URL = site_url("MOMENTUM_SITE_URL", "http://127.0.0.1:8000")
MOMENTUM_SITE_NAME = given("MOMENTUM_SITE_NAME", "Momentum")
ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

# DATABASES
# ------------------------------------------------------------------------------
# Service addresses are read with service_url(): env.db("DATABASE_URL") would
# take an empty DATABASE_URL= (an env file's "unset") for an address.
DATABASES = {
    "default": env.db_url_config(
        service_url(
            "DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}", env.DB_SCHEMES
        )
    )
}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
DATABASES["default"].setdefault("CONN_MAX_AGE", integer("DJANGO_CONN_MAX_AGE", 60))
# A kept connection cut meanwhile (a failover, a restart, an idle timeout) is
# replaced before a request's first query, not answered with a 500.
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # A server that takes the connection and answers nothing (frozen, failing
    # over) is given up on as one that is down, within a request's time and
    # the health check's, not after the web server's worker timeout.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("connect_timeout", 5)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    # WAL lets the page server read while an ingest writes.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# APPS
# ------------------------------------------------------------------------------
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.sites",
    "django.contrib.sitemaps",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "allauth",
    "allauth.account",
    "django_guid",
    "accounts",
    "papers",
    "topics",
    "notifications",
]

MIDDLEWARE = [
    # Each request's id (REQUEST IDS, below): first, so that all it logs has it.
    "django_guid.middleware.guid_middleware",
    "django.middleware.security.SecurityMiddleware",
    # /healthz, before anything reads the host (config.health).
    "config.health.probes",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Answers gzipped (core.compression): below WhiteNoise, whose static files
    # collectstatic compressed, and /healthz; above all that reads a body.
    "core.compression.GZipMiddleware",
    # A shared link's utm_source, fbclid... go before any page is read (core.tracking).
    "core.tracking.without_tracking",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    # The site's page for a form's address opened as a page (core.errors).
    "core.errors.method_pages",
    # Answers to signed-in requests kept by no shared cache (core.private).
    "core.private.private_answers",
]
# A form sent with an expired token gets the site's page, not Django's (core.errors).
CSRF_FAILURE_VIEW = "core.errors.csrf_failure"

# CONTENT SECURITY POLICY (django-csp)
# ------------------------------------------------------------------------------
# Pages load only their own scripts and styles: no inline scripts, handlers or
# style attributes anywhere (charts are SVG with classes).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

# AUTHENTICATION
# ------------------------------------------------------------------------------
AUTH_USER_MODEL = "accounts.User"
# Django's and allauth's, each reading the signed-in user from the cache.
AUTHENTICATION_BACKENDS = [
    "accounts.backends.CachedModelBackend",
    "accounts.backends.CachedAuthenticationBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": f"django.contrib.auth.password_validation.{name}"}
    for name in [
        "UserAttributeSimilarityValidator",
        "MinimumLengthValidator",
        "CommonPasswordValidator",
        "NumericPasswordValidator",
    ]
]
LOGIN_URL = "account_login"
LOGIN_REDIRECT_URL = "home"
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
ACCOUNT_USER_MODEL_USERNAME_FIELD = None
# allauth's EmailVerificationMethod values.
ACCOUNT_EMAIL_VERIFICATION = choice(
    "MOMENTUM_EMAIL_VERIFICATION", "mandatory", ("mandatory", "optional", "none")
)
ACCOUNT_UNIQUE_EMAIL = True
# The confirmation link signs in only where the signup happened (allauth checks
# the session): the new reader is not asked for the password just chosen.
ACCOUNT_LOGIN_ON_EMAIL_CONFIRMATION = True
# A reset link proves the address too: it signs in, to the page the login was
# going to (the link keeps its `next`: accounts.adapter) or the home page.
ACCOUNT_LOGIN_ON_PASSWORD_RESET = True
ACCOUNT_ADAPTER = "accounts.adapter.AccountAdapter"
# Logging in with an unconfirmed address sends a new link, at most one every
# this many minutes (allauth's default); a login sooner is told when
# (accounts.adapter).
CONFIRMATION_COOLDOWN_MINUTES = 3
ACCOUNT_RATE_LIMITS = {"confirm_email": f"1/{CONFIRMATION_COOLDOWN_MINUTES}m/key"}
ACCOUNT_SIGNUP_FORM_CLASS = "accounts.forms.SignupExtras"
# Whose an address is: accounts.addresses; the login's way to a reset keeps
# where it goes: accounts.forms.
ACCOUNT_FORMS = {
    "login": "accounts.forms.ComingBackLoginForm",
    "signup": "accounts.addresses.OwnersSignupForm",
    "reset_password": "accounts.addresses.OwnersResetPasswordForm",
}
# One address per account: a new one waits for its confirmation, then replaces
# the old, which is told (as the account is of a changed or reset password).
ACCOUNT_CHANGE_EMAIL = True
ACCOUNT_EMAIL_NOTIFICATIONS = True
# Changing the address asks for the password (again after five minutes); not
# for a code by mail, which the site does not otherwise use.
ACCOUNT_REAUTHENTICATION_REQUIRED = True
ACCOUNT_REAUTHENTICATION_METHODS = ("password",)
# How many proxies (load balancer, CDN) stand before the web processes: the
# visitor's address is the one the outermost saw (X-Forwarded-For). 0: none,
# REMOTE_ADDR is the visitor. Rate limits of visitors count per that address.
MOMENTUM_TRUSTED_PROXIES = integer("MOMENTUM_TRUSTED_PROXIES", 0)
# django-ratelimit (topics.limits): while the cache is down, limits are open.
RATELIMIT_FAIL_OPEN = True
# Links in allauth's mails sent outside a request use the site's own scheme.
ACCOUNT_DEFAULT_HTTP_PROTOCOL = MOMENTUM_SITE_URL.split(":", 1)[0]

# TEMPLATES AND STATIC FILES
# ------------------------------------------------------------------------------
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    }
]
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# WhiteNoise serves static files straight from the apps and static/, with or
# without DEBUG, so `make run` needs no collectstatic; production.py serves the
# collected, hashed and compressed copies instead.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True

# CACHES AND SESSIONS
# ------------------------------------------------------------------------------
# Pages (papers.pagecache) and sessions are read from the cache; with several web
# processes CACHE_URL must name a shared one (Redis), or one process would not
# see another's changes and logouts.
# The embedded default keeps its cache in the process. Django's LocMemCache
# holds 300 entries, fewer than one topic page's rows and their versions: it
# would drop a third of them on every page (a signed-in reader's pages measured
# 5x slower). 20,000 hold the demo's pages as a reader walks them, about 60 MiB.
LOCAL_CACHE_URL = "locmemcache://momentum?max_entries=20000"
CACHES = {
    "default": env.cache_url_config(
        service_url("CACHE_URL", LOCAL_CACHE_URL, env.CACHE_SCHEMES)
    )
}
if CACHES["default"]["BACKEND"] == "django.core.cache.backends.redis.RedisCache":
    # A Redis that is down or slow must not take the site with it (config.cache):
    # short timeouts, and failures answered as misses.
    CACHES["default"]["BACKEND"] = "config.cache.ResilientRedisCache"
    CACHES["default"].setdefault("OPTIONS", {}).update(
        socket_connect_timeout=0.5, socket_timeout=0.5
    )
# Sessions in the database, read through the cache: no database round trip per
# request while the cache holds them, and no failure while it is down.
SESSION_ENGINE = "accounts.sessions"

# EMAIL
# ------------------------------------------------------------------------------
# The embedded default writes each message to a file under var/mail/.
# Lower case: not a setting, which the debug page and diffsettings would show
# with its password.
email_url = service_url(
    "EMAIL_URL", f"filemail://{VAR_DIR / 'mail'}", env.EMAIL_SCHEMES
)
vars().update(env.email_url_config(email_url))
if EMAIL_BACKEND == "django.core.mail.backends.filebased.EmailBackend":  # type: ignore[name-defined]  # noqa: F405
    # django-environ drops the leading "/" of filemail:///abs/path, which would
    # write mail under the current directory instead.
    EMAIL_FILE_PATH = email_url.removeprefix("filemail://")
DEFAULT_FROM_EMAIL = mail_address(
    "MOMENTUM_FROM_EMAIL", "Momentum <digest@momentum.localhost>"
)
SERVER_EMAIL = DEFAULT_FROM_EMAIL
EMAIL_TIMEOUT = integer("MOMENTUM_EMAIL_TIMEOUT", 20)

# CELERY
# ------------------------------------------------------------------------------
# The broker, time limits, the beat schedule and the queues are in
# config/settings/tasks.py, imported above.

# REST FRAMEWORK
# ------------------------------------------------------------------------------
# The largest request body the API parses (its bodies are small JSON objects).
MOMENTUM_API_MAX_BODY_BYTES = integer("MOMENTUM_API_MAX_BODY_BYTES", 64 * 1024)
REST_FRAMEWORK = {
    # Token first: its WWW-Authenticate header makes a missing login a 401.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "core.api.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # JSON alone, so no ?format=: refused as any unknown parameter is, whatever
    # its value (DRF's default answered one it lacks with a bare 404, before
    # the caller was known). The schema, in two formats, reads its own.
    "URL_FORMAT_OVERRIDE": None,
    "DEFAULT_PARSER_CLASSES": ["core.api.parsers.BoundedJSONParser"],
    "DEFAULT_SCHEMA_CLASS": "core.api.schema.AutoSchema",
    "EXCEPTION_HANDLER": "core.api.errors.exception_handler",
    "DEFAULT_THROTTLE_CLASSES": [
        "core.api.throttling.AnonRateThrottle",
        "core.api.throttling.UserRateThrottle",
    ],
    # The API's throttles read the visitor's address as topics.limits does.
    "NUM_PROXIES": MOMENTUM_TRUSTED_PROXIES,
    "DEFAULT_THROTTLE_RATES": {
        "anon": rate("MOMENTUM_API_ANON_RATE", "60/minute"),
        "user": rate("MOMENTUM_API_USER_RATE", "600/minute"),
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Momentum API",
    "DESCRIPTION": "Papers from arXiv, curated topics and their momentum, and the "
    "caller's follows, saved papers and digest settings. Errors share one shape: "
    '`{"error": {"code", "message", "fields"}}`.',
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    # The docs page loads Swagger UI from this site (drf-spectacular-sidecar).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "persistAuthorization": False},
}

# MOMENTUM
# ------------------------------------------------------------------------------
MOMENTUM_CONTACT_EMAIL = given("MOMENTUM_CONTACT_EMAIL", "operator@momentum.localhost")

# The feed marks "seen" the papers a reader had on screen in it before (site.js
# reports them); it remembers them for this many days.
MOMENTUM_SEEN_DAYS = integer("MOMENTUM_SEEN_DAYS", 180)
# How many saved searches (private alerts) each reader may keep.
MOMENTUM_SAVED_SEARCHES_MAX = integer("MOMENTUM_SAVED_SEARCHES_MAX", 10)

# DIGESTS
# ------------------------------------------------------------------------------
# A send's claim on its digest; past it, a dead worker's digest is sent again.
MOMENTUM_DIGEST_CLAIM_SECONDS = integer("MOMENTUM_DIGEST_CLAIM_SECONDS", 600)
# Temporary SMTP failures are retried with exponential backoff and jitter from
# RETRY_SECONDS up to RETRY_MAX_SECONDS, MAX_ATTEMPTS times in all; then the
# digest is marked failed. A mail server out of reach is waited for longer:
# until the next period's digest. A retry is due at its Digest.retry_at, which
# beat's sweep (MOMENTUM_DIGEST_SWEEP_SECONDS, tasks.py) honours.
MOMENTUM_DIGEST_MAX_ATTEMPTS = integer("MOMENTUM_DIGEST_MAX_ATTEMPTS", 6)
MOMENTUM_DIGEST_RETRY_SECONDS = number("MOMENTUM_DIGEST_RETRY_SECONDS", 60.0)
MOMENTUM_DIGEST_RETRY_MAX_SECONDS = number("MOMENTUM_DIGEST_RETRY_MAX_SECONDS", 1800.0)

# ASK (topics/ask): questions answered from a topic's or a paper's papers
# ------------------------------------------------------------------------------
# Any OpenAI-compatible chat-completions endpoint, e.g. https://api.openai.com/v1
# or a local server's http://127.0.0.1:8080/v1. Unset: the offline extractive
# answer only.
MOMENTUM_ASK_API_BASE, MOMENTUM_ASK_MODEL = chat_service(
    "MOMENTUM_ASK_API_BASE", "MOMENTUM_ASK_MODEL"
)
MOMENTUM_ASK_API_KEY = secret("MOMENTUM_ASK_API_KEY", "")
# Seconds to connect, and for the whole answer from the provider.
MOMENTUM_ASK_CONNECT_TIMEOUT = number("MOMENTUM_ASK_CONNECT_TIMEOUT", 5.0)
MOMENTUM_ASK_TIMEOUT = number("MOMENTUM_ASK_TIMEOUT", 30.0)
# Questions per user (signed in) or address (visitors), pages and API together.
MOMENTUM_ASK_RATE = rate("MOMENTUM_ASK_RATE", "60/hour")
# Papers retrieved as the context of an answer.
MOMENTUM_ASK_SOURCES = integer("MOMENTUM_ASK_SOURCES", 8)
# A folder of paper PDFs (<arXiv id>.pdf, "/" as "_"): AskPDF reads their full
# text when present, else the abstract and metadata, and when it is set, a
# paper's PDF missing from it is fetched (a task on the fetch queue, through
# the polite arXiv client) from MOMENTUM_ASK_PDF_URL ({id}: the versioned id).
MOMENTUM_ASK_PDF_DIR = env.str("MOMENTUM_ASK_PDF_DIR", "")
MOMENTUM_ASK_PDF_URL = url_template(
    "MOMENTUM_ASK_PDF_URL", "https://arxiv.org/pdf/{id}", "id"
)
# A PDF larger is neither fetched nor read; pages past the cap are not read.
MOMENTUM_ASK_PDF_MAX_BYTES = integer("MOMENTUM_ASK_PDF_MAX_BYTES", 30 * 1024 * 1024)
MOMENTUM_ASK_PDF_MAX_PAGES = integer("MOMENTUM_ASK_PDF_MAX_PAGES", 80)

# TOPIC RELEVANCE MODELS (topics.relevance)
# ------------------------------------------------------------------------------
# Below either minimum a topic has no model and its rule alone decides.
MOMENTUM_MODEL_MIN_POSITIVES = integer("MOMENTUM_MODEL_MIN_POSITIVES", 20)
MOMENTUM_MODEL_MIN_DECISIONS = integer("MOMENTUM_MODEL_MIN_DECISIONS", 10)
# A curator's decision retrains the topic's model this long after the first
# decision of a burst, so one training covers the whole burst.
MOMENTUM_MODEL_TRAIN_DELAY = integer("MOMENTUM_MODEL_TRAIN_DELAY", 120)
# A reader's save or rating retrains their For you model this long after the
# first of a burst.
MOMENTUM_FOR_YOU_TRAIN_DELAY = integer("MOMENTUM_FOR_YOU_TRAIN_DELAY", 30)
# Threads scoring an ingest's new papers for every reader (topics.recommend):
# the sparse product runs outside the GIL, so a worker may use more than one core.
MOMENTUM_FOR_YOU_THREADS = integer("MOMENTUM_FOR_YOU_THREADS", 2)
# Readers' "not relevant" flags, per user.
MOMENTUM_FLAG_RATE = rate("MOMENTUM_FLAG_RATE", "30/hour")

# JUDGE (topics.judging): an optional language model deciding the uncertain band
# ------------------------------------------------------------------------------
# Any OpenAI-compatible chat-completions endpoint, as for Ask. Unset: pending
# papers wait for a curator.
MOMENTUM_JUDGE_API_BASE, MOMENTUM_JUDGE_MODEL = chat_service(
    "MOMENTUM_JUDGE_API_BASE", "MOMENTUM_JUDGE_MODEL"
)
MOMENTUM_JUDGE_API_KEY = secret("MOMENTUM_JUDGE_API_KEY", "")
# Seconds to connect, and for a whole verdict.
MOMENTUM_JUDGE_CONNECT_TIMEOUT = number("MOMENTUM_JUDGE_CONNECT_TIMEOUT", 5.0)
MOMENTUM_JUDGE_TIMEOUT = number("MOMENTUM_JUDGE_TIMEOUT", 30.0)
# Papers judged per topic per sweep, how often the sweep runs, and how long a
# paper the judge failed on waits before it is tried again.
MOMENTUM_JUDGE_BATCH = integer("MOMENTUM_JUDGE_BATCH", 50)
# MOMENTUM_JUDGE_SWEEP_SECONDS: the beat's (config/settings/tasks.py).
MOMENTUM_JUDGE_RETRY_SECONDS = integer("MOMENTUM_JUDGE_RETRY_SECONDS", 6 * 60 * 60)

# ARXIV
# ------------------------------------------------------------------------------
# Redis for state shared by all workers (the arXiv rate limiter): the broker's
# Redis unless set. Empty in the embedded default, where limits are per process.
REDIS_URL = redis_url("REDIS_URL", CELERY_BROKER_URL)
# arXiv asks for at most one request every 3 s, over one connection:
# https://info.arxiv.org/help/api/tou.html
MOMENTUM_ARXIV_API_URL = given(
    "MOMENTUM_ARXIV_API_URL", "https://export.arxiv.org/api/query"
)
MOMENTUM_ARXIV_OAI_URL = given("MOMENTUM_ARXIV_OAI_URL", "https://oaipmh.arxiv.org/oai")
MOMENTUM_ARXIV_LISTING_URL = url_template(
    "MOMENTUM_ARXIV_LISTING_URL", "https://rss.arxiv.org/atom/{category}", "category"
)
MOMENTUM_ARXIV_API_PAGE_SIZE = integer("MOMENTUM_ARXIV_API_PAGE_SIZE", 500)
# How long a run's claim on its source lasts without progress; a worker that dies
# mid-run holds the source this long at most.
MOMENTUM_INGEST_CLAIM_SECONDS = integer("MOMENTUM_INGEST_CLAIM_SECONDS", 900)
MOMENTUM_ARXIV_MIN_INTERVAL = number("MOMENTUM_ARXIV_MIN_INTERVAL", 3.0)
MOMENTUM_HTTP_CONNECT_TIMEOUT = number("MOMENTUM_HTTP_CONNECT_TIMEOUT", 10.0)
MOMENTUM_HTTP_READ_TIMEOUT = number("MOMENTUM_HTTP_READ_TIMEOUT", 60.0)
MOMENTUM_HTTP_MAX_ATTEMPTS = integer("MOMENTUM_HTTP_MAX_ATTEMPTS", 5)
# The largest document read whole: a fetched body, or an XML file (decompressed).
MOMENTUM_HTTP_MAX_BYTES = integer("MOMENTUM_HTTP_MAX_BYTES", 64 * 1024 * 1024)
# Files on disk (manage.py ingest): a snapshot streams, so it may be large (all
# of arXiv is about 5 GB), but a gzip file may not inflate past RATIO times its
# size, and no line (one paper) may pass RECORD_BYTES.
MOMENTUM_INGEST_MAX_BYTES = integer("MOMENTUM_INGEST_MAX_BYTES", 16 * 1024**3)
MOMENTUM_INGEST_MAX_RATIO = integer("MOMENTUM_INGEST_MAX_RATIO", 100)
MOMENTUM_INGEST_MAX_RECORD_BYTES = integer(
    "MOMENTUM_INGEST_MAX_RECORD_BYTES", 1024 * 1024
)

# LOGGING
# ------------------------------------------------------------------------------
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {
            "format": "%(asctime)s %(levelname)s [%(request_id)s] %(name)s %(message)s"
        }
    },
    "filters": {
        # Credentials in addresses (a feed's key, an unsubscribe token), which
        # Django logs with every 4xx and 5xx answer, are hidden (config/access_log.py).
        "hidden": {"()": "config.access_log.HiddenCredentials"},
        "request_id": {"()": "config.access_log.RequestId"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "plain",
            "filters": ["hidden", "request_id"],
        }
    },
    "root": {"handlers": ["console"], "level": log_level("DJANGO_LOG_LEVEL", "INFO")},
    "loggers": {
        # pylatexenc warns about every odd macro in a paper's text (papers/latex.py).
        "pylatexenc": {"level": "ERROR"},
        # django-guid says at INFO, for every request, that it made an id, and
        # at WARNING what a refused X-Request-ID held: a client's text.
        "django_guid": {"level": "ERROR"},
    },
}

# REQUEST IDS (django-guid)
# ------------------------------------------------------------------------------
# Every request has an id: a proxy's X-Request-ID when it reads as a UUID (32
# hex digits as nginx's $request_id, or with hyphens; anything else is
# replaced and not logged, so no header writes into the logs), else a new one.
# It is in each log line of the request and of the tasks it queues
# (config/celery_app.py), in the answer's X-Request-ID header and the access
# log (Procfile), and on the page of a server error, for a reader to quote
# (core.errors.server_error).
DJANGO_GUID = {"GUID_HEADER_NAME": "X-Request-ID", "EXPOSE_HEADER": False}
