from __future__ import annotations

import pytest

from tests.integration.celery_workers import clean_broker


@pytest.fixture
def broker():
    """An empty test broker before and after the test: no task leaks between tests."""
    clean_broker()
    yield
    clean_broker()
