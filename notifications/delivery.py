"""The digest outbox: opening one digest per user and period, handing them to
senders, and sending each exactly once.

Every step is safe to repeat. Opening relies on the unique (user, period)
constraint; handing out marks rows under SKIP LOCKED so two ticks do not send
the same row twice; sending claims rows with a conditional UPDATE (healthchecks'
pattern) and every later write is conditional on that claim, so a worker that
lost its claim (it ran past the claim time, or died) cannot overwrite the one
that took over. A claim left by a dead worker expires and the next sweep hands
the digest out again. A temporary failure's retry is kept here too, as the
digest's retry time, which the sweep honours: no message in a worker's hands
holds it, to be lost with a killed worker.
"""

from __future__ import annotations

import logging
import random
import uuid
from collections import Counter
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from datetime import timedelta
from typing import Any

from allauth.account.models import EmailAddress
from django.conf import settings
from django.db import IntegrityError
from django.db import transaction
from django.db.models import Exists
from django.db.models import F
from django.db.models import OuterRef
from django.db.models import Q
from django.db.models import QuerySet
from django.db.models import Subquery
from django.template.defaultfilters import pluralize
from django.utils import timezone

from accounts.models import DigestPreferences
from accounts.models import User
from core.mail import message_id
from notifications.content import Content
from notifications.content import shape_digests
from notifications.digest import request_for
from notifications.mailer import Mailer
from notifications.mailer import PermanentSendError
from notifications.mailer import TransientSendError
from notifications.mailer import build_message
from notifications.mailer import render_digest
from notifications.mailer import site_url
from notifications.mailer import unsubscribe_url
from notifications.models import Digest
from notifications.models import DigestPaper
from notifications.plan import Plan
from notifications.plan import PlanRequest
from notifications.plan import plan_digests
from notifications.schedule import OFF
from notifications.schedule import Schedule
from papers.models import AuthorFollow
from topics.models import Follow
from topics.models import SavedSearch
from topics.models import Topic

logger = logging.getLogger(__name__)

Status = Digest.Status


# What admin's "resend" puts back in the outbox.
FINISHED = [Status.SENT, Status.FAILED, Status.SKIPPED]


def claim_timeout() -> timedelta:
    return timedelta(seconds=settings.MOMENTUM_DIGEST_CLAIM_SECONDS)


# A retry is handed out once its retry time has come by the clock of the
# process that sweeps (or of the embedded default's timer); the worker that
# takes it may run a moment behind, or its clock have stepped back, and it is
# taken then, not left for a sweep a claim's time later. Far below the shortest
# pause (half of MOMENTUM_DIGEST_RETRY_SECONDS), so a duplicate message still
# waits.
RETRY_GRACE = timedelta(seconds=5)


# Opening ---------------------------------------------------------------------


def open_due_digests(*, at: datetime) -> int:
    """Open the digest of the current period for every user whose send time has
    come by `at`; idempotent. Returns how many it tried to open."""
    unmuted = Follow.objects.filter(
        user=OuterRef("pk"), muted=False, topic__is_active=True
    )
    authors = AuthorFollow.objects.filter(user=OuterRef("pk"))
    searches = SavedSearch.objects.filter(user=OuterRef("pk"))
    last_due = Digest.objects.filter(
        user=OuterRef("pk"), kind=Digest.Kind.SCHEDULED
    ).order_by("-due_at")
    users = (
        User.objects.filter(
            Exists(unmuted) | Exists(authors) | Exists(searches), is_active=True
        )
        .exclude(digest__frequency=OFF)
        .annotate(last_due=Subquery(last_due.values("due_at")[:1]))
        .values_list(
            "pk",
            "date_joined",
            "digest__frequency",
            "digest__weekday",
            "digest__hour",
            "digest__time_zone",
            "last_due",
        )
    )
    new = []
    for pk, joined, frequency, weekday, hour, zone, last in users.iterator(2000):
        schedule = Schedule(frequency, weekday, hour, zone) if frequency else Schedule()
        day, due = schedule.current_period(at)
        # Not for a period that began before the account existed (its first
        # digest comes at its first send time), nor a second one in a period
        # after a schedule change (a digest due later than this period's
        # start was already opened).
        if due < joined or (last is not None and last >= due):
            continue
        new.append(
            Digest(
                user_id=pk,
                frequency=schedule.frequency,
                period_start=day,
                due_at=due,
            )
        )
    Digest.objects.bulk_create(new, ignore_conflicts=True, batch_size=1000)
    return len(new)


