from __future__ import annotations

from django.apps import AppConfig
from django.core.signals import request_started
from django.db.models.signals import post_delete
from django.db.models.signals import post_migrate
from django.db.models.signals import post_save


class AccountsConfig(AppConfig):
    name = "accounts"
    # allauth's app is "Accounts" in admin (email addresses): not a second one.
    verbose_name = "Users and preferences"

    def ready(self) -> None:
        from allauth.account.signals import email_confirmed
        from allauth.account.signals import password_changed
        from allauth.account.signals import password_reset

        from accounts import addresses
        from accounts import backends
        from accounts import passwords
        from accounts import sites

        # After django.contrib.sites' own hook, which creates example.com.
        post_migrate.connect(sites.sync_after_migrate, sender=self)
        user = self.get_model("User")
        post_save.connect(backends.forget_user, sender=user)
        post_delete.connect(backends.forget_user, sender=user)
        post_save.connect(passwords.end_keys_on_save, sender=user)
        request_started.connect(sites.check_on_first_request)
        email_confirmed.connect(addresses.address_confirmed)
        password_changed.connect(passwords.say_keys_ended)
        password_reset.connect(passwords.say_keys_ended)
