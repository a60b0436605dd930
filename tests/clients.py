"""Clients signed in as a user: the test client's session, or the API's token."""

from __future__ import annotations

from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.models import User


def signed_in(user: User, **kwargs: object) -> Client:
    """A test client with `user`'s session (the login form has its own tests)."""
    client = Client(**kwargs)
    client.force_login(user)
    return client


def token_client(user: User | None) -> APIClient:
    """An API client sending `user`'s token; anonymous for None."""
    client = APIClient()
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client
