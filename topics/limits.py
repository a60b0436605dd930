"""Fixed-window rate limits in Django's cache, for readers' actions on topics.

Questions (topics.ask) count per signed-in user, else per address
(MOMENTUM_ASK_RATE, "60/hour"); pages, streams and the API draw on the same
budget. Relevance flags (topics.flags) pass their own rate and key prefix. A fixed
window is cheap, one atomic increment in Redis, and shared by every web process.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest

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
    return f"addr:{request.META.get('REMOTE_ADDR', '')}"


def take(key: str, rate: Rate | None = None, *, prefix: str = "ask") -> int:
    """Count one use for `key` under `prefix` (by default a question at
    MOMENTUM_ASK_RATE): 0 if allowed, else seconds until allowed."""
    rate = rate or parse_rate(settings.MOMENTUM_ASK_RATE)
    now = int(time.time())
    window = now // rate.seconds
    cache_key = f"{prefix}:rate:{key}:{window}"
    # add() then incr(): both atomic in Redis, so concurrent requests each count.
    cache.add(cache_key, 0, rate.seconds + 60)
    try:
        used = cache.incr(cache_key)
    except ValueError:  # expired between add and incr
        cache.set(cache_key, 1, rate.seconds + 60)
        used = 1
    if used <= rate.count:
        return 0
    return seconds_left(rate, now)


def seconds_left(rate: Rate, now: int | None = None) -> int:
    """Seconds until the current window ends and every budget is full again."""
    now = int(time.time()) if now is None else now
    return rate.seconds - now % rate.seconds
