"""The ask form: a question, and for topics an optional window of days."""

from __future__ import annotations

from typing import Any

from django import forms

MAX_QUESTION = 500
WEEKS = [
    ("", "Any time"),
    ("4", "Last 4 weeks"),
    ("12", "Last 12 weeks"),
    ("52", "Last year"),
]


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
    weeks = forms.TypedChoiceField(
        label="Papers from", choices=WEEKS, coerce=int, required=False, empty_value=None
    )
    since = forms.DateField(required=False, input_formats=["%Y-%m-%d"])
    until = forms.DateField(required=False, input_formats=["%Y-%m-%d"])

    def __init__(self, *args: Any, placeholder: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["q"].widget.attrs["placeholder"] = placeholder

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        assert data is not None  # Form.clean returns cleaned_data
        since, until = data.get("since"), data.get("until")
        if since and until and since > until:
            raise forms.ValidationError("The window starts after it ends.")
        return data

    @property
    def question(self) -> str:
        return (self.cleaned_data.get("q") or "").strip() if self.is_bound else ""
