from __future__ import annotations

import re
from math import ceil

from csp.constants import UNSAFE_INLINE
from csp.decorators import csp_update
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.http import Http404
from django.http import HttpRequest
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.shortcuts import redirect
from django.shortcuts import render
from django.template.defaultfilters import pluralize
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods
from django.views.decorators.http import require_POST

from accounts.models import DigestPreferences
from accounts.models import User
from accounts.requests import signed_in
from accounts.toggles import login_required_back
from notifications.digest import preview_content
from notifications.digest import stored_content
from notifications.mailer import render_digest
from notifications.mailer import site_url
from notifications.models import Digest
from notifications.preferences import NOTHING_HELD
from notifications.preferences import TestDigestRefused
from notifications.preferences import digest_sources
from notifications.preferences import send_test_digest
from notifications.preferences import unsubscribe as turn_off
from notifications.schedule import Schedule
from notifications.tokens import BadToken
from notifications.tokens import masked
from notifications.tokens import opens_digest
from notifications.tokens import read_token
from topics.following import set_muted
from topics.models import Follow
from topics.query import topic_at

# A sent digest's id in the view-in-browser link.
DIGEST_ID = re.compile(r"[0-9]{1,18}")


# The email's HTML carries inline styles (mail clients need them): allowed on
# this one page, which has no scripts.
@csp_update({"style-src": [UNSAFE_INLINE]})
def preview(request: HttpRequest) -> HttpResponse:
    """View in browser: a sent digest (?digest=ID), or the next one."""
    if "digest" in request.GET:
        return _sent_digest(request)
    return _next_digest(request)


def _sent_digest(request: HttpRequest) -> HttpResponse:
    """A sent digest, to whoever holds its mail's link (?key=, no login needed:
    the mail is read on a phone that is not logged in) or to its reader."""
    raw_id = request.GET["digest"]
    # ASCII digits, as many as a row id holds: str.isdigit() takes "²".
    if not DIGEST_ID.fullmatch(raw_id):
        raise Http404("No such digest")
    digest_id, digests = int(raw_id), Digest.objects.select_related("user")
    if opens_digest(request.GET.get("key", ""), digest_id):
        digest = get_object_or_404(digests, pk=digest_id)
    elif request.user.is_authenticated:
        digest = get_object_or_404(digests, pk=digest_id, user=request.user)
    else:
        return redirect_to_login(request.get_full_path())
    content = stored_content(digest, site_url())
    # Unplanned, or its topics deleted since.
    if content is None or not content.sections:
        raise Http404("That digest holds no papers now")
    rendered = render_digest(
        user=digest.user,
        content=content,
        digest_id=digest.pk,
        test=digest.kind == Digest.Kind.TEST,
        in_browser=True,
    )
    response = HttpResponse(rendered.html)
    # Its address is a credential, as the private feed's is.
    response["Cache-Control"] = "private"
    response["X-Robots-Tag"] = "noindex"
    return response


@login_required
def _next_digest(request: HttpRequest) -> HttpResponse:
    """The reader's next digest; when nothing is new, the papers of the latest
    week harvested, saying so."""
    user, note = signed_in(request), ""
    # Built as at its send time, with the papers held now: the next digest's
    # period, not the one whose send time has passed (a week more before it).
    due = Schedule.of(DigestPreferences.objects.for_user(user)).next_send_time(
        timezone.now()
    )
    content = preview_content(user, at=due, site_url=site_url())
    latest = content
    if not content.sections:
        latest = preview_content(user, at=due, site_url=site_url(), fresh=True)
    if latest is not content and latest.sections:
        note = (
            f"Nothing is new for you since {content.since:%b %-d, %Y}, "
            "so no digest would be sent now. Below: the papers of the latest "
            f"week harvested, first announced since {latest.since:%b %-d, %Y}."
        )
        content = latest
    if not content.sections:
        held = bool(digest_sources(user))
        context = {"content": content, "nothing_held": None if held else NOTHING_HELD}
        return render(request, "notifications/preview_empty.html", context)
    rendered = render_digest(
        user=user,
        content=content,
        digest_id=None,
        note=note,
        in_browser=True,
    )
    return HttpResponse(rendered.html)


