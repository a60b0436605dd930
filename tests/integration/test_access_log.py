"""The web command of the Procfile, run: its access log hides credentials."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shlex
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

from django.conf import settings

from config.access_log import HiddenCredentials
from tests.integration.smtp_server import free_port
from tests.waiting import wait_for

BASE_DIR = Path(__file__).resolve().parents[2]
SECRET = "s3cr3t-0123456789abcdef"
REQUEST_ID = "0123456789abcdef0123456789abcdef"


def web_command(port: int) -> list[str]:
    [line] = [
        line
        for line in (BASE_DIR / "Procfile").read_text().splitlines()
        if line.startswith("web:")
    ]
    line = line.removeprefix("web:").replace("${WEB_CONCURRENCY:-2}", "1")
    line = line.replace("0.0.0.0:${PORT:-8000}", f"127.0.0.1:{port}")
    command = shlex.split(line)
    return [str(Path(sys.executable).parent / command[0]), *command[1:]]


def fetch(url: str, **headers: str) -> None:
    with contextlib.suppress(urllib.error.HTTPError):  # any answer is logged
        urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30)


def test_the_access_log_hides_keys_tokens_and_those_in_the_referer(tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "access.log"
    env = {**os.environ, "PYTHONPATH": str(BASE_DIR)}
    with log.open("w") as out:
        server = subprocess.Popen(
            web_command(port),
            cwd=BASE_DIR,
            env=env,
            stdout=out,
            stderr=subprocess.DEVNULL,
        )
    try:
        wait_for(lambda: _answers(f"{base}/robots.txt"), timeout=60)
        fetch(f"{base}/feed/{SECRET}.atom")
        fetch(f"{base}/unsubscribe/{SECRET}/")
        fetch(f"{base}/accounts/confirm-email/{SECRET}/")
        fetch(f"{base}/accounts/password/reset/key/1-{SECRET}/")
        fetch(
            f"{base}/papers/2607.04713/",
            Referer=f"{base}/digest/preview/?digest=7&key={SECRET}",
        )
        fetch(f"{base}/digest/preview/?digest=7&key={SECRET}&x=1")
        fetch(f"{base}/feed/{SECRET}%2Eatom")  # routed as .atom
        fetch(f"{base}/search/?q=%22a%20b%22%0Ax")
        fetch(f"{base}/robots.txt", **{"X-Request-ID": REQUEST_ID})
        wait_for(lambda: log.read_text().count("\n") >= 10, timeout=30)
    finally:
        server.terminate()
        server.wait(timeout=30)

    text = log.read_text()
    assert SECRET not in text
    assert "GET /feed/[hidden].atom HTTP/1.1" in text
    assert "GET /digest/preview/?digest=7&key=[hidden]&x=1 HTTP/1.1" in text
    # Sent on to log in, the key in the address to come back to.
    assert "/accounts/login/?next=/digest/preview/?digest=7&key=[hidden]&x=1" in text
    # Whatever the address holds, the line stays one line, its quotes whole.
    assert text.count("\n") == len(text.splitlines())
    assert re.search(r'"GET /papers/2607\.04713/ .*"[^"]*key=\[hidden\]"', text)
    # Each line ends with its request's id, the one its other log lines carry.
    assert re.search(rf'"GET /robots\.txt HTTP/1\.1" 200 .* {REQUEST_ID}$', text, re.M)
    assert all(re.search(" [0-9a-f]{32}$", line) for line in text.splitlines())


def _answers(url: str) -> bool:
    try:
        fetch(url)
    except OSError:
        return False
    return True


def test_the_logs_hide_the_credentials_in_the_addresses_django_logs():
    """Django logs the address of every 4xx and 5xx answer: an unsubscribe
    link's 410, a feed's 404."""
    args = ("Gone", f"/unsubscribe/{SECRET}/")
    record = logging.LogRecord(
        "django.request", logging.WARNING, __file__, 1, "%s: %s", args, None
    )

    kept = HiddenCredentials().filter(record)

    assert kept
    assert record.getMessage() == "Gone: /unsubscribe/[hidden]/"
    console = settings.LOGGING["handlers"]["console"]
    assert "hidden" in console["filters"]
