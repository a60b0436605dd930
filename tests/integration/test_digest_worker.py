"""Digests end to end: real Redis broker, real Celery workers, a real SMTP server
(aiosmtpd) receiving the mail, PostgreSQL."""

from __future__ import annotations

import bisect
import random
import re
import signal
import zoneinfo
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import time as clock
from datetime import timedelta
from io import StringIO
from urllib.parse import urlparse

import pytest
from allauth.account.models import EmailAddress
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from accounts.models import DIGEST_MAX_PAPERS
from accounts.models import DigestPreferences
from accounts.models import User
from notifications.delivery import claim_timeout
from notifications.delivery import hand_out
from notifications.delivery import open_due_digests
from notifications.models import Digest
from notifications.models import DigestPaper
from notifications.tasks import send_digest
from notifications.tasks import send_due_digests
from papers.models import Paper
from tests.integration.celery_workers import beat_process
from tests.integration.celery_workers import broker_idle
from tests.integration.celery_workers import waiting_in
from tests.integration.celery_workers import worker_process
from tests.integration.smtp_server import body
from tests.integration.smtp_server import smtp_server
from tests.topics.factories import make_topic
from tests.waiting import wait_for
from topics.models import Follow
from topics.models import PaperTopic

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("broker"),
]

START = datetime(2026, 3, 2, tzinfo=UTC)  # two weeks over the US DST change
HOUR = timedelta(hours=1)
# The workers' claim time in the tests that kill one: its claim expires soon.
CLAIM_SECONDS = "2"


@pytest.fixture
def smtp(settings):
    """A real SMTP server; Django sends to it over SMTP."""
    with smtp_server() as (handler, port):
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST = "127.0.0.1"
        settings.EMAIL_PORT = port
        settings.EMAIL_USE_TLS = False
        settings.EMAIL_HOST_USER = ""
        settings.EMAIL_HOST_PASSWORD = ""
        settings.MOMENTUM_DIGEST_RETRY_SECONDS = 0.2
        handler.port = port
        yield handler


@contextmanager
def email_workers(smtp, count: int = 1, **env: str) -> Iterator[None]:
    """Real worker processes on the `email` queue, sending to the test server.
    (Processes, not worker_thread: the in-thread worker fetches a batch of
    tasks only every few seconds, far too slow for hundreds of digests.)"""
    env = {
        "EMAIL_URL": f"smtp://127.0.0.1:{smtp.port}",
        "MOMENTUM_DIGEST_RETRY_SECONDS": "0.2",
        **env,
    }
    workers = [worker_process("email", **env) for _ in range(count)]
    try:
        yield
    finally:
        for worker in workers:
            worker.kill()
            worker.wait(timeout=10)


@contextmanager
def outbox_sweep(tmp_path) -> Iterator[None]:
    """Real beat, sweeping the outbox every second: a deferred digest's retry
    is handed out when its time comes (MOMENTUM_DIGEST_SWEEP_SECONDS). Its
    quarter-hour opening is left out: the tests' periods are in March, and a
    tick would open today's."""
    beat = beat_process(
        tmp_path / "beat",
        MOMENTUM_DIGEST_SWEEP_SECONDS="1",
        MOMENTUM_DIGEST_CRON="0 0 1 1 *",
    )
    try:
        yield
    finally:
        beat.kill()
        beat.wait(timeout=10)


def make_reader(email: str, topics, joined: datetime = START, **prefs) -> User:
    user = User.objects.create_user(email, date_joined=joined)
    EmailAddress.objects.create(user=user, email=email, verified=True, primary=True)
    DigestPreferences.objects.create(user=user, **prefs)
    for topic in topics:
        Follow.objects.create(user=user, topic=topic)
    return user


def publish(topics, day: date, count: int, prefix: str) -> list[Paper]:
    papers = Paper.objects.bulk_create(
        Paper(
            arxiv_id=f"{prefix}.{n:05d}",
            title=f"Paper {prefix}.{n} on {day}",
            abstract="We do a thing. Then another.",
            author_names="Ada Lovelace, Alan Turing",
            first_announced=day,
        )
        for n in range(count)
    )
    PaperTopic.objects.bulk_create(
        PaperTopic(paper=paper, topic=topic) for paper in papers for topic in topics
    )
    return papers


