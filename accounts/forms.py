from __future__ import annotations

from typing import Any

from django import forms

from accounts.models import DigestPreferences
from accounts.models import User

HOUR_CHOICES = [(hour, f"{hour:02d}:00") for hour in range(24)]


class DigestPreferencesForm(forms.ModelForm):
    """The digest section of the settings page. New digest fields go in Meta.fields."""

    hour = forms.TypedChoiceField(
        choices=HOUR_CHOICES, coerce=int, label="Hour", help_text="In your time zone."
    )
    max_papers = forms.IntegerField(
        min_value=1, max_value=200, label="Papers per digest, at most"
    )

    class Meta:
        model = DigestPreferences
        fields = ["frequency", "weekday", "hour", "time_zone", "max_papers"]
        labels = {
            "frequency": "How often",
            "weekday": "Day",
            "time_zone": "Time zone",
        }
        help_texts = {"weekday": "For weekly digests."}


class DeleteAccountForm(forms.Form):
    """Asks for the password again before an account is deleted."""

    password = forms.CharField(
        label="Your password",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )

    def __init__(self, *args: Any, user: User, **kwargs: Any) -> None:
        self.user = user
        super().__init__(*args, **kwargs)

    def clean_password(self) -> str:
        password = self.cleaned_data["password"]
        if not self.user.check_password(password):
            raise forms.ValidationError("That is not your password.")
        return password
