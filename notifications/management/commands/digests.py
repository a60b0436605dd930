from __future__ import annotations

from argparse import ArgumentTypeError
from datetime import UTC
from datetime import datetime
from typing import Any

from django.core.management.base import BaseCommand
from django.core.management.base import CommandError
from django.core.management.base import CommandParser
from django.utils import timezone

from accounts.models import DigestPreferences
from accounts.models import User
from notifications.delivery import TAKEN_OVER
from notifications.delivery import hand_out
from notifications.delivery import open_due_digests
from notifications.delivery import send_digests
from notifications.delivery import summarize
from notifications.digest import preview_content
from notifications.mailer import Mailer
from notifications.mailer import render_digest
from notifications.mailer import site_url
from notifications.models import Digest
from notifications.schedule import OFF
from notifications.schedule import Schedule

BATCH = 200


ARXIV_BEGAN = datetime(1991, 1, 1, tzinfo=UTC)


def instant(raw: str) -> datetime:
    """An ISO 8601 date-time, from 1991 on; without an offset it is taken as UTC.
    argparse's own error: a usage message, not a traceback."""
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        raise ArgumentTypeError(f"{raw!r} is not an ISO 8601 date-time") from None
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    if moment < ARXIV_BEGAN:
        raise ArgumentTypeError(f"{raw!r} is before arXiv began (1991)")
    return moment


class Command(BaseCommand):
    help = "Send the digests that are due, or print a user's next digest."

    def add_arguments(self, parser: CommandParser) -> None:
        commands = parser.add_subparsers(dest="command", required=True)
        run = commands.add_parser(
            "run",
            help="Open and send, in this process, every digest due now (or at --at), "
            "including any missed while workers were down. Safe to repeat.",
        )
        run.add_argument("--at", type=instant, help="ISO 8601 date-time (default: now)")
        preview = commands.add_parser(
            "preview", help="Print the user's next digest as text."
        )
        preview.add_argument("email")
        preview.add_argument("--at", type=instant, help="as if built at this time")

    def handle(self, *args: Any, **options: Any) -> None:
        at = options["at"] or timezone.now()
        if options["command"] == "run":
            self.run(at)
        else:
            self.preview(options["email"], at)

    def run(self, at: datetime) -> None:
        if at > timezone.now():
            # Opened now, a later period's digest would hold back every real
            # one until then (one digest a period).
            raise CommandError(
                f"--at is in the future ({at:%Y-%m-%d %H:%M %Z}): digests are "
                "sent when they are due. `digests preview EMAIL --at` shows a "
                "later one."
            )
        opened = open_due_digests(at=at)
        ids = hand_out()
        mailer = Mailer()
        outcomes = []
        try:
            for start in range(0, len(ids), BATCH):
                outcomes += send_digests(ids[start : start + BATCH], mailer=mailer)
        finally:
            mailer.close()
        counts = summarize(outcomes)
        self.stdout.write(
            f"Due at {at:%Y-%m-%d %H:%M %Z}: {opened} digest(s) opened; "
            f"{counts['sent']} sent, {counts['skipped']} skipped, "
            f"{counts['failed']} failed, {counts['pending']} to retry"
            + (
                f", {counts[TAKEN_OVER]} taken over by another run."
                if counts[TAKEN_OVER]
                else "."
            )
        )
        # Exit non-zero, so that a cron job running it sees what did not go:
        # the reasons are in admin (Notifications -> Digests) and the log above.
        if undelivered := counts["failed"] + counts["pending"]:
            raise CommandError(
                f"{undelivered} digest(s) not delivered: their reasons are in admin "
                "(Digests); those to retry go at the outbox's next round or run"
            )

    def preview(self, email: str, at: datetime) -> None:
        user = User.objects.filter(email__iexact=email).first()
        if user is None:
            raise CommandError(f"No user with the email address {email}")
        # As the send would skip it (notifications.delivery).
        if not user.is_active:
            self.stdout.write(
                f"{user.email}'s account is inactive: no digest goes to it."
            )
            return
        if DigestPreferences.objects.for_user(user).frequency == OFF:
            self.stdout.write(
                f"{user.email} has turned digests off: none goes to them."
            )
            return
        if opened := self._opened(user, at):
            self.stdout.write(opened)
            return
        content = preview_content(user, at=at, site_url=site_url())
        if not content.sections:
            self.stdout.write(
                f"Nothing new for {user.email} since {content.since:%b %-d, %Y}: "
                "their digest would be skipped."
            )
            return
        rendered = render_digest(user=user, content=content, digest_id=None)
        self.stdout.write(f"Subject: {rendered.subject}\nTo: {user.email}\n")
        self.stdout.write(rendered.text)

    def _opened(self, user: User, at: datetime) -> str:
        """What became of the digest of the period at `at`, when `digests run`
        opened it already and sends nothing more for it; else ""."""
        schedule = Schedule.of(DigestPreferences.objects.for_user(user))
        _, due = schedule.current_period(at)
        digest = (
            Digest.objects.filter(
                user=user, kind=Digest.Kind.SCHEDULED, due_at__gte=due
            )
            .order_by("due_at")
            .first()
        )
        if digest is None:
            return ""
        if digest.due_at > due:  # --at before a later period's digest opened
            return (
                f"{user.email} has a digest of a later period (from "
                f"{digest.period_start:%b %-d, %Y}) already: `digests run` at this "
                "instant opens none."
            )
        became = "is being sent"
        reason = digest.reason.rstrip(".")
        if digest.status == Digest.Status.SENT:
            became = "was sent"
        elif digest.status == Digest.Status.SKIPPED:
            became = f"was skipped ({reason})"
        elif digest.status == Digest.Status.FAILED:
            became = f"could not be delivered ({reason})"
        following = schedule.next_send_time(at).astimezone(UTC)
        return (
            f"{user.email}'s digest of the period from "
            f"{digest.period_start:%b %-d, %Y} {became}: `digests run` sends nothing "
            f"more for it. The next is due {following:%Y-%m-%d %H:%M} UTC: "
            f"`digests preview {user.email} --at {following:%Y-%m-%dT%H:%MZ}` shows it."
        )
