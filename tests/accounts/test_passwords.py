"""What a new password, whoever sets it, and a deactivation end: the API token,
the private feed's address and, made inactive, the sessions (accounts.passwords).
The reader's own change and reset: tests/accounts/test_addresses.py."""

from __future__ import annotations

import pytest
from django.contrib.auth.hashers import MD5PasswordHasher
from django.contrib.auth.hashers import make_password
from django.core.management import call_command
from django.test import Client

from accounts.feed_tokens import create_feed
from accounts.models import User
from accounts.tokens import create_token
from accounts.tokens import get_token
from tests.accounts.factories import verified

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery"
NEW_PASSWORD = "a much longer new passphrase"


class OlderHasher(MD5PasswordHasher):
    algorithm = "older_md5"


def signed_in(user: User) -> Client:
    client = Client()
    response = client.post(
        "/accounts/login/", {"login": user.email, "password": PASSWORD}
    )
    assert response.status_code == 302
    return client


def keys_of(user: User) -> tuple[str, str]:
    return create_token(user=user).key, create_feed(user)


def opens(token: str, feed: str) -> tuple[int, int]:
    """The status of the API with the token and of the feed's address."""
    client = Client()
    return (
        client.get("/api/v1/me/", HTTP_AUTHORIZATION=f"Token {token}").status_code,
        client.get(f"/feed/{feed}.atom").status_code,
    )


def test_a_password_an_operator_sets_in_admin_ends_the_token_and_the_feed(
    verified_alice, admin_client
):
    """A reader whose account was taken writes to the operator, who sets a new
    password: what the taker made stopped working only after a reset."""
    token, feed = keys_of(verified_alice)
    assert opens(token, feed) == (200, 200)

    response = admin_client.post(
        f"/admin/accounts/user/{verified_alice.pk}/password/",
        {
            "password1": NEW_PASSWORD,
            "password2": NEW_PASSWORD,
            "usable_password": "true",
        },
    )

    assert response.status_code == 302
    assert opens(token, feed) == (401, 404)
    assert get_token(user=verified_alice) is None


def test_changepassword_ends_the_token_and_the_feed(verified_alice, monkeypatch):
    token, feed = keys_of(verified_alice)
    monkeypatch.setattr("getpass.getpass", lambda prompt="": NEW_PASSWORD)

    call_command("changepassword", verified_alice.email)

    assert opens(token, feed) == (401, 404)


def test_a_hash_made_stronger_at_log_in_is_no_new_password(verified_alice, settings):
    """Django stores a password's hash anew when its hasher is no longer the
    first (a log-in after an upgrade): the same password, the keys kept."""
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.MD5PasswordHasher",
        f"{__name__}.OlderHasher",
    ]
    User.objects.filter(pk=verified_alice.pk).update(
        password=make_password(PASSWORD, hasher="older_md5")
    )
    token, feed = keys_of(verified_alice)

    signed_in(verified_alice)

    assert User.objects.get(pk=verified_alice.pk).password.startswith("md5$")
    assert opens(token, feed) == (200, 200)


def test_an_account_made_inactive_and_active_again_has_no_keys_or_sessions(
    verified_alice, bob
):
    """Deactivating only paused them: made active again, the sessions, the
    token and the feed someone else may hold all worked again."""
    verified(bob)
    token, feed = keys_of(verified_alice)
    alices, bobs = signed_in(verified_alice), signed_in(bob)

    alice = User.objects.get(pk=verified_alice.pk)  # as admin reads it
    alice.is_active = False
    alice.save()
    alice.is_active = True
    alice.save()

    assert alices.get("/settings/").status_code == 302  # to log in
    assert opens(token, feed) == (401, 404)
    assert bobs.get("/settings/").status_code == 200  # another's session stays


def test_saving_an_active_account_keeps_its_keys_and_sessions(verified_alice):
    token, feed = keys_of(verified_alice)
    session = signed_in(verified_alice)

    alice = User.objects.get(pk=verified_alice.pk)
    alice.first_name = "Alice"
    alice.save()

    assert session.get("/settings/").status_code == 200
    assert opens(token, feed) == (200, 200)
