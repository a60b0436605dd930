"""The ask form: a question, and for topics an optional window of days."""

from __future__ import annotations

from datetime import date
from typing import Any
from typing import cast

from django import forms
from django.http import QueryDict
from django.utils.dateformat import format as format_date

MAX_QUESTION = 500
WEEKS = [
    ("", "Any time"),
    ("4", "Last 4 weeks"),
    ("12", "Last 12 weeks"),
    ("52", "Last year"),
]
# The window of fixed dates a link gave (since, until: a recent question's), as
# one more choice of `weeks`, so that asking again from the form keeps it.
DATES = "dates"


class AskForm(forms.Form):
    q = forms.CharField(
        label="Question",
        max_length=MAX_QUESTION,
        # A page without a question shows the form; the browser asks for one.
        required=False,
        widget=forms.SearchInput(attrs={"required": True}),
        error_messages={
            "max_length": f"Ask in at most {MAX_QUESTION} characters, please."
        },
    )
    weeks = forms.ChoiceField(label="Papers from", choices=WEEKS, required=False)
    since = forms.DateField(required=False, input_formats=["%Y-%m-%d"])
    until = forms.DateField(required=False, input_formats=["%Y-%m-%d"])

    def __init__(
        self, data: QueryDict | None = None, *, placeholder: str = "", **kwargs: Any
    ) -> None:
        # The form carries the dates along (hidden) while they are a choice.
        self.dates = _dates(data) if data is not None else ""
        if data is not None and self.dates and "weeks" not in data:
            data = data.copy()  # a link with dates only: they hold
            data["weeks"] = DATES
        super().__init__(data, **kwargs)
        self.fields["q"].widget.attrs["placeholder"] = placeholder
        if self.dates:
            weeks = cast(forms.ChoiceField, self.fields["weeks"])
            weeks.choices = [*WEEKS, (DATES, self.dates)]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        assert data is not None  # Form.clean returns cleaned_data
        weeks = data.get("weeks")
        if weeks != DATES:  # the dates carried along are not the window chosen
            data["since"] = data["until"] = None
        data["weeks"] = int(weeks) if weeks and weeks != DATES else None
        since, until = data.get("since"), data.get("until")
        if since and until and since > until:
            raise forms.ValidationError("The window starts after it ends.")
        return data

    @property
    def question(self) -> str:
        return (self.cleaned_data.get("q") or "").strip() if self.is_bound else ""


def _dates(data: QueryDict) -> str:
    """The window of the dates given, as its choice reads, or "" without one."""
    since, until = (_day(data.get(name)) for name in ("since", "until"))
    if since and until:
        return f"{_shown(since)} to {_shown(until)}"
    if since:
        return f"{_shown(since)} onward"
    return f"Up to {_shown(until)}" if until else ""


def _day(value: object) -> date | None:
    try:
        return date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None  # the field says what is wrong with it


def _shown(day: date) -> str:
    return format_date(day, "M j, Y")
