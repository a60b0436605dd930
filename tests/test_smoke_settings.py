from __future__ import annotations

from django.conf import settings


def test_test_settings_use_postgresql():
    assert settings.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"
