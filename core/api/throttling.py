"""The API's throttles (DEFAULT_THROTTLE_CLASSES): DRF's, with a wait for every 429.

DRF's wait() spreads the window's remaining time over the calls left, and when
none are left, a caller with more calls in the window than the rate allows (the
rate was lowered since they made them), it gives no wait at all: the 429 came
without Retry-After until enough of those calls had aged out.
"""

from __future__ import annotations

from rest_framework import throttling


class ExactWait:
    """wait(), asked once allow_request refused, is when the caller may call
    again: once the call that keeps it at the rate leaves the window. History
    is newest first; with a full window of exactly the rate's calls, that call
    is the oldest, and the wait the one DRF gives."""

    history: list[float]
    now: float
    duration: int
    num_requests: int

    def wait(self) -> float:
        if not self.history:  # a rate of none per period
            return float(self.duration)
        blocking = self.history[min(self.num_requests, len(self.history)) - 1]
        return max(blocking + self.duration - self.now, 1.0)


class AnonRateThrottle(ExactWait, throttling.AnonRateThrottle):
    pass


class UserRateThrottle(ExactWait, throttling.UserRateThrottle):
    pass
