from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from allauth.account.app_settings import AppSettings
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

import config.settings
from config.env import local_secret_key
from tests.test_env_example import settings_variables

BASE_DIR = Path(__file__).resolve().parent.parent
SERVICES = {"DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "EMAIL_URL", "REDIS_URL"}
# What production asks to be given (README, Operating it).
PRODUCTION = {
    "DJANGO_SECRET_KEY": "x" * 20 + "-a-long-random-production-secret-" + "y" * 20,
    "DJANGO_ALLOWED_HOSTS": "momentum.example.org",
    "MOMENTUM_SITE_URL": "https://momentum.example.org",
    "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0",
    "CACHE_URL": "redis://127.0.0.1:6379/1",
    "EMAIL_URL": "smtp://mail.example.org:587",
}

Load = Callable[..., ModuleType]


@pytest.fixture
def load_settings(monkeypatch, tmp_path) -> Iterator[Load]:
    """Runs a settings module afresh with only the given variables set (and a
    var dir of the test's own); the settings this process runs on stay."""
    kept = {
        name: module
        for name, module in sys.modules.items()
        if name.startswith("config.settings.")
    }

    def forget() -> None:
        for name in [
            name for name in sys.modules if name.startswith("config.settings.")
        ]:
            del sys.modules[name]

    def load(module: str, **variables: str) -> ModuleType:
        for name in list(os.environ):
            if name in SERVICES or name.startswith(("DJANGO_", "MOMENTUM_")):
                monkeypatch.delenv(name)
        monkeypatch.setenv("DJANGO_SETTINGS_MODULE", settings.SETTINGS_MODULE)
        # production.py writes DJANGO_DEBUG: restored after the test.
        monkeypatch.setenv("DJANGO_DEBUG", "")
        monkeypatch.setenv("MOMENTUM_VAR_DIR", str(tmp_path))
        monkeypatch.chdir(tmp_path)  # a relative MOMENTUM_VAR_DIR lands there too
        for name, value in variables.items():
            monkeypatch.setenv(name, value)
        forget()
        return importlib.import_module(module)

    yield load
    forget()
    sys.modules.update(kept)
    for name, module in kept.items():
        setattr(config.settings, name.rpartition(".")[2], module)


def test_test_settings_use_postgresql():
    assert settings.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"


def test_the_embedded_default_keeps_one_secret_key_of_its_own(tmp_path):
    path = tmp_path / "var" / "secret_key"

    first = local_secret_key(path)

    assert len(first) >= 50
    assert local_secret_key(path) == first
    assert path.stat().st_mode & 0o777 == 0o600


def test_empty_service_addresses_are_the_embedded_default(load_settings, tmp_path):
    """An env file (honcho, foreman, docker --env-file) writes NAME= for unset."""
    base = load_settings("config.settings.base", **dict.fromkeys(SERVICES, ""))

    assert base.DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3"
    assert base.CACHES["default"]["BACKEND"].endswith("LocMemCache")
    assert base.EMAIL_BACKEND == "django.core.mail.backends.filebased.EmailBackend"
    assert str(tmp_path / "mail") == base.EMAIL_FILE_PATH
    assert base.CELERY_TASK_ALWAYS_EAGER


def env_example() -> dict[str, str]:
    lines = (BASE_DIR / ".env.example").read_text().splitlines()
    pairs = [line.split("=", 1) for line in lines if line and line[0] != "#"]
    return dict(pairs)


def test_the_example_env_file_is_the_embedded_default(load_settings, tmp_path):
    variables = env_example() | {"MOMENTUM_VAR_DIR": str(tmp_path)}

    base = load_settings("config.settings.base", **variables)

    assert base.DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3"
    assert base.REDIS_URL == ""


def test_production_answers_health_checks_over_plain_http(
    load_settings, client, settings, db
):
    """A load balancer probes /healthz over plain HTTP and must see its 200 or
    503, not the redirect to HTTPS every other address gets."""
    production = load_settings("config.settings.production", **PRODUCTION)
    settings.SECURE_SSL_REDIRECT = production.SECURE_SSL_REDIRECT
    settings.SECURE_REDIRECT_EXEMPT = getattr(production, "SECURE_REDIRECT_EXEMPT", [])

    assert client.get("/healthz").status_code == 200
    assert client.get("/healthz/").status_code == 301
    assert client.get("/").status_code == 301


def test_production_answers_health_checks_sent_to_the_node_s_own_address(
    load_settings, client, settings, db
):
    """A load balancer (or Kubernetes) probes each node by its own address,
    Host: 10.0.0.5:8000, which DJANGO_ALLOWED_HOSTS does not name: the probe
    saw a 400 and took every healthy node out, logging an error each time."""
    production = load_settings("config.settings.production", **PRODUCTION)
    settings.ALLOWED_HOSTS = production.ALLOWED_HOSTS
    settings.SECURE_SSL_REDIRECT = production.SECURE_SSL_REDIRECT
    settings.SECURE_REDIRECT_EXEMPT = production.SECURE_REDIRECT_EXEMPT

    probed = client.get("/healthz", HTTP_HOST="10.0.0.5:8000")

    assert probed.status_code == 200
    assert probed.json()["database"] == "ok"
    # Every other address still answers only for the site's hosts.
    assert client.get("/", HTTP_HOST="10.0.0.5:8000").status_code == 400


def test_production_loads_with_what_it_asks_for(load_settings):
    production = load_settings("config.settings.production", **PRODUCTION)

    assert production.ALLOWED_HOSTS == ["momentum.example.org"]
    assert not production.CELERY_TASK_ALWAYS_EAGER
    assert not production.DEBUG


@pytest.mark.parametrize(
    "name",
    [
        "DJANGO_ALLOWED_HOSTS",
        "MOMENTUM_SITE_URL",
        "CELERY_BROKER_URL",
        "EMAIL_URL",
        "CACHE_URL",
    ],
)
def test_production_refuses_the_embedded_defaults(load_settings, name):
    variables = PRODUCTION | {name: ""}

    with pytest.raises(ImproperlyConfigured, match=f"{name} must be set in production"):
        load_settings("config.settings.production", **variables)


@pytest.mark.parametrize(
    "address",
    [
        "dbcache://momentum_cache",  # a table no step of the README makes
        "memcache://127.0.0.1:11211",  # a backend Django no longer has
        "pymemcache://127.0.0.1:11211",  # read as pylibmc, not installed
        "filecache:///var/cache/momentum",  # one machine's own
    ],
)
def test_production_refuses_a_cache_other_than_redis(load_settings, address):
    """Each was taken, and then every request failed deep in a library (a
    missing table, a missing module), or machines kept caches of their own;
    /healthz and config.cache know Redis only."""
    with pytest.raises(ImproperlyConfigured, match=r"^CACHE_URL must name a shared"):
        load_settings(
            "config.settings.production", **PRODUCTION | {"CACHE_URL": address}
        )


def test_production_names_everything_missing_at_once(load_settings):
    variables = {name: PRODUCTION[name] for name in ["DJANGO_SECRET_KEY"]}

    with pytest.raises(ImproperlyConfigured) as refused:
        load_settings("config.settings.production", **variables)

    assert str(refused.value).startswith(
        "DJANGO_ALLOWED_HOSTS, MOMENTUM_SITE_URL, CELERY_BROKER_URL, EMAIL_URL, "
        "CACHE_URL must be set in production"
    )


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("MOMENTUM_API_ANON_RATE", "60 per minute"),
        ("MOMENTUM_API_USER_RATE", "often"),
        ("MOMENTUM_ASK_RATE", "lots"),
        ("MOMENTUM_FLAG_RATE", "x"),
        ("DJANGO_LOG_LEVEL", "loud"),
        ("MOMENTUM_SEEN_DAYS", "abc"),
        ("DJANGO_CONN_MAX_AGE", "forever"),
        ("MOMENTUM_SOURCES_TICK_SECONDS", "5m"),
        ("MOMENTUM_ARXIV_MIN_INTERVAL", "fast"),
        ("MOMENTUM_EMAIL_VERIFICATION", "sometimes"),
        # An address the code fills in: its one field, on http(s).
        ("MOMENTUM_ASK_PDF_URL", "https://mirror.example/pdf/{arxiv_id}"),
        ("MOMENTUM_ASK_PDF_URL", "https://mirror.example/pdf/"),
        ("MOMENTUM_ASK_PDF_URL", "file:///pdfs/{id}"),
        ("MOMENTUM_ARXIV_LISTING_URL", "https://rss.example/atom/{category"),
        # A sender the SMTP backend cannot read: every sign-up a 500 (after its
        # account was made) and every digest failed.
        ("MOMENTUM_FROM_EMAIL", "Momentum, Inc <digest@example.org>"),
        ("MOMENTUM_FROM_EMAIL", "digest"),
        # Values that only work together.
        ("MOMENTUM_TASK_SOFT_TIME_LIMIT", "900"),
        ("MOMENTUM_ASK_API_BASE", "api.openai.com/v1"),
        ("MOMENTUM_JUDGE_MODEL", "gpt-x"),  # and no address
        ("MOMENTUM_RETAG_SWEEP_SECONDS", "0"),
        # A broker's address a worker would retry for ever, printing its password.
        ("CELERY_BROKER_URL", "redis//:brokerPW456@127.0.0.1:6392/0"),
        ("CELERY_BROKER_URL", "redis://127.0.0.1:6392/abc"),
        ("REDIS_URL", "127.0.0.1:6379"),
        # A port that is no port: refused only when a client connected.
        ("CELERY_BROKER_URL", "redis://:brokerPW456@127.0.0.1:63x79/0"),
        ("CACHE_URL", "redis://:brokerPW456@127.0.0.1:99999/1"),
        ("DATABASE_URL", "postgres://u:brokerPW456@db:abc/momentum"),
        ("DATABASE_URL", "postgres://u:brokerPW456@db1:5432,db2:x/momentum"),
        ("EMAIL_URL", "smtp://u:brokerPW456@mail:port"),
    ],
)
def test_a_malformed_value_fails_at_startup_by_name(load_settings, name, value):
    with pytest.raises(ImproperlyConfigured, match=f"^{name} must be") as refused:
        load_settings("config.settings.base", **{name: value})

    assert "PW456" not in str(refused.value)  # nor the password it holds


