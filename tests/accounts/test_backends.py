"""The signed-in user is read from the cache, and never outlives a change."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import transaction

from accounts.backends import user_key
from tests.concurrency import in_thread


def test_a_cached_page_costs_a_signed_in_reader_no_query(
    reader, django_assert_num_queries
):
    reader.get("/topics/")  # the page, the user and their state, cached
    assert cache.get(user_key(reader.session["_auth_user_id"])) is not None

    with django_assert_num_queries(0):
        response = reader.get("/topics/")

    assert response.wsgi_request.user.email == "alice@example.com"
    assert "Log out" in response.text


def test_a_changed_password_signs_the_other_sessions_out(reader, alice):
    assert reader.get("/saved/").status_code == 200

    alice.set_password("another horse battery staple")
    alice.save()

    response = reader.get("/saved/")
    assert response.status_code == 302  # to log in
    assert "/accounts/login/" in response["Location"]


def test_a_deactivated_user_is_nobody_from_the_next_request(reader, alice):
    assert reader.get("/saved/").status_code == 200

    alice.is_active = False
    alice.save()

    assert reader.get("/saved/").status_code == 302


def test_a_deleted_user_leaves_no_cached_copy(reader, alice):
    reader.get("/saved/")
    pk = alice.pk

    alice.delete()

    assert cache.get(user_key(pk)) is None
    assert reader.get("/saved/").status_code == 302


def test_without_the_cache_the_user_is_read_from_the_database(reader, monkeypatch):
    def unreachable(*args, **kwargs):
        raise ConnectionError("cache unreachable")

    monkeypatch.setattr(cache, "get", unreachable)
    monkeypatch.setattr(cache, "set", unreachable)

    assert reader.get("/saved/").status_code == 200


@pytest.mark.django_db(transaction=True)
def test_a_request_before_the_deactivation_commits_does_not_keep_the_user(
    reader, alice
):
    """Admin's change form saves in a transaction: a request meanwhile reads
    the committed row, still active, and caches it; it must not outlive the
    commit (an hour of a deactivated user signed in)."""
    assert reader.get("/saved/").status_code == 200

    with transaction.atomic():
        alice.is_active = False
        alice.save()
        meanwhile = in_thread(lambda: reader.get("/saved/"))
        meanwhile.join()
        assert cache.get(user_key(alice.pk)).is_active  # the row as committed

    assert reader.get("/saved/").status_code == 302
