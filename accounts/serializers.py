"""Serializers for the caller's own account: profile, digest settings, API token."""

from __future__ import annotations

from typing import Any
from typing import cast

from django.core.validators import RegexValidator
from rest_framework import serializers
from rest_framework.authtoken.models import Token

from accounts.models import DIGEST_MAX_PAPERS
from accounts.models import TIME_ZONE_CHOICES
from accounts.models import DigestPreferences
from accounts.models import User
from core.api.fields import NO_CONTROL
from core.api.fields import KeptChoice
from core.api.fields import StrictModelSerializer

# NO_CONTROL, worded for a name that may be empty: "" is never checked by it
# (allow_blank), and the site lets a reader have no name.
NAME = RegexValidator(
    NO_CONTROL.regex,
    message="This field may be empty, but not whitespace alone, and may not "
    "hold control characters.",
    code="invalid",
)


class ProfileSerializer(StrictModelSerializer):
    """The caller's names; email, staff status and joining date are read-only."""

    class Meta:
        model = User
        fields = ["email", "first_name", "last_name", "is_staff", "date_joined"]
        read_only_fields = ["email", "is_staff", "date_joined"]
        # Blank is allowed ("" is the schema's other branch), control characters not.
        extra_kwargs = {
            "first_name": {"pattern": NAME},
            "last_name": {"pattern": NAME},
        }


class DigestPreferencesSerializer(StrictModelSerializer):
    """The digest settings; the same rules as the settings page's form
    (accounts.forms.DigestPreferencesForm)."""

    time_zone = KeptChoice(
        choices=TIME_ZONE_CHOICES,
        required=False,
        help_text="A zone of the tz database, which digests' hour is in. Read "
        "back as stored: a zone this server no longer knows (a tzdata upgrade "
        "moved it out) is read, and taken back unchanged, though no write may "
        "choose it.",
    )

    class Meta:
        model = DigestPreferences
        # The fields the settings form edits; new digest fields are added here
        # when they are added there.
        fields = ["frequency", "weekday", "hour", "time_zone", "max_papers"]
        extra_kwargs = {
            "hour": {"min_value": 0, "max_value": 23, "help_text": "In time_zone."},
            "weekday": {"help_text": "0 is Monday; for weekly digests."},
            "max_papers": {"min_value": 1, "max_value": DIGEST_MAX_PAPERS},
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A stored zone this server no longer knows (a tzdata upgrade) is taken
        # back as read, so that a client's read-then-write works; digests
        # read it as UTC meanwhile (accounts.models.reader_zone).
        stored = getattr(self.instance, "time_zone", None)
        field = cast(serializers.ChoiceField, self.fields["time_zone"])
        if stored and stored not in field.choices:
            field.choices = [*field.choices.items(), (stored, stored)]


class TokenStateSerializer(serializers.Serializer):
    exists = serializers.BooleanField()
    created = serializers.DateTimeField(allow_null=True)


class TokenKeySerializer(serializers.ModelSerializer):
    key = serializers.CharField(
        help_text="Send as `Authorization: Token <key>`. Shown only here, once."
    )

    class Meta:
        model = Token
        fields = ["key", "created"]