def expected_send_times(prefs: DigestPreferences, end: datetime) -> list[datetime]:
    """Written apart from notifications.schedule: every local send time in
    (START, end], walking the local calendar."""
    zone = zoneinfo.ZoneInfo(prefs.time_zone)
    day = START.astimezone(zone).date() - timedelta(days=1)
    times = []
    while True:
        moment = datetime.combine(day, clock(prefs.hour), tzinfo=zone).astimezone(UTC)
        if moment > end:
            return times
        weekly_match = prefs.frequency == "daily" or day.weekday() == prefs.weekday
        if moment >= START and weekly_match:
            times.append(moment)
        day += timedelta(days=1)


def all_done() -> bool:
    return not Digest.objects.filter(status__in=["pending", "sending"]).exists()


def claims_expired() -> bool:
    """No digest is held by a claim younger than CLAIM_SECONDS: the next tick
    hands out any that are still sending (as delivery.hand_out decides)."""
    fresh = timezone.now() - timedelta(seconds=int(CLAIM_SECONDS))
    return not Digest.objects.filter(status="sending", claimed_at__gte=fresh).exists()


def test_500_users_in_many_time_zones_get_one_digest_per_period_at_their_hour(smtp):
    """GIVEN 500 readers in random time zones, hours and weekdays (one in ten
    daily) and papers harvested every midnight, WHEN beat ticks hourly for two
    weeks on a real worker, THEN each reader gets one digest per period, opened
    by the first tick after their send time, holding exactly the papers of
    their topics harvested since their last digest, each in one email."""
    rng = random.Random(6)
    topics = [
        make_topic(f"Topic {n}", rule=f"ti:t{n}", slug=f"topic-{n}") for n in range(12)
    ]
    zones = sorted(zoneinfo.available_timezones() - {"Factory", "localtime"})
    users = [
        make_reader(
            f"reader{n}@example.com",
            rng.sample(topics, rng.randint(1, 3)),
            frequency="daily" if n % 10 == 0 else "weekly",
            weekday=rng.randrange(7),
            hour=rng.randrange(24),
            time_zone=rng.choice(zones),
            max_papers=DIGEST_MAX_PAPERS,
        )
        for n in range(500)
    ]
    end = START + timedelta(days=14)
    last_tick = end - HOUR
    due_times = {user.pk: expected_send_times(user.digest, last_tick) for user in users}
    all_due = sorted(moment for times in due_times.values() for moment in times)
    # The last topic has papers only on Mondays: some digests have nothing new.
    busy, sparse = topics[:-1], topics[-1]
    created_at: dict[int, datetime] = {}
    opened_at: dict[int, datetime] = {}

    with email_workers(smtp, count=2):
        tick = START
        while tick <= last_tick:
            if tick.hour == 0:  # the day's announcements, harvested at midnight
                day = tick.date()
                papers = publish(busy[day.day % 3 :: 3], day, 2, f"{day:%y%m%d}")
                papers += publish([busy[0], busy[5]], day, 1, f"{day:%y%m%d}8")
                if day.weekday() == 0:
                    papers += publish([sparse], day, 1, f"{day:%y%m%d}9")
                created_at.update({paper.pk: tick for paper in papers})
            known = set(Digest.objects.values_list("pk", flat=True))
            send_due_digests.delay(at=tick.isoformat())
            expected = bisect.bisect_right(all_due, tick)
            wait_for(lambda n=expected: Digest.objects.count() >= n and all_done(), 60)
            assert Digest.objects.count() == expected
            for pk in set(Digest.objects.values_list("pk", flat=True)) - known:
                opened_at[pk] = tick
            tick += HOUR

    by_user = defaultdict(list)
    for digest in Digest.objects.order_by("due_at"):
        by_user[digest.user_id].append(digest)
    sent_papers = defaultdict(list)
    for digest_id, paper_id in DigestPaper.objects.values_list("digest", "paper"):
        sent_papers[digest_id].append(paper_id)
    topic_papers = defaultdict(set)
    for topic_id, paper_id in PaperTopic.objects.values_list("topic", "paper"):
        topic_papers[topic_id].add(paper_id)
    titles = dict(Paper.objects.values_list("pk", "title"))
    received = {str(m["Message-ID"]).strip(): m for m in smtp.messages}
    assert len(received) == len(smtp.messages)  # no message twice

    skipped = 0
    for user in users:
        mine = by_user[user.pk]
        assert [d.due_at for d in mine] == due_times[user.pk]
        followed = set().union(*(topic_papers[f.topic_id] for f in user.follows.all()))
        previous = START - HOUR
        for digest in mine:
            built = opened_at[digest.pk]
            assert digest.due_at <= built < digest.due_at + HOUR
            expected = {p for p in followed if previous < created_at[p] <= built}
            assert sorted(sent_papers[digest.pk]) == sorted(expected)
            if expected:
                assert digest.status == "sent"
                message = received[digest.message_id]
                assert message["To"] == user.email
                text, html = body(message, "plain"), body(message, "html")
                assert all(titles[p] in text and titles[p] in html for p in expected)
            else:
                assert (digest.status, digest.reason[:11]) == ("skipped", "Nothing new")
                skipped += 1
            previous = built
    assert len(smtp.messages) == Digest.objects.filter(status="sent").count() > 1000
    assert skipped > 0


