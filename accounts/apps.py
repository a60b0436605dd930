from __future__ import annotations

from django.apps import AppConfig
from django.core.signals import request_started
from django.db.models.signals import post_migrate


class AccountsConfig(AppConfig):
    name = "accounts"

    def ready(self) -> None:
        from accounts import sites

        # After django.contrib.sites' own hook, which creates example.com.
        post_migrate.connect(sites.sync_after_migrate, sender=self)
        request_started.connect(sites.check_on_first_request)
