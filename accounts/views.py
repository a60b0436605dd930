from __future__ import annotations

from math import ceil
from typing import Any

from allauth.account.utils import passthrough_next_redirect_url
from allauth.account.views import ConfirmEmailView
from allauth.account.views import EmailView
from allauth.account.views import PasswordResetView
from allauth.core import ratelimit
from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest
from django.http import HttpResponse
from django.http import StreamingHttpResponse
from django.shortcuts import redirect
from django.shortcuts import render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from django.views.decorators.http import require_POST
from rest_framework.authtoken.models import Token

from accounts import data_export
from accounts import feed_tokens
from accounts import tokens
from accounts.adapter import confirmation_cooling_down
from accounts.adapter import tell_no_new_link
from accounts.deletion import delete_account
from accounts.forms import DeleteAccountForm
from accounts.forms import DigestPreferencesForm
from accounts.models import DigestPreferences
from accounts.requests import signed_in
from accounts.sites import site_url
from accounts.toggles import login_required_back
from core.compression import uncompressed

# A new key waits in the session for the one page view that shows it.
NEW_KEY_SESSION_KEY = "accounts_new_api_key"


@never_cache  # it shows a new API key, and the private feed's address
@uncompressed
@login_required
def settings_page(request: HttpRequest) -> HttpResponse:
    preferences = DigestPreferences.objects.stored_for(signed_in(request))
    form = DigestPreferencesForm(request.POST or None, instance=preferences)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, "Your digest preferences are saved.")
        return redirect("accounts:settings")
    feed = feed_tokens.get_feed_token(signed_in(request))
    feed_key = feed_tokens.key_of(feed) if feed is not None else None
    context = {
        "digest_form": form,
        "token": tokens.get_token(user=signed_in(request)),
        # Times on the page, in the reader's zone, as the digest's next one is.
        "time_zone": preferences.zone,
        "new_key": request.session.pop(NEW_KEY_SESSION_KEY, None),
        "feed": feed,
        "feed_url": feed_url(feed_key) if feed_key else None,
    }
    return render(request, "accounts/settings.html", context)


def _settings_at(section: str) -> HttpResponse:
    """Back to the settings page, scrolled to the section just changed (a new
    key or address shows there, far below the top)."""
    return redirect(reverse("accounts:settings") + f"#{section}")


def _show_key_once(request: HttpRequest, token: Token) -> None:
    request.session[NEW_KEY_SESSION_KEY] = token.key


@require_POST
@login_required_back("accounts:settings")
def token_create(request: HttpRequest) -> HttpResponse:
    try:
        token = tokens.create_token(user=signed_in(request))
    except tokens.TokenExistsError:
        messages.info(
            request, "You already have an API token; rotate it for a new key."
        )
    else:
        _show_key_once(request, token)
        messages.success(request, "Your API token is ready. Copy the key now.")
    return _settings_at("token-heading")


@require_POST
@login_required_back("accounts:settings")
def token_rotate(request: HttpRequest) -> HttpResponse:
    user = signed_in(request)
    # A page from before a revoke: rotating would undo it.
    if tokens.get_token(user=user) is None:
        messages.info(request, "You had no API token, so none was made; create one.")
        return _settings_at("token-heading")
    _show_key_once(request, tokens.rotate_token(user=user))
    messages.success(
        request, "Your API token has a new key; the old one no longer works."
    )
    return _settings_at("token-heading")


@require_POST
@login_required_back("accounts:settings")
def token_revoke(request: HttpRequest) -> HttpResponse:
    if tokens.revoke_token(user=signed_in(request)):
        messages.success(request, "Your API token is revoked.")
    else:
        messages.info(request, "You had no API token.")
    return _settings_at("token-heading")


def feed_url(key: str) -> str:
    """The absolute address of the private feed with this key."""
    return site_url(reverse("reader_feed", kwargs={"key": key}))


@require_POST
@login_required_back("accounts:settings")
def feed_create(request: HttpRequest) -> HttpResponse:
    feed_tokens.create_feed(signed_in(request))
    messages.success(
        request, "Your private feed is ready: add its address to your feed reader."
    )
    return _settings_at("feed-heading")


@require_POST
@login_required_back("accounts:settings")
def feed_rotate(request: HttpRequest) -> HttpResponse:
    user = signed_in(request)
    # A page from before a revoke: rotating would undo it.
    if feed_tokens.get_feed_token(user) is None:
        messages.info(request, "You had no private feed, so none was made; create one.")
        return _settings_at("feed-heading")
    feed_tokens.rotate_feed(user)
    messages.success(
        request,
        "Your private feed has a new address; the old one no longer works.",
    )
    return _settings_at("feed-heading")


