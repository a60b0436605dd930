"""One fixture per concept. People: `alice` (the reader) and `bob` (another
reader), `staff` (staff with no permissions) and pytest-django's `admin_user` /
`admin_client` (a superuser: the curator in Django admin). Their clients:
`reader` (alice's session), `anonymous`, `as_alice`, `as_bob`, `as_staff` (API
tokens). Things: `topic` and `paper`; specially shaped ones come from
`tests/<app>/factories.py` (`make_topic(**fields)`, `paper_record(...)`)."""

from __future__ import annotations

import pytest
from allauth.account.models import EmailAddress
from django.core.cache import cache
from django.test import Client
from rest_framework.test import APIClient

from accounts.models import User
from papers.ingest.upsert import upsert_records
from papers.models import Paper
from tests.clients import signed_in
from tests.clients import token_client
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.models import Topic

pytest_plugins = ["tests.fakearxiv"]


@pytest.fixture(autouse=True)
def empty_cache():
    """Each test starts with no cached pages and no rate-limit counters: a
    rolled-back test never commits the change that would have made them stale."""
    cache.clear()


@pytest.fixture
def alice(db) -> User:
    """A signed-up researcher: the reader."""
    return User.objects.create_user("alice@example.com", "correct horse battery")


@pytest.fixture
def verified_alice(alice) -> User:
    """alice, with the verified address that mandatory verification asks for."""
    EmailAddress.objects.create(
        user=alice, email=alice.email, verified=True, primary=True
    )
    return alice


@pytest.fixture
def bob(db) -> User:
    """Another researcher, to check that alice's data stays hers."""
    return User.objects.create_user("bob@example.com", "correct horse battery")


@pytest.fixture
def staff(db) -> User:
    """Staff without permissions; a curator is pytest-django's `admin_user`."""
    return User.objects.create_user(
        "curator@example.com", "correct horse battery", is_staff=True
    )


@pytest.fixture
def reader(alice) -> Client:
    """The test client, signed in as alice."""
    return signed_in(alice)


@pytest.fixture
def anonymous() -> APIClient:
    return APIClient()


@pytest.fixture
def as_alice(alice) -> APIClient:
    return token_client(alice)


@pytest.fixture
def as_bob(bob) -> APIClient:
    return token_client(bob)


@pytest.fixture
def as_staff(staff) -> APIClient:
    return token_client(staff)


@pytest.fixture
def topic(db) -> Topic:
    """A topic with no papers yet (make_topic's defaults)."""
    return make_topic()


@pytest.fixture
def paper(db) -> Paper:
    """One ingested paper, in no topic."""
    upsert_records([paper_record()])
    return Paper.objects.get()
