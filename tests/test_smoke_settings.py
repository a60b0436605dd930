from __future__ import annotations

from django.conf import settings

from config.env import local_secret_key


def test_test_settings_use_postgresql():
    assert settings.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"


def test_the_embedded_default_keeps_one_secret_key_of_its_own(tmp_path):
    path = tmp_path / "var" / "secret_key"

    first = local_secret_key(path)

    assert len(first) >= 50
    assert local_secret_key(path) == first
    assert path.stat().st_mode & 0o777 == 0o600