def next_due(user: User, schedule: Schedule, now: datetime) -> datetime:
    """When the user's next scheduled digest is due, as open_due_digests opens
    them: not in a period that has one already, nor before one already opened
    (after a schedule change, the next period's). At or before `now` when it is
    the current period's, which has none yet: the outbox's next round opens it
    (a send time moved earlier than the last digest's, a first follow)."""
    # Those that can stand in its way, one of its period or one due after it,
    # are due no earlier than a day or so before `now` (time zones apart).
    opened = dict(
        Digest.objects.filter(
            user=user, kind=Digest.Kind.SCHEDULED, due_at__gte=now - timedelta(days=9)
        ).values_list("period_start", "due_at")
    )
    last_due = max(opened.values(), default=None)

    def taken(due: datetime) -> bool:
        return schedule.current_period(due)[0] in opened or (
            last_due is not None and due <= last_due
        )

    _, due = schedule.current_period(now)
    if due >= user.date_joined and not taken(due):
        return due
    due = schedule.next_send_time(now)
    while taken(due):
        due = schedule.next_send_time(due)
    return due


def hand_out(*, now: datetime | None = None, limit: int | None = None) -> list[int]:
    """Mark the digests that need a send task (new, deferred and whose retry
    time has come, lost, or held by an expired claim) as handed out and return
    their ids. Two concurrent calls never return the same digest."""
    now = now or timezone.now()
    stale = now - claim_timeout()
    # Pending, past its retry time if deferred, with no task sent (since the
    # deferral), or whose task is lost: not claimed a claim's time after.
    needs_task = (Q(enqueued_at__isnull=True) | Q(enqueued_at__lt=stale)) & (
        Q(retry_at__isnull=True) | Q(retry_at__lte=now)
    )
    waiting = Digest.objects.filter(
        Q(needs_task, status=Status.PENDING)
        | Q(status=Status.SENDING, claimed_at__lt=stale)
    ).order_by("due_at", "pk")
    with transaction.atomic():
        # Rows another tick is handing out are locked: skip them, it has them.
        ids = list(
            waiting.select_for_update(skip_locked=True).values_list("pk", flat=True)[
                :limit
            ]
        )
        Digest.objects.filter(pk__in=ids).update(enqueued_at=now)
    return ids


def leave_to_the_sweep(digest_id: int) -> None:
    """A digest whose send task the broker did not take: beat's next sweep
    hands it out (hand_out), not the first after its claim would expire."""
    Digest.objects.filter(pk=digest_id, status=Status.PENDING).update(enqueued_at=None)


def request_test_digest(*, user: User) -> Digest:
    """Open a test digest for `user` (sent at once, papers not marked as sent)."""
    schedule = Schedule.of(DigestPreferences.objects.for_user(user))
    now = timezone.now()
    day, _ = schedule.current_period(now)
    return Digest.objects.create(
        user=user,
        kind=Digest.Kind.TEST,
        frequency=schedule.frequency,
        period_start=day,
        due_at=now,
        enqueued_at=now,
    )


# Sending ---------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    digest_id: int
    status: str
    # Seconds until the next attempt, when a temporary failure deferred it.
    retry_in: float | None = None


