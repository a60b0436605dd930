"""Rate limits on readers' actions on topics, with django-ratelimit's counters in
the shared cache (one atomic increment per use, every web process together).

Questions (topics.ask) count per signed-in user, else per visitor address
(accounts.adapter.client_ip, which reads X-Forwarded-For behind
MOMENTUM_TRUSTED_PROXIES proxies), at MOMENTUM_ASK_RATE ("60/hour"); pages,
streams and the API draw on the same budget. Relevance flags (topics.flags) pass
their own rate and prefix. While the cache is down, limits let everything
through (RATELIMIT_FAIL_OPEN, config.cache).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest
from django_ratelimit.core import get_usage

from accounts.adapter import client_ip

PERIODS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}


@dataclass(frozen=True)
class Rate:
    count: int
    seconds: int


def parse_rate(text: str, setting: str = "MOMENTUM_ASK_RATE") -> Rate:
    """ "60/hour" as Rate(60, 3600); `setting` names the source in errors."""
    count, _, period = text.partition("/")
    try:
        rate = Rate(int(count), PERIODS[period.strip().rstrip("s")])
    except (ValueError, KeyError) as exc:
        raise ImproperlyConfigured(
            f"{setting} must be like 60/hour, not {text!r}"
        ) from exc
    if rate.count < 1:
        raise ImproperlyConfigured(f"{setting} must allow at least one per period")
    return rate


def client_key(request: HttpRequest) -> str:
    """Whom a question counts against: the user, or the visitor's address."""
    if request.user.is_authenticated:
        return f"user:{request.user.pk}"
    return f"addr:{client_ip(request)}"


def take(key: str, rate: Rate | None = None, *, prefix: str = "ask") -> int:
    """Count one use for `key` under `prefix` (by default a question at
    MOMENTUM_ASK_RATE): 0 if allowed, else seconds until allowed."""
    return _usage(key, rate, prefix, count=True)


def wait(key: str, rate: Rate | None = None, *, prefix: str = "ask") -> int:
    """Seconds until `key` may act again under `prefix` (0: now); counts nothing."""
    return _usage(key, rate, prefix, count=False)


def _usage(key: str, rate: Rate | None, prefix: str, *, count: bool) -> int:
    rate = rate or parse_rate(settings.MOMENTUM_ASK_RATE)
    # The key is ours, so no request is needed: any method counts.
    usage = get_usage(
        None,
        group=prefix,
        key=lambda group, request: key,
        rate=(rate.count, rate.seconds),
        increment=count,
    )
    if usage is None:  # the cache is down: the limit is open
        return 0
    limited = usage["should_limit"] if count else usage["count"] >= rate.count
    return max(usage["time_left"], 1) if limited else 0
