from __future__ import annotations

import pytest


@pytest.fixture
def curator(client, staff):
    """The test client, signed in as a superuser (curators use Django admin)."""
    staff.is_superuser = True
    staff.save()
    client.force_login(staff)
    return client
