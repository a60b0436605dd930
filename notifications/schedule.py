"""When digests are due: periods in each user's own time zone.

A period starts at a send time (the user's hour on their weekday, or every day
for daily digests, in their time zone) and runs to the next one. It is named by
the local day of its send time, which with the user makes the outbox key. At any
instant the *current* period is the one whose send time is the latest at or
before that instant, so a tick that runs late (workers down) still opens it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import time
from datetime import timedelta
from zoneinfo import ZoneInfo

from accounts.models import DigestPreferences
from accounts.models import reader_zone

logger = logging.getLogger(__name__)

WEEKLY = DigestPreferences.Frequency.WEEKLY
DAILY = DigestPreferences.Frequency.DAILY
OFF = DigestPreferences.Frequency.OFF


@dataclass(frozen=True)
class Schedule:
    """A user's digest timing; the defaults are DigestPreferences' own."""

    frequency: str = WEEKLY
    weekday: int = DigestPreferences.Weekday.MONDAY
    hour: int = 8
    time_zone: str = "UTC"

    @classmethod
    def of(cls, preferences: DigestPreferences) -> Schedule:
        return cls(
            preferences.frequency,
            preferences.weekday,
            preferences.hour,
            preferences.time_zone,
        )

    @property
    def step(self) -> timedelta:
        return timedelta(days=1 if self.frequency == DAILY else 7)

    @property
    def zone(self) -> ZoneInfo:
        return reader_zone(self.time_zone)

    def send_time(self, day: date) -> datetime:
        """The UTC instant of this local day at the user's hour. In a DST gap the
        hour does not exist and zoneinfo moves it on by the gap (02:00 → 03:00)."""
        local = datetime.combine(day, time(self.hour), tzinfo=self.zone)
        return local.astimezone(UTC)

    def current_period(self, at: datetime) -> tuple[date, datetime]:
        """(local day, UTC send time) of the latest send time at or before `at`."""
        day = at.astimezone(self.zone).date()
        if self.frequency == WEEKLY:
            day -= timedelta(days=(day.weekday() - self.weekday) % 7)
        due = self.send_time(day)
        if due > at:
            day -= self.step
            due = self.send_time(day)
        return day, due

    def next_send_time(self, at: datetime) -> datetime:
        """The first send time after `at`."""
        day, _ = self.current_period(at)
        return self.send_time(day + self.step)
