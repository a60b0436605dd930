from __future__ import annotations

import pytest

from accounts.models import User
from tests.accounts.factories import verified
from tests.topics.factories import make_topic
from topics.models import Follow
from topics.models import Topic


@pytest.fixture(autouse=True)
def _site(settings):
    settings.MOMENTUM_SITE_URL = "https://momentum.example"


@pytest.fixture
def agents(db) -> Topic:
    return make_topic("Agents", rule="ti:agent", slug="agents")


@pytest.fixture
def subscriber(alice, agents) -> User:
    """alice, verified, following Agents: a digest's reader."""
    Follow.objects.create(user=alice, topic=agents)
    return verified(alice)