def test_a_sweep_set_to_run_more_often_expires_before_its_next_tick(load_settings):
    """A tick a busy worker has not started by the next is dropped, not left
    to pile up behind it: its expiry follows the period an operator sets."""
    base = load_settings(
        "config.settings.base",
        MOMENTUM_SOURCES_TICK_SECONDS="60",
        MOMENTUM_JUDGE_SWEEP_SECONDS="3600",
    )

    sweeps = {
        name: (entry["schedule"], entry["options"]["expires"])
        for name, entry in base.CELERY_BEAT_SCHEDULE.items()
        if isinstance(entry["schedule"], int)
    }
    assert sweeps["enqueue-due-sources"] == (60, 54)
    assert sweeps["judge-topics"] == (3600, 3240)
    assert all(expires < period for period, expires in sweeps.values())


def test_values_are_read_as_their_consumers_take_them(load_settings):
    base = load_settings(
        "config.settings.base",
        MOMENTUM_API_ANON_RATE="60/min",
        MOMENTUM_ASK_RATE="10/h",
        DJANGO_LOG_LEVEL="debug",
    )

    assert base.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["anon"] == "60/minute"
    assert base.MOMENTUM_ASK_RATE == "10/hour"
    assert base.LOGGING["root"]["level"] == "DEBUG"


