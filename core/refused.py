"""A refused form's values, kept in the session for the page its redirect goes
back to (post, redirect, get): the reader corrects what they typed instead of
typing it again. A form is known by the address it posts to; one at a time,
taken by the next page that draws forms."""

from __future__ import annotations

from collections.abc import Sequence

from django.http import HttpRequest

SESSION_KEY = "refused_form"


def keep_refused(request: HttpRequest, fields: Sequence[str], error: str) -> None:
    """Keep these fields of the form this request posted, which was refused,
    and why (as `error` among them)."""
    values = {field: request.POST.get(field, "") for field in fields}
    values["error"] = error
    request.session[SESSION_KEY] = {"action": request.path, "values": values}


def has_refused(request: HttpRequest) -> bool:
    """Whether a refused form waits for its page (without taking it)."""
    return SESSION_KEY in request.session


def take_refused(request: HttpRequest) -> tuple[str, dict[str, str]]:
    """The address of the form refused last and its values, once; ("", {})
    if there is none."""
    kept = request.session.pop(SESSION_KEY, None)
    if not isinstance(kept, dict):
        return "", {}
    return str(kept.get("action", "")), dict(kept.get("values", {}))
