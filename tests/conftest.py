"""One fixture per concept.

People: `alice` (the reader; `verified_alice` once her address is verified),
`bob` (another reader), `staff` (staff with no permissions), `curator` (staff
who may edit topics and watch ingest) and pytest-django's `admin_user` /
`admin_client` (a superuser: the curator in Django admin).
Their clients: `reader` (alice's session), `anonymous`, `as_alice`, `as_bob`,
`as_staff` (API tokens; the curator's); tests.clients.signed_in(user) for anyone else.
Things: `topic`, `paper`, and `corpus` (two topics of papers); specially shaped
ones come from `tests/<app>/factories.py` (`make_topic(**fields)`,
`paper_record(...)`, `verified(user)`)."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime

import pytest
from django.contrib.auth.models import Permission
from django.core.cache import cache
from django.core.signals import request_started
from django.test import Client
from rest_framework.test import APIClient

from accounts.models import User
from accounts.sites import check_on_first_request
from papers.ingest.upsert import upsert_records
from papers.models import Paper
from papers.pagecache import filled_copies
from papers.versions import forget_recent
from tests.accounts.factories import verified
from tests.clients import signed_in
from tests.clients import token_client
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.models import Topic
from topics.momentum import refresh_momentum
from topics.reader_feed import _kept as kept_followings
from topics.tagging import tag_papers

pytest_plugins = ["tests.fakearxiv"]

CURATOR_PERMISSIONS = [
    "add_topic",
    "change_topic",
    "view_topic",
    "view_ingestrun",
    "view_feedsource",
    "view_category",
]


@pytest.fixture(autouse=True, scope="session")
def site_checked():
    """The process's once-only check of the Sites record (accounts.sites,
    tested in tests/accounts/test_sites.py) counted as done: a test's first
    request, whichever test runs first, costs what any later request costs,
    so query-count guards hold run alone or in the suite."""
    request_started.disconnect(check_on_first_request)


@pytest.fixture(autouse=True)
def empty_cache():
    """Each test starts with no cached pages and no rate-limit counters: a
    rolled-back test never commits the change that would have made them stale
    (nor pages filled or what readers follow, kept in the process)."""
    cache.clear()
    forget_recent()
    filled_copies.clear()
    kept_followings.clear()


@pytest.fixture
def alice(db) -> User:
    """A signed-up researcher: the reader."""
    return User.objects.create_user("alice@example.com", "correct horse battery")


@pytest.fixture
def verified_alice(alice) -> User:
    """alice, with the verified address that mandatory verification asks for."""
    return verified(alice)


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
def curator(staff) -> User:
    """Staff given what a curator's account is given: editing topics, and
    watching where papers come from (in admin and in the API alike)."""
    staff.user_permissions.set(
        Permission.objects.filter(
            codename__in=CURATOR_PERMISSIONS,
            content_type__app_label__in=["topics", "papers"],
        )
    )
    return User.objects.get(pk=staff.pk)  # its permissions are cached


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
def as_staff(curator) -> APIClient:
    return token_client(curator)


@pytest.fixture
def topic(db) -> Topic:
    """A topic with no papers yet (make_topic's defaults)."""
    return make_topic()


@pytest.fixture
def corpus(db) -> dict[str, Topic]:
    """Two topics; eight agent papers over three days, one also a robot paper,
    and an old-style id. Momentum counted. (The API's tests and the outages'.)"""
    agents = make_topic(
        "RL for LLM Agents", rule="ti:agent", glossary="RL: Reinforcement Learning"
    )
    robots = make_topic("Robot Learning", rule="ti:robot", slug="robot-learning")
    agents.related.add(robots)
    records = [
        paper_record(
            f"2606.{n:05d}",
            title=f"Agent {n}",
            published=datetime(2026, 6, 1 + n % 3, 15, 0, tzinfo=UTC),
            categories=("cs.LG", "cs.AI") if n % 2 else ("cs.AI",),
        )
        for n in range(1, 8)
    ]
    records.append(paper_record("2606.00100", title="An agent and a robot"))
    records.append(
        paper_record("math/0601001", version=2, title="Old style id", categories=())
    )
    tag_papers(upsert_records(records).changed_ids)
    refresh_momentum()
    return {"agents": agents, "robots": robots}


@pytest.fixture
def paper(db) -> Paper:
    """One ingested paper, in no topic."""
    upsert_records([paper_record()])
    return Paper.objects.get()
