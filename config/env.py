"""The one place settings read the environment.

django-environ parses URL-shaped values; `secret()` adds Docker-style `<NAME>_FILE`
support; malformed values fail at start-up with ImproperlyConfigured naming the
variable. An empty value is no value: env files (.env.example) write `NAME=`.
"""

from __future__ import annotations

import logging
import math
import os
import re
import secrets
import string
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from typing import TypeVar
from urllib.parse import urlsplit

import environ
from celery.schedules import ParseException
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured
from django.core.mail.message import sanitize_address

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()

# A rate's units, by what they may be written as: DRF's throttles read the
# first letter of "minute", topics.limits the word, so rate() writes the word.
RATE = re.compile(
    r"(\d+)/(s|m|h|d|(?:sec|min|second|minute|hour|day)s?)", re.ASCII | re.IGNORECASE
)
UNITS = {"s": "second", "m": "minute", "h": "hour", "d": "day"}


def given(name: str, default: str) -> str:
    """`name`'s value, or `default` when it is unset or empty."""
    return env.str(name, default="").strip() or default


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
    raw = given(name, default)
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


def every(name: str, default: int) -> dict[str, Any]:
    """A beat entry's schedule of every `name` seconds, which expires just
    before its next tick: one a busy worker has not started by then is
    dropped, not piled up behind it."""
    seconds = integer(name, default)
    if seconds < 1:
        raise ImproperlyConfigured(f"{name} must be 1 or more, not {seconds}")
    # Celery takes an expiry of 0 as expired at once: a tick would never run.
    return {"schedule": seconds, "options": {"expires": max(1, seconds * 9 // 10)}}


def site_url(name: str, default: str) -> str:
    """An absolute http(s) address with a host and no path, without the final "/"."""
    raw = given(name, default).rstrip("/")
    parts = urlsplit(raw)
    if parts.scheme not in {"http", "https"} or not parts.hostname or parts.path:
        raise ImproperlyConfigured(
            f"{name} must be an address such as https://momentum.example.org, "
            f"not {raw!r}"
        )
    return raw


def url_template(name: str, default: str, field: str) -> str:
    """An http(s) address holding `{field}` and no other, which the code fills
    with str.format: a misspelt field fails here, not in a worker's task."""
    raw = given(name, default)
    try:
        fields = {part[1] for part in string.Formatter().parse(raw) if part[1]}
        parts = urlsplit(raw.format(**{field: "x"})) if fields == {field} else None
    except (ValueError, IndexError):
        parts = None
    if parts is None or parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ImproperlyConfigured(
            f"{name} must be an http(s) address with {{{field}}} in it, not {raw!r}"
        )
    return raw


def chat_service(base_name: str, model_name: str) -> tuple[str, str]:
    """An OpenAI-compatible endpoint's address and model, both or neither
    (neither: the feature works without one). One without the other would
    leave it off without a word."""
    base, model = given(base_name, ""), given(model_name, "")
    if not base and not model:
        return "", ""
    if not base:
        raise ImproperlyConfigured(f"{model_name} must be set with {base_name}")
    parts = urlsplit(base)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ImproperlyConfigured(
            f"{base_name} must be an http(s) address such as "
            f"https://api.openai.com/v1, not {base!r}"
        )
    if not model:
        raise ImproperlyConfigured(f"{model_name} must be set with {base_name}")
    return base, model


def mail_address(name: str, default: str) -> str:
    """One sender's address, with or without a name ("Momentum <digest@host>").
    One the SMTP backend cannot read (an unquoted comma in the name, no "@")
    failed every message, and an account's mail, once its account was made."""
    raw = given(name, default)
    try:
        readable = "@" in sanitize_address(raw, "utf-8")
    except ValueError:
        readable = False
    if not readable:
        raise ImproperlyConfigured(
            f"{name} must be one address such as Momentum <digest@example.org> "
            f'(a name with a comma in quotes: "Momentum, Inc" <...>), not {raw!r}'
        )
    return raw


def redis_url(name: str, default: str = "") -> str:
    """A Redis server's address (redis:// or rediss://, a host, a database
    number), or "" when it is not set. A broker's address a worker cannot
    read it retries for ever, printing it, password and all; the error here
    names only the variable."""
    raw = given(name, default)
    if not raw:
        return ""
    parts = urlsplit(raw)
    try:
        host = parts.hostname
    except ValueError:
        host = None
    if (
        parts.scheme not in {"redis", "rediss"}
        or not host
        or not _ports_read(raw)
        or not re.fullmatch(r"(?:/\d*)?", parts.path)
    ):
        raise ImproperlyConfigured(
            f"{name} must be an address such as redis://:password@host:6379/0"
        )
    return raw


def service_url(name: str, default: str, schemes: Iterable[str]) -> str:
    """A service's address (DATABASE_URL, CACHE_URL, EMAIL_URL) in one of
    `schemes` (django-environ's Env.DB_SCHEMES...): django-environ reads any other
    as no engine at all. Errors show only the scheme: the address may hold a
    password."""
    raw = given(name, default)
    scheme = urlsplit(raw).scheme
    if scheme not in schemes:
        raise ImproperlyConfigured(
            f"{name} must be an address in one of the schemes "
            f"{', '.join(sorted(schemes))}, not {scheme!r}"
        )
    if not _ports_read(raw):
        raise ImproperlyConfigured(
            f"{name} must be an address whose port is a number from 0 to 65535"
        )
    return raw


def _ports_read(address: str) -> bool:
    """Whether each host's port in the address, if any, is a port number (a
    PostgreSQL address may list hosts: h1:5432,h2:5433). Read only when a
    client connects, a bad one failed there, naming no variable."""
    hosts = urlsplit(address).netloc.rpartition("@")[2]
    if hosts == ":memory:":  # SQLite's in-memory database: no host at all
        return True
    try:
        for host in hosts.split(","):
            urlsplit(f"//{host}").port  # noqa: B018  (reading it checks it)
    except ValueError:
        return False
    return True


Number = TypeVar("Number", int, float)


def integer(name: str, default: int) -> int:
    """A whole number, 0 or more: a count, a size or seconds."""
    return _number(name, default, int)


def number(name: str, default: float) -> float:
    """A finite number, 0 or more, such as 2.5 (seconds)."""
    return _number(name, default, float)


def _number(name: str, default: Number, kind: type[Number]) -> Number:
    raw = given(name, "")
    if not raw:
        return default
    try:
        value: Number | None = kind(raw)
    except ValueError:
        value = None
    if value is None or not 0 <= value < math.inf:  # also refuses nan
        what = "a whole number" if kind is int else "a number"
        raise ImproperlyConfigured(f"{name} must be {what}, 0 or more, not {raw!r}")
    return value


def rate(name: str, default: str) -> str:
    """A rate such as 60/minute (also 60/min or 60/m: second, minute, hour or
    day), written as 60/minute, the one form both DRF's throttles and
    topics.limits read."""
    raw = given(name, default)
    match = RATE.fullmatch(raw)
    if not match or int(match[1]) < 1:
        raise ImproperlyConfigured(
            f"{name} must be a rate such as 60/minute (per second, minute, hour "
            f"or day, at least 1), not {raw!r}"
        )
    return f"{int(match[1])}/{UNITS[match[2][0].lower()]}"


def log_level(name: str, default: str) -> str:
    """A logging level's name (DEBUG, INFO, WARNING, ERROR, CRITICAL), any case."""
    raw = given(name, default)
    if raw.upper() not in logging.getLevelNamesMapping():
        raise ImproperlyConfigured(
            f"{name} must be DEBUG, INFO, WARNING, ERROR or CRITICAL, not {raw!r}"
        )
    return raw.upper()


def choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    """One of `choices` (lower case), written in any case."""
    raw = given(name, default)
    if raw.lower() not in choices:
        raise ImproperlyConfigured(
            f"{name} must be one of {', '.join(choices)}, not {raw!r}"
        )
    return raw.lower()