@require_POST
@login_required_back("accounts:settings")
def test_digest(request: HttpRequest) -> HttpResponse:
    try:
        digest, queued = send_test_digest(user=signed_in(request))
    except TestDigestRefused as exc:
        messages.error(request, str(exc))
        return redirect("accounts:settings")
    if not queued:
        messages.warning(
            request,
            "Our mail queue is down for a moment: your test digest is saved and "
            "goes out once it is back.",
        )
    elif digest.status == Digest.Status.FAILED:
        messages.error(
            request, f"Your test digest could not be delivered: {digest.reason}"
        )
    elif digest.status == Digest.Status.PENDING and digest.attempts:
        retry_at = digest.retry_at or timezone.now()
        wait = max(1, ceil((retry_at - timezone.now()).total_seconds() / 60))
        messages.warning(
            request,
            "The mail server did not take your test digest just now: it is tried "
            f"again in {wait} minute{pluralize(wait)}.",
        )
    else:
        messages.success(request, "A test digest is on its way to your inbox.")
    return redirect("accounts:settings")


@require_POST
@login_required_back("accounts:settings")
def mute(request: HttpRequest, slug: str) -> HttpResponse:
    muted = request.POST.get("muted") == "1"
    # A former slug (a page open from before a rename or a merge) names the
    # topic it leads to.
    topic = topic_at(slug)
    follow = Follow.objects.filter(user=signed_in(request), topic=topic).first()
    if follow is None:
        raise Http404("You do not follow that topic")
    set_muted(follow, muted)
    state = "muted in" if muted else "back in"
    messages.success(request, f"{follow.topic.name} is {state} your digest.")
    return redirect("accounts:settings")


# Reached from an email: no login, no cookies (so no CSRF token; the signed
# token is the authority) and no redirect. GET only asks, because mail
# scanners fetch links; POST, from the page's button or a mail client's
# RFC 8058 one-click request, unsubscribes at once.
@csrf_exempt
@require_http_methods(["GET", "HEAD", "POST"])
def unsubscribe(request: HttpRequest, token: str) -> HttpResponse:
    try:
        claim = read_token(token)
    except BadToken:
        return render(request, "notifications/unsubscribe_invalid.html", status=400)
    user = User.objects.select_related("digest").filter(pk=claim.user_id).first()
    if user is None:
        # Deleted: a POST (a mail client's one-click request, or the page's
        # button) asked that no more digests come, which is so, and a client
        # shows a failure for a 404. Either way it says only that the account
        # is gone, as the signed link's page does.
        status = 200 if request.method == "POST" else 404
        return render(request, "notifications/unsubscribe_gone.html", status=status)
    # Anyone holding the link sees this page: the address is only hinted at.
    context = {"email": masked(user.email), "token": token}
    if claim.mailed_elsewhere(user):
        moved = {**context, "moved": True}
        return render(
            request, "notifications/unsubscribe_stale.html", moved, status=410
        )
    preferences = DigestPreferences.objects.for_user(user)
    # A mail client's one-click request with the header's token is the
    # mailbox's owner pressing Unsubscribe on that email, and shows them no
    # page saying it did nothing: it is kept whatever the link's age.
    one_click = claim.header and request.POST.get("List-Unsubscribe") == "One-Click"
    if claim.generation < preferences.link_generation and not one_click:
        return render(
            request, "notifications/unsubscribe_stale.html", context, status=410
        )
    if request.method != "POST":
        if preferences.frequency == DigestPreferences.Frequency.OFF:
            already = {**context, "already": True}
            return render(request, "notifications/unsubscribed.html", already)
        return render(request, "notifications/unsubscribe.html", context)
    turn_off(user=user)
    return render(request, "notifications/unsubscribed.html", context)