def test_a_sender_with_its_name_quoted_is_taken(load_settings):
    base = load_settings(
        "config.settings.base",
        MOMENTUM_FROM_EMAIL='"Momentum, Inc" <digest@example.org>',
    )

    assert base.DEFAULT_FROM_EMAIL == '"Momentum, Inc" <digest@example.org>'


@pytest.mark.parametrize("method", list(AppSettings.EmailVerificationMethod))
def test_every_email_verification_of_allauth_is_taken(load_settings, method):
    base = load_settings(
        "config.settings.base", MOMENTUM_EMAIL_VERIFICATION=method.value.upper()
    )

    assert method.value == base.ACCOUNT_EMAIL_VERIFICATION


@pytest.mark.parametrize("name", sorted(settings_variables()))
def test_every_variable_is_read_or_refused_by_name(load_settings, name):
    """No malformed value reaches a request, or fails with a bare ValueError."""
    refusals = []
    for value in ["not a value!", "-1", "x:/"]:
        try:
            load_settings("config.settings.base", **{name: value})
        except ImproperlyConfigured as refused:
            refusals.append(str(refused))

    assert [text for text in refusals if not text.startswith(name)] == []


def test_the_bench_settings_load_without_a_broker_and_run_tasks_in_process():
    """bench.pages and bench.scale serve production settings with no broker."""
    variables = {
        name: value for name, value in PRODUCTION.items() if name != "CELERY_BROKER_URL"
    }
    shown = subprocess.run(
        [
            sys.executable,
            "-c",
            "import bench.settings as s; "
            "print(s.CELERY_TASK_ALWAYS_EAGER, repr(s.CELERY_BROKER_URL), "
            "repr(s.REDIS_URL))",
        ],
        env={"PATH": os.environ["PATH"], "PYTHONPATH": str(BASE_DIR), **variables},
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        check=True,
    ).stdout

    assert shown.split() == ["True", "''", "''"]


def test_beat_sends_a_heartbeat_to_each_queue_a_worker_takes(load_settings):
    """The judge's queue only with a judge, AskPDF's fetch queue only with a
    folder to fetch PDFs into: with none, no worker takes it, and heartbeats
    sent there would pile up in Redis."""
    plain = load_settings("config.settings.base")
    judged = load_settings(
        "config.settings.base",
        MOMENTUM_JUDGE_API_BASE="http://127.0.0.1:1/v1",
        MOMENTUM_JUDGE_MODEL="judge",
        MOMENTUM_ASK_PDF_DIR="/srv/momentum/pdfs",
    )

    def heartbeats(settings: ModuleType) -> dict[str, str]:
        return {
            entry["args"][0]: entry["options"]["queue"]
            for name, entry in settings.CELERY_BEAT_SCHEDULE.items()
            if name.startswith("heartbeat-")
        }

    queues = ("ingest", "tagging", "email")
    assert heartbeats(plain) == {q: q for q in queues}
    assert heartbeats(judged) == {q: q for q in (*queues, "fetch", "judge")}
    assert set(heartbeats(judged)) == {
        route["queue"] for route in judged.CELERY_TASK_ROUTES.values()
    }


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("DATABASE_URL", "sqlite://:memory:"),
        ("DATABASE_URL", "postgres://u:pw@db1:5432,db2:5433/momentum"),
        ("CACHE_URL", "redis://:pw@[::1]:6379/1"),
    ],
)
def test_addresses_without_a_port_or_with_several_are_taken(load_settings, name, value):
    """The port check read SQLite's in-memory address as a host whose port
    is "memory:"."""
    load_settings("config.settings.base", **{name: value})
