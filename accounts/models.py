from __future__ import annotations

import logging
import zoneinfo
from functools import cache
from pathlib import Path
from typing import Any
from typing import ClassVar

from django.contrib.auth.models import AbstractUser
from django.contrib.auth.models import BaseUserManager
from django.db import models

logger = logging.getLogger(__name__)


class UserManager(BaseUserManager["User"]):
    use_in_migrations = True

    def _create_user(self, email: str, password: str | None, **fields: object) -> User:
        if not email:
            raise ValueError("An email address is required")
        user = self.model(email=self.normalize_email(email), **fields)
        user.set_password(password)
        user.save(using=self._db)
        return user

    def create_user(
        self, email: str, password: str | None = None, **fields: object
    ) -> User:
        fields.setdefault("is_staff", False)
        fields.setdefault("is_superuser", False)
        return self._create_user(email, password, **fields)

    def create_superuser(
        self, email: str, password: str | None = None, **fields: object
    ) -> User:
        fields.update(is_staff=True, is_superuser=True)
        return self._create_user(email, password, **fields)


class User(AbstractUser):
    """A Momentum account. The email address is the login; there is no username."""

    username = None  # type: ignore[assignment]
    email = models.EmailField("email address", unique=True)

    USERNAME_FIELD = "email"
    REQUIRED_FIELDS: ClassVar[list[str]] = []

    # An email login's manager, not AbstractUser's (which wants a username).
    objects: ClassVar[UserManager] = UserManager()  # type: ignore[assignment]

    # Not stored: whether the account was active when read (from_db) or last
    # saved, and whether that save ended its keys (accounts.passwords).
    stored_active: bool | None = None
    keys_ended = False

    class Meta:
        ordering = ["email"]

    def __str__(self) -> str:
        return self.email

    @classmethod
    def from_db(
        cls, db: str | None, field_names: Any, values: Any, **kwargs: Any
    ) -> Any:
        user = super().from_db(db, field_names, values, **kwargs)
        user.stored_active = user.__dict__.get("is_active")
        return user


# Not places a reader lives in: "localtime" is the server's own zone, and
# "Factory" names none.
NOT_PLACES = {"localtime", "Factory", "posixrules"}
TIME_ZONE_CHOICES = [
    (name, name) for name in sorted(zoneinfo.available_timezones() - NOT_PLACES)
]


def reader_zone(name: str) -> zoneinfo.ZoneInfo:
    """The zone of this name, or UTC when the server no longer knows it: a
    tzdata upgrade can move older names out (Debian's tzdata-legacy), and a
    stored one must not stop a reader's pages, mails or digests."""
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        logger.warning("unknown time zone %r: using UTC", name)
        return zoneinfo.ZoneInfo("UTC")


@cache
def listed_time_zones() -> list[str]:
    """The zones a reader picks from: UTC and one per country's region, by its
    name today (tz's zone.tab: Asia/Kolkata, 418 of them), not the names tz
    keeps for old ones (Asia/Calcutta, W-SU), which stay valid where a browser
    gave one. Every valid zone where zone.tab is not installed."""
    valid = {name for name, _ in TIME_ZONE_CHOICES}
    tables = [Path(directory) / "zone.tab" for directory in zoneinfo.TZPATH]
    for table in (path for path in tables if path.is_file()):
        rows = (line.split("\t") for line in table.read_text().splitlines())
        named = {row[2] for row in rows if len(row) > 2 and not row[0].startswith("#")}
        return ["UTC", *sorted(named & valid)]
    return sorted(valid)


# The most papers a digest may hold: more would pass the 102 KB of HTML after
# which Gmail clips an email, hiding the rest and the footer's Unsubscribe
# (tests/notifications/test_digest_size.py). The papers past it are counted
# and linked under "More new papers".
DIGEST_MAX_PAPERS = 50


class DigestPreferencesManager(models.Manager["DigestPreferences"]):
    def for_user(self, user: User) -> DigestPreferences:
        """The user's preferences: those stored, or (unsaved) the defaults for a
        user who never set any, so that reading them never writes."""
        try:
            return user.digest
        except self.model.DoesNotExist:
            return self.model(user=user)

    def stored_for(self, user: User) -> DigestPreferences:
        """The user's preferences row, created with the defaults if missing: for
        the writers (the settings form, the API, unsubscribe)."""
        preferences, _ = self.get_or_create(user=user)
        return preferences


class DigestPreferences(models.Model):
    """How and when one user wants the digest of their followed topics."""

    class Frequency(models.TextChoices):
        WEEKLY = "weekly", "Weekly"
        DAILY = "daily", "Daily"
        OFF = "off", "Off"

    class Weekday(models.IntegerChoices):
        MONDAY = 0, "Monday"
        TUESDAY = 1, "Tuesday"
        WEDNESDAY = 2, "Wednesday"
        THURSDAY = 3, "Thursday"
        FRIDAY = 4, "Friday"
        SATURDAY = 5, "Saturday"
        SUNDAY = 6, "Sunday"

    user = models.OneToOneField(User, on_delete=models.CASCADE, related_name="digest")
    frequency = models.CharField(
        max_length=10, choices=Frequency.choices, default=Frequency.WEEKLY
    )
    weekday = models.PositiveSmallIntegerField(
        choices=Weekday.choices, default=Weekday.MONDAY
    )
    hour = models.PositiveSmallIntegerField(default=8)
    time_zone = models.CharField(
        max_length=64, choices=TIME_ZONE_CHOICES, default="UTC"
    )
    max_papers = models.PositiveSmallIntegerField(default=30)
    # Unsubscribe links carry this; turning digests back on moves it on, so a
    # link in a digest from before no longer turns them off.
    link_generation = models.PositiveIntegerField(default=0, editable=False)

    objects = DigestPreferencesManager()

    class Meta:
        verbose_name_plural = "digest preferences"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(hour__lte=23), name="digest_hour_0_23"
            ),
            models.CheckConstraint(
                condition=models.Q(
                    max_papers__gte=1, max_papers__lte=DIGEST_MAX_PAPERS
                ),
                name="digest_max_papers_in_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user}: {self.get_frequency_display()}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        stored = getattr(self, "_stored_frequency", None)
        if stored == self.Frequency.OFF and self.frequency != self.Frequency.OFF:
            self.link_generation += 1
            if kwargs.get("update_fields") is not None:
                kwargs["update_fields"] = {*kwargs["update_fields"], "link_generation"}
        super().save(*args, **kwargs)
        self._stored_frequency = self.frequency

    @property
    def zone(self) -> zoneinfo.ZoneInfo:
        """What times are read in for this reader (`reader_zone`)."""
        return reader_zone(self.time_zone)

    @classmethod
    def from_db(
        cls, db: str | None, field_names: Any, values: Any, **kwargs: Any
    ) -> Any:
        # The frequency as stored, so save() can tell digests turned back on.
        preferences = super().from_db(db, field_names, values, **kwargs)
        preferences._stored_frequency = preferences.frequency
        return preferences


class FeedToken(models.Model):
    """The secret in the address of a reader's private Atom feed (accounts.feed_tokens).

    Neither the address nor anything that gives it is stored: the key is an HMAC
    of `nonce` under SECRET_KEY, re-made to show it on the settings page, and a
    request is matched by the key's SHA-256 `digest`. Rotating draws a new nonce
    (the old address dies); revoking deletes the row."""

    user = models.OneToOneField(
        User, on_delete=models.CASCADE, related_name="feed_token"
    )
    nonce = models.CharField(max_length=32)
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"Private feed of {self.user}"
