"""allauth glue: the visitor's address as the site sees it behind its proxies."""

from __future__ import annotations

from allauth.account.adapter import DefaultAccountAdapter
from django.http import HttpRequest
from rest_framework.throttling import BaseThrottle


def client_ip(request: HttpRequest) -> str:
    """The visitor's address: REMOTE_ADDR, or behind MOMENTUM_TRUSTED_PROXIES
    proxies the address in X-Forwarded-For that the outermost one saw (counted
    from the right, so a visitor cannot choose it). DRF's reading, which the
    API's throttles use too (NUM_PROXIES)."""
    # get_ident reads only request.META, which a Django request has too.
    return BaseThrottle().get_ident(request)  # type: ignore[arg-type]


class AccountAdapter(DefaultAccountAdapter):
    # allauth's own trusts the left-most X-Forwarded-For, which anyone can set:
    # its rate limits on logins and resets could be dodged by sending one.
    def get_client_ip(self, request: HttpRequest) -> str:
        return client_ip(request)
