"""The embedded default (no environment at all) and the production profile, each run
as a real process the way an operator would start it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BASE_DIR = Path(__file__).resolve().parents[2]
SERVICE_VARIABLES = {"DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "EMAIL_URL"}

PAGES_SCRIPT = """
import django
django.setup()
from django.test import Client
from django.db import connection
client = Client(SERVER_NAME='localhost')
urls = ["/", "/topics/", "/topics/rl-for-llm-agents/", "/papers/2607.21419/"]
urls += [
    "/search/?q=reinforcement+learning+agents",
    "/topics/rl-for-llm-agents/feed/",
    "/topics/rl-for-llm-agents/ask/?q=which+papers+use+tree+search",
    "/papers/2607.21419/ask/?q=what+is+proposed",
    "/api/v1/topics/",
    "/api/v1/papers/?topic=rl-for-llm-agents",
    "/accounts/login/",
    "/healthz",
]
for url in urls:
    response = client.get(url)
    print(url, response.status_code)
print("vendor", connection.vendor)
"""


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


@pytest.mark.sqlite
def test_make_run_steps_load_the_demo_and_serve_pages_on_sqlite(tmp_path):
    """What `make run` does before serving, with no environment at all."""
    env = clean_env(tmp_path)

    assert manage("migrate", "--noinput", env=env).returncode == 0
    first = manage("load_demo", env=env)
    again = manage("load_demo", env=env)

    assert first.returncode == 0, first.stderr
    assert "25002 new" in first.stdout
    assert "Seed topics: 34" in first.stdout
    assert "RL for LLM Agents: 213 pins and 357 exclusions" in first.stdout
    assert "cross-validated precision" in first.stdout
    assert "Demo admin:  admin@momentum.localhost / momentum-admin" in first.stdout
    assert again.returncode == 0, again.stderr
    assert "Demo corpus already loaded." in again.stdout
    pages = subprocess.run(
        [sys.executable, "-c", PAGES_SCRIPT],
        cwd=BASE_DIR,
        env={**env, "DJANGO_SETTINGS_MODULE": "config.settings.base"},
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert pages.returncode == 0, pages.stderr
    assert (tmp_path / "db.sqlite3").exists()
    assert pages.stdout.split("\n")[:-1] == [
        "/ 200",
        "/topics/ 200",
        "/topics/rl-for-llm-agents/ 200",
        "/papers/2607.21419/ 200",
        "/search/?q=reinforcement+learning+agents 200",
        "/topics/rl-for-llm-agents/feed/ 200",
        "/topics/rl-for-llm-agents/ask/?q=which+papers+use+tree+search 200",
        "/papers/2607.21419/ask/?q=what+is+proposed 200",
        "/api/v1/topics/ 200",
        "/api/v1/papers/?topic=rl-for-llm-agents 200",
        "/accounts/login/ 200",
        "/healthz 200",
        "vendor sqlite",
    ]


def test_production_profile_passes_the_deploy_check(tmp_path):
    env = clean_env(
        tmp_path,
        DJANGO_SETTINGS_MODULE="config.settings.production",
        DJANGO_SECRET_KEY="x" * 20 + "-a-long-random-production-secret-" + "y" * 20,
        DJANGO_ALLOWED_HOSTS="momentum.example.org",
    )

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
    env = clean_env(
        tmp_path,
        DJANGO_SETTINGS_MODULE="config.settings.production",
        DJANGO_SECRET_KEY_FILE=str(secret),
        DJANGO_ALLOWED_HOSTS="momentum.example.org",
    )

    assert (
        manage("check", "--deploy", "--fail-level", "WARNING", env=env).returncode == 0
    )


def test_a_malformed_boolean_fails_at_startup(tmp_path):
    result = manage("check", env=clean_env(tmp_path, DJANGO_DEBUG="maybe"))

    assert result.returncode != 0
    assert "DJANGO_DEBUG must be true or false" in result.stderr
