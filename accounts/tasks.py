"""Account mail (a sign-up's confirmation, a reset link, a notice of a change)
that the mail server did not take when asked: sent again from a worker; and
the sessions past their expiry, deleted."""

from __future__ import annotations

import logging
import smtplib
from typing import Any

from celery import shared_task
from django.core.mail import EmailMessage
from django.core.mail import EmailMultiAlternatives

from accounts.sessions import SessionStore
from core.mail import is_permanent
from core.tasks import durable

logger = logging.getLogger(__name__)

# Pauses of 1, 2, 4 … 60 minutes: about twelve hours in all.
RETRIES = 16


def as_data(message: EmailMessage) -> dict[str, Any]:
    """The message as a task's JSON arguments."""
    html = [
        content
        for content, mimetype in getattr(message, "alternatives", [])
        if mimetype == "text/html"
    ]
    return {
        "subject": message.subject,
        "body": message.body,
        "html": html[0] if html else None,
        "from_email": message.from_email,
        "to": list(message.to),
        "reply_to": list(message.reply_to),
        "headers": dict(message.extra_headers),
    }


@shared_task(bind=True, **durable())
def send_account_mail(task: Any, data: dict[str, Any]) -> None:
    message = EmailMultiAlternatives(
        data["subject"],
        data["body"],
        data["from_email"],
        data["to"],
        headers=data["headers"],
        reply_to=data.get("reply_to"),  # a task queued by the release before has none
    )
    if data["html"]:
        message.attach_alternative(data["html"], "text/html")
    try:
        message.send()
    except (OSError, smtplib.SMTPException) as exc:
        if is_permanent(exc) or task.request.retries >= RETRIES:
            logger.error("account mail to %s given up: %s", data["to"], exc)
            return
        pause = min(60 * 2**task.request.retries, 3600)
        raise task.retry(exc=exc, countdown=pause) from exc
    logger.info(
        "account mail to %s sent on try %s", data["to"], task.request.retries + 1
    )


@shared_task(ignore_result=True)
def clear_expired_sessions() -> None:
    """Delete the sessions past their expiry (Django's clearsessions), which
    stay otherwise: each holds its reader's id and address (allauth's record
    of the log-in), for good, after their account is deleted too."""
    SessionStore.clear_expired()