def test_beat_firing_twice_for_the_same_hour_sends_one_digest_each(smtp):
    topic = make_topic("Agents", rule="ti:agent", slug="agents")
    users = [make_reader(f"r{n}@example.com", [topic]) for n in range(20)]
    publish([topic], START.date(), 3, "2603")
    monday_9 = (START + timedelta(hours=9)).isoformat()

    with email_workers(smtp, count=2):
        send_due_digests.delay(at=monday_9)
        send_due_digests.delay(at=monday_9)
        # Every task run, the duplicate tick's too: a second message would be here.
        wait_for(
            lambda: len(smtp.messages) >= 20 and all_done() and broker_idle("email")
        )

    assert Digest.objects.count() == 20
    assert sorted(m["To"] for m in smtp.messages) == sorted(u.email for u in users)


def test_a_worker_killed_midway_through_a_batch_loses_and_duplicates_nothing(smtp):
    topic = make_topic("Agents", rule="ti:agent", slug="agents")
    users = [make_reader(f"r{n:02d}@example.com", [topic]) for n in range(12)]
    publish([topic], START.date(), 2, "2603")
    open_due_digests(at=START + timedelta(hours=9))
    for digest_id in hand_out():
        send_digest.delay(digest_id)
    # The fifth message's RCPT hangs: the worker is killed while sending it.
    smtp.hold_at = 5
    worker_env = {
        "EMAIL_URL": f"smtp://127.0.0.1:{smtp.port}",
        "MOMENTUM_DIGEST_CLAIM_SECONDS": CLAIM_SECONDS,
    }

    worker = worker_process("email", **worker_env)
    try:
        assert smtp.held.wait(60), "the worker never reached the fifth message"
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=10)
    finally:
        if worker.poll() is None:
            worker.kill()
    smtp.release.set()
    assert len(smtp.messages) == 4
    assert Digest.objects.filter(status="sending").count() == 1

    restarted = worker_process("email", **worker_env)
    try:
        wait_for(lambda: len(smtp.messages) == 11, timeout=60)
        wait_for(claims_expired)  # the dead worker's among them
        send_due_digests.delay()  # the next beat tick hands it out again
        wait_for(lambda: Digest.objects.filter(status="sent").count() == 12, 60)
    finally:
        restarted.kill()
        restarted.wait(timeout=10)

    assert sorted(m["To"] for m in smtp.messages) == sorted(u.email for u in users)
    assert set(smtp.message_ids().values()) == {1}


def test_a_message_accepted_but_not_recorded_goes_again_with_its_message_id(smtp):
    """The one window where a digest can arrive twice: the server took the
    message, and the worker died before it heard so (and recorded it). The copy
    sent after the claim expires has the same Message-ID, so the receiving side
    can tell it is the same message (docs/digests.md: Sending once)."""
    topic = make_topic("Agents", rule="ti:agent", slug="agents")
    users = [make_reader(f"r{n:02d}@example.com", [topic]) for n in range(4)]
    publish([topic], START.date(), 2, "2603")
    open_due_digests(at=START + timedelta(hours=9))
    for digest_id in hand_out():
        send_digest.delay(digest_id)
    smtp.accept_then_hold = 2
    worker_env = {
        "EMAIL_URL": f"smtp://127.0.0.1:{smtp.port}",
        "MOMENTUM_DIGEST_CLAIM_SECONDS": CLAIM_SECONDS,
    }

    worker = worker_process("email", **worker_env)
    try:
        assert smtp.held.wait(60), "the worker never sent the second message"
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=10)
    finally:
        if worker.poll() is None:
            worker.kill()
    smtp.release.set()
    unsure = smtp.messages[1]["To"]

    restarted = worker_process("email", **worker_env)
    try:
        wait_for(claims_expired)  # the dead worker's among them
        send_due_digests.delay()  # the next beat tick hands it out again
        wait_for(lambda: Digest.objects.filter(status="sent").count() == 4, 60)
    finally:
        restarted.kill()
        restarted.wait(timeout=10)

    assert len(smtp.messages) == 5
    assert {u.email: len(smtp.to(u.email)) for u in users} == {
        u.email: 2 if u.email == unsure else 1 for u in users
    }
    first, again = smtp.to(unsure)
    assert str(first["Message-ID"]).strip() == str(again["Message-ID"]).strip()


