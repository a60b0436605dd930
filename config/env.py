"""The one place settings read the environment.

django-environ parses URL-shaped values; `secret()` adds Docker-style `<NAME>_FILE`
support; malformed values fail at start-up with ImproperlyConfigured.
"""

from __future__ import annotations

from pathlib import Path

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
