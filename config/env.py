"""The one place settings read the environment.

django-environ parses URL-shaped values; `secret()` adds Docker-style `<NAME>_FILE`
support; malformed values fail at start-up with ImproperlyConfigured.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from urllib.parse import urlsplit

import environ
from celery.schedules import ParseException
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()


def secret(name: str, default: str | None = None) -> str | None:
    """Read `name`, or the contents of the file named by `<name>_FILE`."""
    path = env.str(f"{name}_FILE", default="")
    if path:
        try:
            return Path(path).read_text().strip()
        except OSError as exc:
            raise ImproperlyConfigured(
                f"{name}_FILE: cannot read {path}: {exc}"
            ) from exc
    return env.str(name, default=default)


def local_secret_key(path: Path) -> str:
    """The key kept in `path`, made (random, readable by the owner only) the first
    time; several processes starting at once end up with the same one."""
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first
        return path.read_text().strip()
    with os.fdopen(fd, "w") as handle:
        handle.write(secrets.token_urlsafe(50))
    return path.read_text().strip()


def strict_bool(name: str, default: bool) -> bool:
    """Like env.bool, but refuses values that are neither true nor false."""
    raw = env.str(name, default="").strip().lower()
    if not raw:
        return default
    if raw in {"1", "true", "yes", "on"}:
        return True
    if raw in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be true or false, not {raw!r}")


def cron_schedule(name: str, default: str) -> crontab:
    """A Celery crontab from a five-field cron string (minute hour day month
    weekday), refusing a malformed one."""
    raw = env.str(name, default=default)
    fields = raw.split()
    if len(fields) != 5:
        raise ImproperlyConfigured(f"{name} must have five cron fields, not {raw!r}")
    minute, hour, day_of_month, month_of_year, day_of_week = fields
    try:
        return crontab(
            minute=minute,
            hour=hour,
            day_of_month=day_of_month,
            month_of_year=month_of_year,
            day_of_week=day_of_week,
        )
    except (ValueError, ParseException) as exc:
        raise ImproperlyConfigured(f"{name}: {exc}") from exc


def site_url(name: str, default: str) -> str:
    """An absolute http(s) address with a host and no path, without the final "/"."""
    raw = env.str(name, default=default).strip().rstrip("/")
    parts = urlsplit(raw)
    if parts.scheme not in {"http", "https"} or not parts.hostname or parts.path:
        raise ImproperlyConfigured(
            f"{name} must be an address such as https://momentum.example.org, "
            f"not {raw!r}"
        )
    return raw
