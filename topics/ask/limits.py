"""The question rate limit: per signed-in user, else per address, in Django's cache.

A fixed window per hour (MOMENTUM_ASK_RATE, "60/hour"): cheap, one atomic
increment in Redis, and shared by every web process. Pages, streams and the API
draw on the same budget.
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


def parse_rate(text: str) -> Rate:
    """ "60/hour" as Rate(60, 3600)."""
    count, _, period = text.partition("/")
    try:
        rate = Rate(int(count), PERIODS[period.strip().rstrip("s")])
    except (ValueError, KeyError) as exc:
        raise ImproperlyConfigured(
            f"MOMENTUM_ASK_RATE must be like 60/hour, not {text!r}"
        ) from exc
    if rate.count < 1:
        raise ImproperlyConfigured("MOMENTUM_ASK_RATE must allow one question")
    return rate


def client_key(request: HttpRequest) -> str:
    """Whom a question counts against: the user, or the visitor's address."""
    if request.user.is_authenticated:
        return f"user:{request.user.pk}"
    return f"addr:{request.META.get('REMOTE_ADDR', '')}"


def take(key: str, rate: Rate | None = None) -> int:
    """Count one question for `key`: 0 if allowed, else seconds until allowed."""
    rate = rate or parse_rate(settings.MOMENTUM_ASK_RATE)
    now = int(time.time())
    window = now // rate.seconds
    cache_key = f"ask:rate:{key}:{window}"
    # add() then incr(): both atomic in Redis, so concurrent requests each count.
    cache.add(cache_key, 0, rate.seconds + 60)
    try:
        used = cache.incr(cache_key)
    except ValueError:  # expired between add and incr
        cache.set(cache_key, 1, rate.seconds + 60)
        used = 1
    if used <= rate.count:
        return 0
    return rate.seconds - now % rate.seconds