def send_digests(digest_ids: Sequence[int], *, mailer: Mailer) -> list[Outcome]:
    """Claim, plan, render and send these digests over one mail connection.
    Digests another sender holds, already finished, or deferred until a retry
    time not yet come are left alone."""
    claim = uuid.uuid4().hex
    now = timezone.now()
    paused = Q(retry_at__gt=now + RETRY_GRACE)
    claimed = Digest.objects.filter(pk__in=digest_ids).filter(
        Q(status=Status.PENDING) & ~paused
        | Q(status=Status.SENDING, claimed_at__lt=now - claim_timeout())
    )
    taken = claimed.update(
        status=Status.SENDING,
        claimed_by=claim,
        claimed_at=now,
        retry_at=None,
        attempts=F("attempts") + 1,
    )
    if not taken:
        return []
    digests = list(
        Digest.objects.filter(pk__in=digest_ids, claimed_by=claim)
        .select_related("user", "user__digest")
        .order_by("pk")
    )
    outcomes: list[Outcome] = []
    ready = []
    addresses = _verified_addresses(d.user_id for d in digests)
    for digest in digests:
        reason = _skip_reason(digest, addresses.get(digest.user_id))
        if reason:
            outcomes.append(_finish(digest, claim, Status.SKIPPED, reason))
        else:
            digest.to_email = addresses[digest.user_id]
            ready.append(digest)
    _unplan_gone_sections(ready, claim)
    outcomes.extend(_plan_and_record(ready, claim))
    to_send = [d for d in ready if d.pk not in {o.digest_id for o in outcomes}]
    contents = shape_digests(
        # _plan_and_record planned (since, sections) every digest it left to send.
        (Plan(d.since, d.sections) for d in to_send),  # type: ignore[arg-type]
        site_url=site_url(),
    )
    for digest, content in zip(to_send, contents, strict=True):
        outcomes.append(_send_one(digest, content, claim, mailer))
    return outcomes


def _verified_addresses(user_ids: Iterable[int]) -> dict[int, str]:
    """Each user's verified address, the primary one first."""
    addresses: dict[int, str] = {}
    rows = (
        EmailAddress.objects.filter(user_id__in=list(user_ids), verified=True)
        .order_by("-primary", "pk")
        .values_list("user_id", "email")
    )
    for user_id, email in rows:
        addresses.setdefault(user_id, email)
    return addresses


def _skip_reason(digest: Digest, address: str | None) -> str:
    user = digest.user
    if not user.is_active:
        return "The account is inactive."
    if address is None:
        return "No verified email address."
    preferences = DigestPreferences.objects.for_user(user)
    scheduled = digest.kind == Digest.Kind.SCHEDULED
    if scheduled and preferences.frequency == OFF:
        return "Unsubscribed before it was sent."
    return ""


def _plan_request(digest: Digest) -> PlanRequest:
    # A test digest holds the latest week harvested, whatever was sent before.
    fresh = digest.kind == Digest.Kind.TEST
    return request_for(
        digest.user,
        digest.period_start,
        digest.due_at,
        digest_id=digest.pk,
        fresh=fresh,
    )


def _unplan_gone_sections(digests: list[Digest], claim: str) -> None:
    """Make a planned digest with a section whose topic or saved search is gone
    since it was planned (a retry after a curator merged or deleted the topic)
    to be planned again: its papers are freed, to come under the topic they
    moved to, if the reader follows it, rather than in a section that can no
    longer be shown."""
    planned: list[tuple[Digest, list[dict[str, Any]]]] = [
        (digest, digest.sections) for digest in digests if digest.sections
    ]
    topics = {s["topic"] for _, sections in planned for s in sections if s["topic"]}
    searches = {
        s["search"] for _, sections in planned for s in sections if s.get("search")
    }
    topics -= set(Topic.objects.filter(pk__in=topics).values_list("pk", flat=True))
    searches -= set(
        SavedSearch.objects.filter(pk__in=searches).values_list("pk", flat=True)
    )
    gone = [
        digest
        for digest, sections in planned
        if any(
            section["topic"] in topics or section.get("search") in searches
            for section in sections
        )
    ]
    if not gone:
        return
    with transaction.atomic():
        held = set(
            Digest.objects.filter(pk__in=[d.pk for d in gone], claimed_by=claim)
            .select_for_update()
            .values_list("pk", flat=True)
        )
        DigestPaper.objects.filter(digest_id__in=held).delete()
        Digest.objects.filter(pk__in=held).update(
            sections=None, since=None, paper_count=0
        )
    for digest in (d for d in gone if d.pk in held):
        logger.info(
            "digest %s: a section's topic or search is gone; planned anew", digest.pk
        )
        digest.sections = None


