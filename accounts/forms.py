from __future__ import annotations

from typing import Any

from allauth.account.forms import LoginForm
from allauth.account.utils import passthrough_next_redirect_url
from django import forms
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext

from accounts.models import DIGEST_MAX_PAPERS
from accounts.models import TIME_ZONE_CHOICES
from accounts.models import DigestPreferences
from accounts.models import User
from accounts.models import listed_time_zones

HOUR_CHOICES = [(hour, f"{hour:02d}:00") for hour in range(24)]
TIME_ZONES = frozenset(name for name, _ in TIME_ZONE_CHOICES)


class KnownTimeZone(forms.Field):
    """A hidden field holding a time zone this site knows, or "" for any other
    value: never an error, which a hidden field could not show."""

    widget = forms.HiddenInput

    def clean(self, value: Any) -> str:
        return value if value in TIME_ZONES else ""


class SignupExtras(forms.Form):
    """What the sign-up form asks beside allauth's fields (its
    ACCOUNT_SIGNUP_FORM_CLASS): the browser's time zone, filled in by
    static/js/site.js, so that the first digest comes at the reader's own hour.
    Without JavaScript, or with a name this site does not know, the digest's
    default (UTC) stands; the settings page changes it."""

    time_zone = KnownTimeZone(required=False)

    def signup(self, request: Any, user: User) -> None:
        time_zone = self.cleaned_data.get("time_zone", "")
        if time_zone:
            preferences = DigestPreferences.objects.stored_for(user)
            preferences.time_zone = time_zone
            preferences.save(update_fields=["time_zone"])


class ComingBackLoginForm(LoginForm):
    """allauth's login form (ACCOUNT_FORMS), its "Forgot your password?"
    keeping where logging in goes (`next`, when it is on this site): the reset
    the mail links to signs in, and lands there too (accounts.adapter)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.request is not None and "password" in self.fields:
            reset = passthrough_next_redirect_url(
                self.request, reverse("account_reset_password"), "next"
            )
            self.fields["password"].help_text = format_html(
                '<a href="{}">{}</a>', reset, gettext("Forgot your password?")
            )


class DigestPreferencesForm(forms.ModelForm):
    """The digest section of the settings page. New digest fields go in Meta.fields."""

    hour = forms.TypedChoiceField(
        choices=HOUR_CHOICES, coerce=int, label="Hour", help_text="In your time zone."
    )
    max_papers = forms.IntegerField(
        min_value=1,
        max_value=DIGEST_MAX_PAPERS,
        label="Papers per digest, at most",
        help_text=f"Up to {DIGEST_MAX_PAPERS}, so that mail apps show it whole; "
        "the rest are counted and linked at its end.",
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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Offered: the zones by today's names, and the reader's own if it is an
        # older one. Taken: any valid zone, such as a browser's older name.
        offered, stored = listed_time_zones(), self.instance.time_zone
        if stored in TIME_ZONES and stored not in offered:
            offered = [*offered, stored]
        elif stored not in TIME_ZONES:
            self.fields["time_zone"].help_text = (
                f"“{stored}” is no longer a time zone this site knows: your "
                "digests come by UTC until you choose yours."
            )
        select = self.fields["time_zone"].widget
        select.choices = [(name, name) for name in offered]
        # The other names taken, for site.js to offer a browser's only if it is.
        select.attrs["data-also-valid"] = " ".join(sorted(TIME_ZONES - set(offered)))


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
