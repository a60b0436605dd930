"""Deleting an account and everything that belongs to it."""

from __future__ import annotations

import logging

from django.db import transaction

from accounts.models import User

logger = logging.getLogger(__name__)


@transaction.atomic
def delete_account(*, user: User) -> None:
    """Delete the user with their follows (topics and authors), saved papers,
    ratings, digest preferences, API token, private feed and email addresses
    (all cascade; the topics app moves the follower counts of the topics they
    followed on the way). Topic exclusions a curator made stay, without their
    author."""
    user_id = user.pk
    user.delete()
    logger.info("Deleted account %s", user_id)
