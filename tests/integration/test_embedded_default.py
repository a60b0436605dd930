"""The embedded default (no environment at all) and the production profile, each run
as a real process the way an operator would start it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.error import HTTPError
from urllib.request import urlopen

import pytest

from tests.integration.smtp_server import free_port
from tests.waiting import wait_for

BASE_DIR = Path(__file__).resolve().parents[2]
SERVICE_VARIABLES = {"DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "EMAIL_URL"}

PAGES = [
    "/",
    "/topics/",
    "/topics/rl-for-llm-agents/",
    "/papers/2607.21419/",
    "/search/?q=reinforcement+learning+agents",
    "/topics/rl-for-llm-agents/feed/",
    "/topics/rl-for-llm-agents/ask/?q=which+papers+use+tree+search",
    "/papers/2607.21419/ask/?q=what+is+proposed",
    "/api/v1/topics/",
    "/api/v1/papers/?topic=rl-for-llm-agents",
    "/accounts/login/",
    "/healthz",
    "/static/css/site.css",
    "/robots.txt",
    "/sitemap.xml",
    "/sitemap-papers.xml",
]


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def clean_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in SERVICE_VARIABLES and not key.startswith(("DJANGO_", "MOMENTUM_"))
    }
    env["MOMENTUM_VAR_DIR"] = str(tmp_path)
    env.update(extra)
    return env


@contextmanager
def make_run(env: dict[str, str], port: int) -> Iterator[list[str]]:
    """`make run PORT=port` as a person types it, until the site answers; yields
    the lines it printed so far. Stops the server and its reloader after."""
    server = subprocess.Popen(
        ["make", "run", f"PORT={port}"],
        cwd=BASE_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    printed: list[str] = []
    reader = threading.Thread(target=lambda: printed.extend(server.stdout), daemon=True)
    reader.start()
    try:

        def answers() -> bool:
            assert server.poll() is None, "".join(printed)
            return fetch(port, "/healthz")[0] == 200

        wait_for(answers, timeout=600, interval=1, message=lambda: "".join(printed))
        yield printed
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def fetch(port: int, path: str) -> tuple[int, str]:
    try:
        with urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as response:
            return response.status, response.read().decode()
    except HTTPError as error:
        return error.code, error.read().decode()
    except OSError:
        return 0, ""


@pytest.mark.sqlite
def test_make_run_serves_the_demo_on_the_port_it_is_given(tmp_path):
    """`make run PORT=…` with no environment at all: the demo loads, and every
    link the site gives (feeds, the printed admin address and commands) names
    that server, not port 8000 or example.com."""
    port = free_port()
    site = f"http://127.0.0.1:{port}"

    env = clean_env(tmp_path)
    with make_run(env, port) as printed:
        pages = {path: fetch(port, path) for path in PAGES}
        missing = fetch(port, "/no/such/page/")

    output = "".join(printed)
    assert {path: status for path, (status, _) in pages.items()} == dict.fromkeys(
        PAGES, 200
    )
    assert "25002 new" in output
    assert "Seed topics: 34" in output
    assert "RL for LLM Agents: 213 pins and 357 exclusions" in output
    assert "tried on your decisions the band was not drawn on: precision" in output
    assert "Similar papers: built for 25002 papers" in output
    assert 'id="similar"' in pages["/papers/2607.21419/"][1]
    assert f"admin@momentum.localhost / momentum-admin  ({site}/admin/)" in output
    feed = pages["/topics/rl-for-llm-agents/feed/"][1]
    assert feed.count(f'href="{site}/papers/') > 20
    assert "example.com" not in feed
    assert ":8000" not in output + feed
    # The sitemap and robots.txt, which names it, too.
    sitemaps = "".join(pages[path][1] for path in ["/robots.txt", "/sitemap.xml"])
    assert f"Sitemap: {site}/sitemap.xml" in sitemaps
    assert f"<loc>{site}/sitemap-authors.xml</loc>" in sitemaps
    papers = pages["/sitemap-papers.xml"][1]
    assert papers.count(f"<loc>{site}/papers/") > 1_000
    assert "example.com" not in sitemaps + papers
    assert ":8000" not in sitemaps + papers
    # The printed commands run as printed, and write links to this server.
    hint = next(line for line in printed if "digests run --at" in line).split()
    assert hint[:3] == [
        f"MOMENTUM_SITE_URL={site}",
        f"MOMENTUM_VAR_DIR={tmp_path}",
        ".venv/bin/python",
    ]
    # The demo serves the site's own 404, not Django's debug page.
    assert missing[0] == 404
    assert "There is nothing at this address" in missing[1]
    assert "URLconf" not in missing[1]
    assert (tmp_path / "db.sqlite3").exists()

    # The digest command printed, run as printed in another shell, writes the
    # reader's digest to var/mail with every link to this server.
    command = " ".join(hint).split("(writes it to")[0]
    shell = {key: value for key, value in env.items() if key != "MOMENTUM_VAR_DIR"}
    sent = subprocess.run(
        command, shell=True, cwd=BASE_DIR, env=shell, capture_output=True, text=True
    )
    assert sent.returncode == 0, sent.stderr
    assert "1 sent" in sent.stdout
    (mail,) = (tmp_path / "mail").iterdir()
    text = mail.read_text()
    assert f"{site}/unsubscribe/" in text
    assert "example.com" not in text
    assert ":8000" not in text

    again = manage("load_demo", env=env)
    assert again.returncode == 0, again.stderr
    assert "Demo corpus already loaded." in again.stdout
    assert "Similar papers: up to date." in again.stdout


def test_the_embedded_defaults_cache_keeps_a_readers_pages(tmp_path):
    """The in-process cache holds thousands of rows and versions: Django's
    default of 300 entries would drop the first of these (and a third of a
    page's rows at every page)."""
    keep = "from django.core.cache import cache; " + (
        "cache.set_many({f'row:{i}': 'x' * 2000 for i in range(10_000)}); "
        "print(cache.get('row:0') is not None)"
    )

    result = manage("shell", "--no-imports", "-c", keep, env=clean_env(tmp_path))

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"


SHARED_CACHE = "redis://127.0.0.1:6379/1"
PRODUCTION_KEY = "x" * 20 + "-a-long-random-production-secret-" + "y" * 20


def production_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return clean_env(
        tmp_path,
        DJANGO_SETTINGS_MODULE="config.settings.production",
        DJANGO_SECRET_KEY=PRODUCTION_KEY,
        DJANGO_ALLOWED_HOSTS="momentum.example.org",
        MOMENTUM_SITE_URL="https://momentum.example.org",
        CELERY_BROKER_URL="redis://127.0.0.1:6379/0",
        CACHE_URL=SHARED_CACHE,
        EMAIL_URL="smtp://mail.example.org:587",
        **extra,
    )


def test_production_profile_passes_the_deploy_check(tmp_path):
    env = production_env(tmp_path)

    result = manage("check", "--deploy", "--fail-level", "WARNING", env=env)

    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_production_profile_refuses_to_start_without_a_secret_key(tmp_path):
    env = clean_env(tmp_path, DJANGO_SETTINGS_MODULE="config.settings.production")

    result = manage("check", env=env)

    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY is required" in result.stderr


def test_secret_key_can_come_from_a_file(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("k3y-from-a-docker-secret-file-" + "0123456789abcdef" * 3 + "\n")
    env = production_env(tmp_path, DJANGO_SECRET_KEY_FILE=str(secret))
    del env["DJANGO_SECRET_KEY"]

    assert (
        manage("check", "--deploy", "--fail-level", "WARNING", env=env).returncode == 0
    )


def test_a_malformed_boolean_fails_at_startup(tmp_path):
    result = manage("check", env=clean_env(tmp_path, DJANGO_DEBUG="maybe"))

    assert result.returncode != 0
    assert "DJANGO_DEBUG must be true or false" in result.stderr


def test_a_malformed_site_url_fails_at_startup(tmp_path):
    result = manage(
        "check", env=clean_env(tmp_path, MOMENTUM_SITE_URL="127.0.0.1:8000/")
    )

    assert result.returncode != 0
    assert "MOMENTUM_SITE_URL must be an address" in result.stderr


def test_production_refuses_a_cache_each_process_would_keep_to_itself(tmp_path):
    # Set, but to a cache in each process (unset is refused with the others).
    env = production_env(tmp_path)
    env["CACHE_URL"] = "locmemcache://"

    result = manage("check", env=env)

    assert result.returncode != 0
    assert "CACHE_URL must name a shared cache in production" in result.stderr


def test_a_mistyped_production_switch_fails_at_startup(tmp_path):
    env = production_env(tmp_path, DJANGO_SECURE_SSL_REDIRECT="flase")

    result = manage("check", env=env)

    assert result.returncode != 0
    assert "DJANGO_SECURE_SSL_REDIRECT must be true or false" in result.stderr
