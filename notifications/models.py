from __future__ import annotations

from django.conf import settings
from django.db import models

from accounts.models import DigestPreferences
from papers.models import Paper
from topics.models import Topic


class Digest(models.Model):
    """One email of new papers for one user and period: the outbox row that
    makes sending safe to repeat (see notifications.delivery)."""

    class Kind(models.TextChoices):
        SCHEDULED = "scheduled", "Scheduled"
        TEST = "test", "Test (asked for in settings)"

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        SENDING = "sending", "Sending"
        SENT = "sent", "Sent"
        SKIPPED = "skipped", "Skipped"
        FAILED = "failed", "Failed"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="digests"
    )
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.SCHEDULED)
    frequency = models.CharField(max_length=10, choices=DigestPreferences.Frequency)
    # The period is named by the local day of its send time; it runs from that
    # send time to the next one.
    period_start = models.DateField()
    due_at = models.DateTimeField(help_text="The send time that opened the period.")
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.PENDING
    )
    reason = models.CharField(max_length=500, blank=True)
    # What the email holds, planned once on the first claim so that retries and
    # "view in browser" show the same papers: a list of
    # {"topic": id, "papers": [[paper id, [other topic ids]], ...], "more": n}.
    sections = models.JSONField(null=True, blank=True)
    since = models.DateField(null=True, blank=True)
    paper_count = models.PositiveIntegerField(default=0)
    attempts = models.PositiveSmallIntegerField(default=0)
    # When its send task was last handed to the broker (None: beat's next sweep
    # does, once its retry time has come if it has one).
    enqueued_at = models.DateTimeField(null=True, blank=True)
    # After a temporary failure, the end of the pause before its next try, when
    # beat's sweep hands it out: no sender claims it sooner, whatever message
    # arrives (a redelivered one, a duplicate). Cleared when it is claimed.
    retry_at = models.DateTimeField(null=True, blank=True)
    # A send holds its digest with a claim (token and time); a claim older than
    # MOMENTUM_DIGEST_CLAIM_SECONDS belongs to a dead worker and may be taken over.
    claimed_by = models.CharField(max_length=32, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    to_email = models.EmailField(blank=True)
    message_id = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-due_at", "-pk"]
        constraints = [
            # One scheduled digest per user and period: a repeated beat adds nothing.
            models.UniqueConstraint(
                fields=["user", "period_start"],
                condition=models.Q(kind="scheduled"),
                name="notifications_digest_user_period_unique",
            ),
        ]
        indexes = [
            # The beat tick's work queue: digests waiting for a send task, or
            # held by a claim that may have expired.
            models.Index(
                fields=["status", "enqueued_at"],
                condition=models.Q(status__in=["pending", "sending"]),
                name="digest_outbox_idx",
            ),
            # "Last digest" on settings and each user's latest sent period.
            models.Index(fields=["user", "-due_at"], name="digest_user_recent_idx"),
            # Admin's list, newest first (Meta.ordering): read from here, not
            # by sorting every digest ever sent.
            models.Index(fields=["-due_at", "-id"], name="digest_recent_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.user} {self.period_start} ({self.status})"

    @property
    def new_count(self) -> int:
        """Every new paper it counts, as its subject does: those it shows and
        those past its cap ("and N more")."""
        more = sum(section.get("more", 0) for section in self.sections or [])
        return self.paper_count + more


class DigestPaper(models.Model):
    """A paper put in one of a user's digests, shown or counted under "and N
    more"; unique per user, so no paper is ever new to the same person twice."""

    digest = models.ForeignKey(Digest, on_delete=models.CASCADE, related_name="items")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="+")
    topic = models.ForeignKey(
        Topic, on_delete=models.SET_NULL, null=True, related_name="+"
    )

    class Meta:
        constraints = [
            # Leads with user: building a digest reads one user's sent papers.
            models.UniqueConstraint(
                fields=["user", "paper"],
                name="notifications_digestpaper_user_paper_unique",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.paper_id} to {self.user_id}"
