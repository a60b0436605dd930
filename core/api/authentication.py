"""The API's token authentication: DRF's, refusing a key sent as a Bearer token."""

from __future__ import annotations

from typing import Any

from rest_framework import authentication
from rest_framework import exceptions
from rest_framework.request import Request


class TokenAuthentication(authentication.TokenAuthentication):
    """`Authorization: Token <key>`. DRF reads no other scheme and leaves the
    request to the next authenticator, so a key sent as `Bearer <key>` (as many
    APIs take one) was ignored: public reads answered as to a visitor, at the
    visitors' rate, and the others said no credentials were provided. Refused
    instead, as a token that is not one is. Other schemes (a staging proxy's
    Basic password) are still left alone."""

    def authenticate(self, request: Request) -> Any:
        scheme = authentication.get_authorization_header(request).split()[:1]
        if scheme and scheme[0].lower() == b"bearer":
            raise exceptions.AuthenticationFailed(
                "Send the key as `Authorization: Token <key>`, not as a Bearer token."
            )
        return super().authenticate(request)