def _plan_and_record(digests: list[Digest], claim: str) -> list[Outcome]:
    """Plan the digests not planned yet (in one batch) and record their papers
    as sent to the user; returns the outcomes of those with nothing new."""
    unplanned = [d for d in digests if d.sections is None]
    plans = plan_digests([_plan_request(d) for d in unplanned]) if unplanned else {}
    outcomes = []
    for digest in unplanned:
        plan = plans[digest.user_id]
        if not plan.sections:
            reason = f"Nothing new since {plan.since:%b %-d, %Y}."
            outcomes.append(_finish(digest, claim, Status.SKIPPED, reason))
            continue
        try:
            _record(digest, plan, claim)
        except IntegrityError:
            # A paper went out in another digest of this user meanwhile: plan
            # again without it.
            _record(
                digest, plan_digests([_plan_request(digest)])[digest.user_id], claim
            )
    return outcomes


@transaction.atomic
def _record(digest: Digest, plan: Plan, claim: str) -> None:
    digest.since = plan.since
    digest.sections = plan.sections
    digest.paper_count = plan.paper_count
    digest.message_id = digest.message_id or _message_id(digest)
    Digest.objects.filter(pk=digest.pk, claimed_by=claim).update(
        since=digest.since,
        sections=digest.sections,
        paper_count=digest.paper_count,
        message_id=digest.message_id,
        to_email=digest.to_email,
    )
    if digest.kind == Digest.Kind.SCHEDULED:
        # Those past the cap too: counted as new and linked, they are not new
        # in the next digest, whose days overlap this one's.
        shown = [
            (paper_id, section["topic"])
            for section in plan.sections
            for paper_id, *_ in section["papers"]
        ]
        DigestPaper.objects.bulk_create(
            DigestPaper(
                digest_id=digest.pk,
                user_id=digest.user_id,
                paper_id=paper_id,
                topic_id=topic_id,
            )
            for paper_id, topic_id in shown + plan.counted
        )


def _message_id(digest: Digest) -> str:
    """Made once per digest and kept across retries, so a receiver can tell a
    retried message from a new one."""
    return message_id(f"digest{digest.pk}")


# What an outcome says of a digest another sender took over meanwhile.
TAKEN_OVER = "taken over"


def _send_one(digest: Digest, content: Content, claim: str, mailer: Mailer) -> Outcome:
    # A batch's digests wait their turn behind those before it (a slow mail
    # server): the claim is renewed for each as it goes, and one whose claim
    # ran out and was taken over is left to its new sender, not sent twice.
    # The address it goes to is recorded as it goes: a retry's may not be the
    # one it was planned for (the reader changed address meanwhile).
    held = Digest.objects.filter(pk=digest.pk, claimed_by=claim)
    if not held.update(claimed_at=timezone.now(), to_email=digest.to_email):
        logger.warning(
            "digest %s: claim lost before sending; left to its new sender", digest.pk
        )
        return Outcome(digest.pk, TAKEN_OVER)
    if not digest.message_id:
        # A resent digest gets a new Message-ID: clients drop repeated ones.
        digest.message_id = _message_id(digest)
        Digest.objects.filter(pk=digest.pk, claimed_by=claim).update(
            message_id=digest.message_id
        )
    if not content.sections:
        # Every paper it held was deleted since it was planned: no empty email.
        return _free(digest, claim, Status.SKIPPED, "Its papers were deleted.")
    rendered = render_digest(
        user=digest.user,
        content=content,
        digest_id=digest.pk,
        test=digest.kind == Digest.Kind.TEST,
    )
    message = build_message(
        to=digest.to_email,
        rendered=rendered,
        unsubscribe=unsubscribe_url(digest.user, header=True),
        message_id=digest.message_id,
    )
    try:
        mailer.send(message)
    except PermanentSendError as exc:
        return _fail(digest, claim, str(exc))
    except TransientSendError as exc:
        return _defer(digest, claim, exc)
    return _finish(digest, claim, Status.SENT, "", sent_at=timezone.now())


def _finish(
    digest: Digest, claim: str, status: str, reason: str, **fields: object
) -> Outcome:
    updated = Digest.objects.filter(pk=digest.pk, claimed_by=claim).update(
        status=status, reason=reason, claimed_by="", **fields
    )
    if not updated:
        logger.warning(
            "digest %s: claim lost before it could be marked %s", digest.pk, status
        )
    else:
        logger.info("digest %s %s %s", digest.pk, status, reason)
    return Outcome(digest.pk, status)


