"""The site's identity in Django's Sites record, kept in step with the settings.

allauth's mails ("[Momentum] Please confirm…") and the Atom feeds' absolute links
read the Sites record, not the settings: left at Django's `example.com` they would
name another site. MOMENTUM_SITE_URL and MOMENTUM_SITE_NAME are the truth; the
record follows them at every `migrate` (a data migration and a post_migrate hook)
and, should a process start with settings changed since, on its first request.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.sites.models import SITE_CACHE
from django.core.signals import request_started
from django.db import DatabaseError

logger = logging.getLogger(__name__)


def site_url(path: str = "") -> str:
    """An absolute address on this site, from MOMENTUM_SITE_URL: "/papers/x/" →
    "https://momentum.example/papers/x/"."""
    return settings.MOMENTUM_SITE_URL.rstrip("/") + path


def site_domain() -> str:
    """The host (and port, if any) of MOMENTUM_SITE_URL: what Sites calls a domain."""
    return urlsplit(settings.MOMENTUM_SITE_URL).netloc


def sync_site(site_model: Any = None, using: str = "default") -> bool:
    """Make the current Sites record name this site; True if it had to change.
    Idempotent. `site_model` is the historical model inside a migration."""
    if site_model is None:
        from django.contrib.sites.models import Site as site_model
    wanted = {"domain": site_domain(), "name": settings.MOMENTUM_SITE_NAME}
    site = site_model.objects.using(using).filter(pk=settings.SITE_ID).first()
    if site is not None and all(getattr(site, k) == v for k, v in wanted.items()):
        return False
    site_model.objects.using(using).update_or_create(
        pk=settings.SITE_ID, defaults=wanted
    )
    SITE_CACHE.clear()
    return True


def sync_after_migrate(using: str = "default", **kwargs: object) -> None:
    sync_site(using=using)


def check_on_first_request(**kwargs: object) -> None:
    """Once per process: a record left behind by a settings change is put right
    before any page, feed or mail can read it."""
    request_started.disconnect(check_on_first_request)
    try:
        if sync_site():
            logger.warning(
                "The Sites record did not match MOMENTUM_SITE_URL; it now names %s",
                site_domain(),
            )
    except DatabaseError:
        logger.exception("Could not check the Sites record against the settings")