def test_a_temporary_smtp_failure_is_retried_and_then_sent(smtp, tmp_path):
    topic = make_topic("Agents", rule="ti:agent", slug="agents")
    make_reader("alice@example.com", [topic])
    publish([topic], START.date(), 1, "2603")
    smtp.rcpt_replies = ["451 4.3.0 Mailbox busy, try again later"]

    with email_workers(smtp), outbox_sweep(tmp_path):
        send_due_digests.delay(at=(START + timedelta(hours=9)).isoformat())
        wait_for(lambda: Digest.objects.filter(status="sent").exists())

    digest = Digest.objects.get()
    assert digest.attempts == 2
    assert len(smtp.messages) == 1


def test_a_deferred_digest_whose_worker_was_killed_is_retried_once_at_its_time(
    smtp, tmp_path
):
    """The worker that deferred a digest (the mail server refused it for the
    moment) is killed, as a deploy or the OOM killer does, with nothing left
    of the retry but the outbox: beat's sweep hands it out once its retry time
    has come, within a sweep's period, not a claim's time (10 minutes) and a
    quarter hour's tick later; and the digest is mailed once."""
    topic = make_topic("Agents", rule="ti:agent", slug="agents")
    reader = make_reader("alice@example.com", [topic])
    publish([topic], START.date(), 1, "2603")
    smtp.rcpt_replies = ["451 4.3.0 Mailbox busy, try again later"]
    open_due_digests(at=START + timedelta(hours=9))
    for digest_id in hand_out():
        send_digest.delay(digest_id)
    # The claim's time is left at its default: only the outbox's retry time
    # can bring the digest back within the test.
    worker_env = {
        "EMAIL_URL": f"smtp://127.0.0.1:{smtp.port}",
        "MOMENTUM_DIGEST_RETRY_SECONDS": "2",
    }
    log = tmp_path / "worker.log"

    with log.open("wb") as out:
        worker = worker_process("email", log=out, **worker_env)
    try:
        ended = re.compile(
            r"Task notifications\.tasks\.send_digest\[\S+\] (retry|succ)"
        )
        # Its task ended and every message sent meanwhile (a retry's) taken.
        wait_for(lambda: ended.search(log.read_text()) and not waiting_in("email"))
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=10)
    finally:
        if worker.poll() is None:
            worker.kill()
    deferred = Digest.objects.get()
    assert (deferred.status, deferred.attempts, smtp.messages) == ("pending", 1, [])

    restarted = worker_process("email", **worker_env)
    try:
        with outbox_sweep(tmp_path):
            wait_for(lambda: Digest.objects.filter(status="sent").exists(), 60)
            # Any second message for it has run by now.
            wait_for(lambda: broker_idle("email"))
    finally:
        restarted.kill()
        restarted.wait(timeout=10)

    digest = Digest.objects.get()
    assert digest.retry_at is None
    assert deferred.retry_at <= digest.sent_at < deferred.retry_at + claim_timeout()
    assert digest.attempts == 2
    assert [m["To"] for m in smtp.messages] == [reader.email]


def test_a_second_message_for_a_deferred_digest_waits_for_its_retry_time(
    smtp, tmp_path
):
    """A duplicate send_digest, come at once after the deferral, sends nothing
    early: the digest goes at its retry time, later than the grace a retry a
    moment early is given."""
    topic = make_topic("Agents", rule="ti:agent", slug="agents")
    make_reader("alice@example.com", [topic])
    publish([topic], START.date(), 1, "2603")
    smtp.rcpt_replies = ["451 4.3.0 Mailbox busy, try again later"]

    with (
        email_workers(smtp, MOMENTUM_DIGEST_RETRY_SECONDS="14"),
        outbox_sweep(tmp_path),
    ):
        send_due_digests.delay(at=(START + timedelta(hours=9)).isoformat())
        deferred = wait_for(lambda: Digest.objects.filter(retry_at__isnull=False))
        [retry_at] = deferred.values_list("retry_at", flat=True)
        send_digest.delay(deferred[0].pk)
        wait_for(lambda: Digest.objects.filter(status="sent").exists())

    digest = Digest.objects.get()
    assert digest.sent_at >= retry_at
    assert digest.attempts == 2
    assert len(smtp.messages) == 1


