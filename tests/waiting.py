"""Waiting for a condition, never sleeping for a guessed time: one poll loop with
a deadline, for every test that waits on a worker, a server or a process."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(
    condition: Callable[[], T],
    timeout: float = 30.0,
    *,
    interval: float = 0.1,
    message: str | Callable[[], str] = "",
) -> T:
    """Poll `condition` until it returns something truthy, and return that. Past
    `timeout` seconds, fail with `message` (a callable is asked only then, so it
    can say what a process printed meanwhile)."""
    deadline = time.monotonic() + timeout
    while not (result := condition()):
        if time.monotonic() > deadline:
            said = message() if callable(message) else message
            raise AssertionError(
                said or f"timed out after {timeout}s waiting for {condition}"
            )
        time.sleep(interval)
    return result
