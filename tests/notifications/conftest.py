from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _site(settings):
    settings.MOMENTUM_SITE_URL = "https://momentum.example"