@require_POST
@login_required_back("accounts:settings")
def feed_revoke(request: HttpRequest) -> HttpResponse:
    if feed_tokens.revoke_feed(signed_in(request)):
        messages.success(request, "Your private feed is turned off.")
    else:
        messages.info(request, "You had no private feed.")
    return _settings_at("feed-heading")


@never_cache  # the reader's data, for them alone
@require_GET
@login_required
def data_download(request: HttpRequest) -> HttpResponse | StreamingHttpResponse:
    """Everything of the signed-in reader's as one JSON file (accounts.data_export),
    sent as it is read."""
    user = signed_in(request)
    if wait := data_export.take_download(user):
        minutes = ceil(wait / 60)
        said = (
            f"Your data can be downloaded {data_export.DOWNLOADS_PER_HOUR} times an "
            f"hour. You can download it again in {minutes} minute{pluralize(minutes)}."
        )
        response = render(request, "429.html", {"said": said}, status=429)
        response["Retry-After"] = str(wait)
        return response
    # Dated by the reader's day, in their digest's time zone.
    today = timezone.localdate(timezone=DigestPreferences.objects.for_user(user).zone)
    download = StreamingHttpResponse(
        data_export.user_data(user), content_type="application/json; charset=utf-8"
    )
    download["Content-Disposition"] = (
        f'attachment; filename="{data_export.filename(today)}"'
    )
    return download


@login_required
def delete_page(request: HttpRequest) -> HttpResponse:
    user = signed_in(request)
    form = DeleteAccountForm(request.POST or None, user=user)
    rate_limited = False
    if request.method == "POST":
        # Shares allauth's limit on re-entering a password, against guessing.
        if not ratelimit.consume(request, action="reauthenticate", user=user):
            form = DeleteAccountForm(user=user)
            rate_limited = True
        elif form.is_valid():
            delete_account(user=user)
            logout(request)
            messages.success(request, "Your account and all its data are deleted.")
            return redirect("home")
    # What the page says goes: everything of the reader's (accounts.deletion).
    context = {
        "form": form,
        "follow_count": user.follows.count(),
        "author_follow_count": user.author_follows.count(),
        "search_count": user.searches.count(),
        "saved_count": user.saved_papers.count(),
        "rating_count": user.ratings.count(),
        "question_count": user.questions.count(),
        "rate_limited": rate_limited,
    }
    status = 429 if rate_limited else 200
    return render(request, "accounts/delete.html", context, status=status)


class ConfirmOnPostView(ConfirmEmailView):
    """allauth's confirmation page, which signed a reader of another account
    out as soon as it was opened: a link to any confirmation still valid,
    followed from any site, did (a logout by GET). Confirming, a POST, still
    signs them out, as the address's account is the one signed in then."""

    def logout_other_user(self, confirmation: Any) -> None:
        user = self.request.user
        if self.request.method == "POST":
            super().logout_other_user(confirmation)
        elif user.is_authenticated and user.pk != confirmation.email_address.user_id:
            messages.info(
                self.request,
                f"You are logged in as {user.email}: confirming this address, "
                "another account's, logs you out.",
            )


class ResendThenSayView(EmailView):
    """allauth's email page, whose "Resend verification" within the cooldown
    after the last link sent none and said nothing: it says so, and when."""

    def _action_send(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        # Only of the reader's own address: of another, it would tell whether
        # a link went there.
        address = self._get_email_address(request)
        cooling_down = address and confirmation_cooling_down(request, address.email)
        response = super()._action_send(request, *args, **kwargs)
        if cooling_down and not self._did_send_verification_email:
            tell_no_new_link(
                request, address.email, again="press Resend verification again"
            )
        return response


class ResetThenSayView(PasswordResetView):
    """allauth's form asking for a reset link, which, given a `next` (the login
    page's "Forgot your password?" keeps it), went straight there once the
    mail was asked for: to a page that sent the reader to log in again, with
    no word of the mail. Its page says the mail went, or did not (and asks
    again), keeping `next` for the link the mail gives (accounts.adapter)."""

    def get_success_url(self) -> str:
        done = reverse("account_reset_password_done")
        return passthrough_next_redirect_url(self.request, done, "next")
