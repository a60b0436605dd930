from __future__ import annotations

import pytest
from django.core.cache import cache

from accounts.models import User

pytest_plugins = ["tests.fakearxiv"]


@pytest.fixture(autouse=True)
def empty_cache():
    """Each test starts with no cached pages: a rolled-back test never commits
    the change that would have made them stale."""
    cache.clear()


@pytest.fixture
def alice(db) -> User:
    """A signed-up researcher."""
    return User.objects.create_user("alice@example.com", "correct horse battery")


@pytest.fixture
def bob(db) -> User:
    """Another researcher, to check that alice's data stays hers."""
    return User.objects.create_user("bob@example.com", "correct horse battery")


@pytest.fixture
def staff(db) -> User:
    """A curator."""
    return User.objects.create_user(
        "curator@example.com", "correct horse battery", is_staff=True
    )
