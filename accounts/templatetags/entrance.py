"""Logging in and coming back: what the login and sign-up pages say a visitor
is there for (a visitor who clicked Follow or Save, or opened a page of their
own, is sent to log in with the address to come back to, `next`), and the
header's Log in and Sign up links, which come back to the page they are on;
whether the page after an account mail may say it was sent, and the way
to ask for a reset again."""

from __future__ import annotations

from urllib.parse import urlencode
from urllib.parse import urlsplit

from allauth.account.utils import passthrough_next_redirect_url
from django import template
from django.conf import settings
from django.http import HttpRequest
from django.urls import Resolver404
from django.urls import resolve
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme

from accounts.adapter import MAIL_NOT_SENT

register = template.Library()

# By the view `next` names: what logging in lets the visitor do.
REASONS = {
    "topics:follow": "follow a topic",
    "author_follow": "follow an author",
    "papers:save": "save papers",
    "papers:rate": "rate papers",
    "saved": "see your saved papers",
    "saved_bibtex": "export your saved papers",
    "saved_ris": "export your saved papers",
    "saved_csl_json": "export your saved papers",
    "saved_search_create": "save a search",
    # The search page's "Log in to save this search" comes back to the search.
    "search": "save this search",
    "notifications:preview": "read your digest",
    "accounts:data": "download your data",
}
VERBS = {"account_login": "Log in", "account_signup": "Sign up"}


@register.simple_tag(takes_context=True)
def entrance_reason(context: template.Context) -> str:
    """On the login page reached from a Follow button, "Log in to follow a
    topic."; on the sign-up page, "Sign up to …"; "" with no address to come
    back to, or one of a page open to all."""
    request: HttpRequest = context["request"]
    verb = VERBS.get(getattr(request.resolver_match, "url_name", ""), "")
    next_url = context.get("redirect_field_value") or ""
    if not verb or not url_has_allowed_host_and_scheme(
        next_url, allowed_hosts={request.get_host()}
    ):
        return ""  # allauth would not go there either
    try:
        view = resolve(urlsplit(next_url).path).view_name
    except Resolver404:
        return ""
    what = REASONS.get(view)
    if what is None and view.startswith("accounts:"):
        what = "see your settings"
    # Another page of the site is open to all: why log in is not known.
    return f"{verb} to {what}." if what else ""


def back_query(path: str) -> str:
    """`?next=…` for the header's Log in and Sign up links, back to `path`; ""
    for the home page (where logging in lands anyway) and the account pages."""
    if not path or path == "/" or path.startswith("/accounts/"):
        return ""
    return "?" + urlencode({"next": path})


@register.simple_tag(takes_context=True)
def login_back(context: template.Context) -> str:
    """back_query of the page the header is drawn for (`back_to`, given by the
    pages rendered for everyone, papers.slots) or, on the login and sign-up
    pages, of the page they return to. Other pages (errors, confirmations)
    give none: a 404's address may hold a secret (a private feed's key)."""
    return back_query(
        context.get("redirect_field_value") or context.get("back_to") or ""
    )


@register.simple_tag(takes_context=True)
def reset_again_url(context: template.Context) -> str:
    """The way to ask for a new reset link from a page of the reset (its mail
    did not go; its link was used or is too old), keeping where the reset was
    going: the page's `next`, when allauth finds it safe (on this site)."""
    reset = reverse("account_reset_password")
    return passthrough_next_redirect_url(context["request"], reset, "next")


@register.simple_tag(takes_context=True)
def account_mail_not_sent(context: template.Context) -> bool:
    """Whether this page follows an account mail that did not go (the adapter's
    message says so): its page must not then say the mail was sent."""
    return any(
        MAIL_NOT_SENT in message.tags.split()
        for message in context.get("messages") or ()
    )


@register.simple_tag
def contact_email() -> str:
    """Whom a reader writes to about what only the operator can do."""
    return settings.MOMENTUM_CONTACT_EMAIL
