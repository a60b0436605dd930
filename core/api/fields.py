"""Input fields that accept exactly what the OpenAPI schema says they accept.

DRF's own fields are lenient where the schema is strict: CharField turns 7 into
"7" and trims before it counts the length, BooleanField reads "yes" and 1,
IntegerField reads "7" and 7.0, a list field reads a dict's keys, DateField
reads 20260601. A client that follows the schema never notices, but the schema
then lies about what is refused (tests/api/test_schema.py checks both ways).

JSON bodies and query strings differ: in a body a number is a number, in a
query string everything is text. So `Boolean`/`Integer` read JSON values and
`QueryBoolean`/`QueryInteger` read the text of a query parameter.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import date
from typing import Any

from django.core.validators import MaxValueValidator
from django.core.validators import MinValueValidator
from django.core.validators import RegexValidator
from django.db import models
from rest_framework import serializers
from rest_framework.exceptions import ErrorDetail

from core.text import CONTROL
from core.text import SHOWABLE
from core.text import SPACE

# No NUL (PostgreSQL cannot store it) and at least one other character.
NOT_BLANK = RegexValidator(
    rf"\A[^\x00]*[^{SPACE}][^\x00]*\Z",
    message="This field may not be blank.",
    code="blank",
)
NO_NUL_PATTERN = r"^[^\u0000]*$"
# Not blank, and no control character (core.text) anywhere.
NO_CONTROL = RegexValidator(
    rf"\A[^{CONTROL}]*[^{SPACE}{CONTROL}][^{CONTROL}]*\Z",
    message="This field may not be blank or hold control characters.",
    code="invalid",
)
SLUG_PATTERN = r"\A[-a-zA-Z0-9_]+\Z"


class Text(serializers.CharField):
    """A string, checked as sent (as the schema's lengths and pattern read it),
    then stored without surrounding whitespace. A `pattern` (Python syntax, and
    ending in \\Z: $ also matches before a final newline) is the schema's pattern
    too, so it must refuse NUL and blanks itself."""

    def __init__(
        self, *, pattern: str | RegexValidator | None = None, **kwargs: Any
    ) -> None:
        kwargs["trim_whitespace"] = False
        super().__init__(**kwargs)
        # drf-spectacular writes the first RegexValidator as the schema's pattern.
        if isinstance(pattern, str):
            pattern = RegexValidator(pattern)
        if pattern is not None:
            self.validators.insert(0, pattern)
        elif not self.allow_blank:
            # A model field's SHOWABLE rule joins "not blank" in the one pattern.
            showable = SHOWABLE in self.validators
            self.validators.insert(0, NO_CONTROL if showable else NOT_BLANK)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return data

    def run_validation(self, data: Any = serializers.empty) -> Any:
        value = super().run_validation(data)
        return value.strip() if isinstance(value, str) else value


class Slug(Text):
    """Letters, digits, hyphens and underscores, as Django's slugs."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.pop("allow_unicode", None)  # ModelSerializer's, for DRF's SlugField
        super().__init__(pattern=SLUG_PATTERN, **kwargs)


class Boolean(serializers.BooleanField):
    """JSON true or false, nothing else."""

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class QueryBoolean(serializers.BooleanField):
    """The query-string form of a boolean: `true` or `false`."""

    def to_internal_value(self, data: object) -> bool:
        if data not in ("true", "false"):
            self.fail("invalid", input=data)
        return data == "true"


class Integer(serializers.IntegerField):
    """A JSON integer: not a string of digits, a float or a boolean."""

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return data


class QueryInteger(serializers.IntegerField):
    """The query-string form of an integer: ASCII digits, optionally signed."""

    DIGITS = re.compile(r"-?[0-9]{1,18}")

    def to_internal_value(self, data: Any) -> int:
        if not isinstance(data, str) or not self.DIGITS.fullmatch(data):
            self.fail("invalid")
        return int(data)


class QueryDate(serializers.DateField):
    """A day as YYYY-MM-DD (the schema's `format: date`), nothing looser."""

    DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
    default_error_messages = {
        # Written right, but 2026-02-30: not "wrong format".
        "no_such_day": "{value} is written as a date, but there is no such day.",
    }

    def to_internal_value(self, value: Any) -> date:
        if not (isinstance(value, str) and self.DAY.fullmatch(value)):
            self.fail("invalid", format="YYYY-MM-DD")
        try:
            return date.fromisoformat(value)
        except ValueError:
            self.fail("no_such_day", value=value)


class Choice(serializers.ChoiceField):
    """One of the choices, of the choice's own type (3 is a weekday, "3" not).
    The value refused is named as sent, in JSON: DRF quoted 7 as "7"."""

    default_error_messages = {"invalid_choice": "{input} is not a valid choice."}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # A model field's range (0 to 32767 for a weekday) beside the choices
        # only widened the schema's enum with a minimum and maximum.
        self.validators = [
            validator
            for validator in self.validators
            if not isinstance(validator, MinValueValidator | MaxValueValidator)
        ]

    def to_internal_value(self, data: Any) -> Any:
        chosen = [v for v in self.choices if type(v) is type(data) and v == data]
        if not chosen:
            self.fail(
                "invalid_choice",
                input=json.dumps(data, ensure_ascii=False, default=str),
            )
        return chosen[0]


class KeptChoice(Choice):
    """A choice whose stored value may have left the choices since it was
    chosen (a time zone a tzdata upgrade moved out): written as one of them,
    read as stored. The schema lists the choices for writes only
    (core.api.schema), so that a client's types do not refuse what it reads."""


class NamedRow(serializers.SlugRelatedField[Any]):
    """A row named by a string (its slug or code). A name holding NUL is no such
    row: PostgreSQL refuses NUL in text, which would otherwise be a 500."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        rows = kwargs.get("queryset")
        if rows is not None:
            # DRF's "Object with slug=x does not exist.", in the client's words.
            name = rows.model._meta.verbose_name
            self.error_messages["does_not_exist"] = (
                f"No {name} has the {self.slug_field} “{{value}}”."
            )

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, str):
            self.fail("invalid")
        if "\x00" in data:
            self.fail("does_not_exist", slug_name=self.slug_field, value=data)
        return super().to_internal_value(data)


class NamedRows(serializers.ManyRelatedField):
    """A JSON array of names; DRF's reads any iterable, a dict by its keys."""

    def to_internal_value(self, data: Any) -> list[Any]:
        if not isinstance(data, list):
            self.fail("not_a_list", input_type=type(data).__name__)
        return list(super().to_internal_value(data))


def named_rows(**kwargs: Any) -> NamedRows:
    """Many rows named by strings; takes NamedRow's arguments."""
    list_kwargs = {
        key: kwargs.pop(key)
        for key in ("required", "help_text", "allow_empty")
        if key in kwargs
    }
    return NamedRows(child_relation=NamedRow(**kwargs), **list_kwargs)


class KnownFieldsOnly:
    """A request body's serializer that refuses keys naming no field it takes,
    as query parameters are refused (StrictQueryParams): a typo such as
    "frequncy" was dropped, and the request answered 200 with nothing changed.
    The schema says so (additionalProperties false, core.api.schema)."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            fields = self.fields  # type: ignore[attr-defined]  # a Serializer's
            refused = {
                name: [
                    ErrorDetail("Read-only: it cannot be changed.", "read_only")
                    if name in fields
                    else ErrorDetail("Unknown field.", "unknown_field")
                ]
                for name in data
                if name not in fields or fields[name].read_only
            }
            if refused:
                raise serializers.ValidationError(refused)
        return super().to_internal_value(data)  # type: ignore[misc]  # a Serializer's


class StrictSerializer(KnownFieldsOnly, serializers.Serializer[Any]):
    """A request body read as the fields above say, and no other key."""


class StrictModelSerializer(KnownFieldsOnly, serializers.ModelSerializer[Any]):
    """Builds the fields above for model fields (ModelSerializer builds DRF's),
    and reads no key it lacks (KnownFieldsOnly)."""

    serializer_field_mapping = {
        **serializers.ModelSerializer.serializer_field_mapping,
        models.CharField: Text,
        models.TextField: Text,
        models.SlugField: Slug,
        models.BooleanField: Boolean,
        models.IntegerField: Integer,
        models.SmallIntegerField: Integer,
        models.PositiveIntegerField: Integer,
        models.PositiveSmallIntegerField: Integer,
    }
    serializer_choice_field = Choice
