"""The site's on/off buttons for signed-in users: follow a topic, save a paper.

Every button is a plain POST form with CSRF that works without JavaScript;
static/js/site.js submits the same form with `Accept: application/json` and
updates the button in place. An anonymous click is sent to log in and comes back
to a one-click confirmation, so the action is finished without a GET that
changes anything.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest
from django.http import HttpResponse
from django.http import JsonResponse
from django.shortcuts import redirect
from django.shortcuts import render
from django.shortcuts import resolve_url
from django.utils.http import url_has_allowed_host_and_scheme

View = Callable[..., HttpResponse]


def toggle(
    request: HttpRequest,
    *,
    is_on: Callable[[], bool],
    set_on: Callable[[bool], object],
    question: str,
    fallback: str,
) -> HttpResponse:
    """Serve one toggle endpoint; the form posts `on=1` or `on=0` (explicit, so
    a repeated request can't flip the state back)."""
    json = "application/json" in request.headers.get("Accept", "")
    next_url = safe_next(request, fallback)
    wanted = asks_on(request)
    if not request.user.is_authenticated:
        login = login_and_back(request, {"on": int(wanted), "next": next_url})
        if json:
            return JsonResponse({"login_url": login}, status=401)
        return redirect(login)
    if request.method != "POST":
        context = {
            "question": question,
            "action": request.path,
            "field": "on",
            "value": int(wanted),
            "already": is_on() == wanted,
            "next": next_url,
        }
        return render(request, "confirm_toggle.html", context)
    set_on(wanted)
    if json:
        return JsonResponse({"on": wanted})
    return redirect(next_url)


def asks_on(request: HttpRequest) -> bool:
    """Whether a toggle's request asks for on: its form's `on`, else its
    address's, else yes."""
    return request.POST.get("on", request.GET.get("on")) != "0"


def login_and_back(request: HttpRequest, query: dict[str, object]) -> str:
    """The log-in address that comes back to this path with `query`, where a
    GET asks to confirm what a visitor clicked."""
    come_back = f"{request.path}?{urlencode(query)}"
    return f"{resolve_url(settings.LOGIN_URL)}?{urlencode({'next': come_back})}"


def login_required_back(fallback: str) -> Callable[[View], View]:
    """login_required for a form's POST: a visitor (a session that ended in
    another tab) is sent to log in and then back to the page the form was on,
    its `next` (else `fallback`, a URL name), not to the form's own address,
    which the GET after logging in could only answer with a 405. What was
    posted is not kept: the page shows the form again."""

    def decorator(view: View) -> View:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not request.user.is_authenticated:
                return redirect_to_login(safe_next(request, resolve_url(fallback)))
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


def safe_next(request: HttpRequest, fallback: str) -> str:
    """The `next` address the request names, if it is on this site; else fallback."""
    candidate = request.POST.get("next") or request.GET.get("next") or ""
    if url_has_allowed_host_and_scheme(
        candidate,
        allowed_hosts={request.get_host()},
        require_https=request.is_secure(),
    ):
        return candidate
    return fallback
