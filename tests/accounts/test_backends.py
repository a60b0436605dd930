"""The signed-in user is read from the cache, and never outlives a change."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client

from accounts.backends import user_key


@pytest.fixture(autouse=True)
def _empty_cache():
    cache.clear()


@pytest.fixture
def alice_client(alice) -> Client:
    client = Client()
    client.login(username="alice@example.com", password="correct horse battery")
    return client


def test_a_cached_page_costs_a_signed_in_reader_no_query(
    alice_client, django_assert_num_queries
):
    alice_client.get("/topics/")  # the page, the user and their state, cached
    assert cache.get(user_key(alice_client.session["_auth_user_id"])) is not None

    with django_assert_num_queries(0):
        response = alice_client.get("/topics/")

    assert response.wsgi_request.user.email == "alice@example.com"
    assert "Log out" in response.text


def test_a_changed_password_signs_the_other_sessions_out(alice_client, alice):
    assert alice_client.get("/saved/").status_code == 200

    alice.set_password("another horse battery staple")
    alice.save()

    response = alice_client.get("/saved/")
    assert response.status_code == 302  # to log in
    assert "/accounts/login/" in response["Location"]


def test_a_deactivated_user_is_nobody_from_the_next_request(alice_client, alice):
    assert alice_client.get("/saved/").status_code == 200

    alice.is_active = False
    alice.save()

    assert alice_client.get("/saved/").status_code == 302


def test_a_deleted_user_leaves_no_cached_copy(alice_client, alice):
    alice_client.get("/saved/")
    pk = alice.pk

    alice.delete()

    assert cache.get(user_key(pk)) is None
    assert alice_client.get("/saved/").status_code == 302


def test_without_the_cache_the_user_is_read_from_the_database(
    alice_client, monkeypatch
):
    def unreachable(*args, **kwargs):
        raise ConnectionError("cache unreachable")

    monkeypatch.setattr(cache, "get", unreachable)
    monkeypatch.setattr(cache, "set", unreachable)

    assert alice_client.get("/saved/").status_code == 200