def test_a_permanent_smtp_failure_is_recorded_as_failed(smtp):
    topic = make_topic("Agents", rule="ti:agent", slug="agents")
    make_reader("gone@example.com", [topic])
    publish([topic], START.date(), 1, "2603")
    smtp.rcpt_replies = ["550 5.1.1 No such user here"]

    with email_workers(smtp):
        send_due_digests.delay(at=(START + timedelta(hours=9)).isoformat())
        wait_for(lambda: Digest.objects.filter(status="failed").exists())

    digest = Digest.objects.get()
    assert digest.reason == "recipient refused: 550 5.1.1 No such user here"
    assert digest.attempts == 1
    assert smtp.messages == []
    assert not DigestPaper.objects.exists()


def test_unsubscribing_by_the_header_post_or_the_link_stops_further_digests(smtp):
    topic = make_topic("Agents", rule="ti:agent", slug="agents")
    alice = make_reader("alice@example.com", [topic])
    bob = make_reader("bob@example.com", [topic])
    publish([topic], START.date(), 1, "2603")
    call_command("digests", "run", "--at", "2026-03-02T09:00Z", stdout=StringIO())
    [to_alice] = smtp.to(alice.email)
    [to_bob] = smtp.to(bob.email)

    # alice's mail client: RFC 8058 one-click, a POST to the header's URL.
    header = "".join(str(to_alice["List-Unsubscribe"]).split())
    header_url = urlparse(header.removeprefix("<").removesuffix(">"))
    assert to_alice["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    one_click = Client(enforce_csrf_checks=True).post(
        header_url.path,
        "List-Unsubscribe=One-Click",
        content_type="application/x-www-form-urlencoded",
    )
    # bob follows the link in the text part and presses the button.
    link = re.search(r"Unsubscribe: (\S+)", body(to_bob, "plain")).group(1)
    client = Client(enforce_csrf_checks=True)
    page = client.get(urlparse(link).path)
    pressed = client.post(urlparse(link).path)
    publish([topic], date(2026, 3, 5), 1, "2604")
    call_command("digests", "run", "--at", "2026-03-09T09:00Z", stdout=StringIO())

    assert (one_click.status_code, page.status_code, pressed.status_code) == (
        200,
        200,
        200,
    )
    assert len(smtp.messages) == 2
    assert Digest.objects.count() == 2


def test_nothing_new_deleted_and_inactive_users_get_no_mail_and_titles_are_escaped(
    smtp,
):
    topic = make_topic("Agents", rule="ti:agent", slug="agents")
    quiet = make_topic("Quiet", rule="ti:quiet", slug="quiet")
    make_reader("idle@example.com", [quiet])
    make_reader("gone@example.com", [topic]).delete()
    inactive = make_reader("inactive@example.com", [topic])
    User.objects.filter(pk=inactive.pk).update(is_active=False)
    reader = make_reader("reader@example.com", [topic])
    hostile = '<script>alert("digest")</script><img src=x onerror=alert(1)>'
    Paper.objects.filter(
        pk__in=[p.pk for p in publish([topic], START.date(), 1, "2603")]
    ).update(title=hostile)

    out = StringIO()
    call_command("digests", "run", "--at", "2026-03-02T09:00Z", stdout=out)

    assert "2 digest(s) opened; 1 sent, 1 skipped" in out.getvalue()
    [message] = smtp.messages
    assert message["To"] == reader.email
    html = body(message, "html")
    assert "<script>" not in html
    assert "<img src=x" not in html
    assert "&lt;script&gt;alert(&quot;digest&quot;)&lt;/script&gt;" in html
    assert hostile in body(message, "plain")
    idle = Digest.objects.get(user__email="idle@example.com")
    assert (idle.status, idle.reason) == ("skipped", "Nothing new since Feb 23, 2026.")
