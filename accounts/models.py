from __future__ import annotations

import zoneinfo

from django.contrib.auth.models import AbstractUser
from django.contrib.auth.models import BaseUserManager
from django.db import models


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
    REQUIRED_FIELDS: list[str] = []

    objects = UserManager()  # type: ignore[misc]

    class Meta:
        ordering = ["email"]

    def __str__(self) -> str:
        return self.email


TIME_ZONE_CHOICES = [(name, name) for name in sorted(zoneinfo.available_timezones())]


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

    class Meta:
        verbose_name_plural = "digest preferences"
        constraints = [
            models.CheckConstraint(
                condition=models.Q(hour__lte=23), name="digest_hour_0_23"
            ),
            models.CheckConstraint(
                condition=models.Q(max_papers__gte=1, max_papers__lte=200),
                name="digest_max_papers_1_200",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user}: {self.get_frequency_display()}"