def _fail(digest: Digest, claim: str, reason: str) -> Outcome:
    return _free(digest, claim, Status.FAILED, reason)


@transaction.atomic
def _free(digest: Digest, claim: str, status: str, reason: str) -> Outcome:
    """Finish a digest that was not delivered, its papers freed for the next
    (unless another sender took it over meanwhile: its papers are its own)."""
    DigestPaper.objects.filter(digest_id=digest.pk, digest__claimed_by=claim).delete()
    return _finish(digest, claim, status, reason)


def _defer(digest: Digest, claim: str, error: TransientSendError) -> Outcome:
    """Put a digest back in the outbox after a temporary failure, or give up."""
    reason = str(error)
    if _gives_up(digest, error):
        tries = f"{digest.attempts} attempt{pluralize(digest.attempts)}"
        return _fail(digest, claim, f"Gave up after {tries}: {reason}")
    # Exponential backoff with jitter (half to all of the ceiling), so digests
    # that failed together do not retry together.
    ceiling = min(
        settings.MOMENTUM_DIGEST_RETRY_SECONDS * 2 ** min(digest.attempts - 1, 32),
        settings.MOMENTUM_DIGEST_RETRY_MAX_SECONDS,
    )
    delay = random.uniform(ceiling / 2, ceiling)
    # The retry is the outbox's: beat's sweep hands it out once retry_at has
    # come (no task is out for it meanwhile), whether or not this worker lives
    # until then, and no sender claims it sooner (a message redelivered, a
    # duplicate).
    Digest.objects.filter(pk=digest.pk, claimed_by=claim).update(
        status=Status.PENDING,
        reason=f"Will retry: {reason}"[:500],
        claimed_by="",
        enqueued_at=None,
        retry_at=timezone.now() + timedelta(seconds=delay),
    )
    logger.info(
        "digest %s deferred %.0fs after attempt %s: %s",
        digest.pk,
        delay,
        digest.attempts,
        reason,
    )
    return Outcome(digest.pk, Status.PENDING, retry_in=delay)


def _gives_up(digest: Digest, error: TransientSendError) -> bool:
    """Whether a temporary failure ends the digest's tries: after
    MOMENTUM_DIGEST_MAX_ATTEMPTS of them. But a mail server out of reach fails
    every message alike, however long it is down: a scheduled digest then waits
    for it until its last try before the next period's digest is due, so that
    its papers, freed, are that digest's."""
    if error.server_down and digest.kind == Digest.Kind.SCHEDULED:
        # By the reader's schedule as it is now, as the outbox opens the next
        # one: a week across a change of clocks is 167 hours (a day 23), and
        # a reader may have moved to daily digests meanwhile.
        schedule = Schedule.of(DigestPreferences.objects.for_user(digest.user))
        next_at = schedule.next_send_time(digest.due_at)
        # One in this digest's period opens none (its hour moved later that day).
        while schedule.current_period(next_at)[0] == digest.period_start:
            next_at = schedule.next_send_time(next_at)
        last_try = next_at - timedelta(
            seconds=settings.MOMENTUM_DIGEST_RETRY_MAX_SECONDS
        )
        if timezone.now() < last_try:
            return False
    return digest.attempts >= settings.MOMENTUM_DIGEST_MAX_ATTEMPTS


def summarize(outcomes: Iterable[Outcome]) -> Counter[str]:
    return Counter(outcome.status for outcome in outcomes)


def resend(digests: QuerySet[Digest]) -> list[int]:
    """Put finished digests back in the outbox (admin's "resend") and return
    their ids, to be sent. A sent one goes again with the same papers; a failed
    or skipped one is planned anew."""
    again = {
        "status": Status.PENDING,
        "attempts": 0,
        "reason": "",
        "enqueued_at": timezone.now(),
        "message_id": "",
    }
    with transaction.atomic():
        done = digests.filter(status__in=FINISHED)
        ids = list(done.select_for_update().values_list("pk", flat=True))
        Digest.objects.filter(pk__in=ids, status=Status.SENT).update(**again)
        Digest.objects.filter(pk__in=ids).exclude(status=Status.PENDING).update(
            **again, sections=None, paper_count=0
        )
    return ids
