"""Options the project's Celery tasks share."""

from __future__ import annotations

from typing import Any

# A task past its soft limit is told so (SoftTimeLimitExceeded) and gets this
# long to stop before the worker kills it.
HARD_LIMIT_MARGIN = 5 * 60


def durable(time_limit: int | None = None) -> dict[str, Any]:
    """A task whose work must not be lost: acknowledged once it is done, so a
    worker killed midway leaves it to run again (it must be idempotent); told to
    stop after `time_limit` seconds, if given; its result ignored."""
    options: dict[str, Any] = {
        "ignore_result": True,
        "acks_late": True,
        "reject_on_worker_lost": True,
    }
    if time_limit is not None:
        options.update(
            soft_time_limit=time_limit, time_limit=time_limit + HARD_LIMIT_MARGIN
        )
    return options
