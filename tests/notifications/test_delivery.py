"""The outbox: opening one digest per user and period, and sending it once."""

from __future__ import annotations

import logging
import re
import smtplib
from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import timedelta
from unittest import mock

import pytest
from allauth.account.models import EmailAddress
from celery.exceptions import SoftTimeLimitExceeded
from django.core import mail
from django.core.mail import EmailMultiAlternatives
from django.core.mail.backends.smtp import EmailBackend as SMTPBackend
from django.test import override_settings
from django.utils import timezone

import notifications.tasks
from accounts.models import User
from notifications.delivery import TAKEN_OVER
from notifications.delivery import Outcome
from notifications.delivery import _fail
from notifications.delivery import _unplan_gone_sections
from notifications.delivery import claim_timeout
from notifications.delivery import hand_out
from notifications.delivery import next_due
from notifications.delivery import open_due_digests
from notifications.delivery import resend
from notifications.delivery import send_digests
from notifications.mailer import Mailer
from notifications.mailer import PermanentSendError
from notifications.mailer import TransientSendError
from notifications.mailer import classify
from notifications.models import Digest
from notifications.models import DigestPaper
from notifications.preferences import unsubscribe
from notifications.schedule import Schedule
from notifications.tasks import send_digest
from notifications.tasks import worker_mailer
from notifications.tokens import read_token
from notifications.tokens import unsubscribe_token
from papers.models import Paper
from tests.accounts.factories import verified
from tests.integration.smtp_server import free_port
from tests.integration.smtp_server import smtp_server
from tests.notifications.factories import FAILING_BACKEND
from tests.notifications.factories import FailingBackend
from tests.notifications.factories import add_papers
from tests.notifications.factories import preferences
from tests.topics.factories import make_topic
from topics.curation import merge_topics
from topics.models import Follow

pytestmark = pytest.mark.django_db

JOINED = datetime(2026, 7, 1, tzinfo=UTC)
MONDAY_9 = datetime(2026, 7, 13, 9, tzinfo=UTC)  # default: Mondays 08:00 UTC


@pytest.fixture
def subscriber(subscriber):
    """The subscriber, who joined before the period began."""
    User.objects.filter(pk=subscriber.pk).update(date_joined=JOINED)
    subscriber.refresh_from_db()
    return subscriber


def send_due(at: datetime) -> list:
    open_due_digests(at=at)
    return send_digests(hand_out(), mailer=Mailer())


def retry(digest_id: int) -> Outcome:
    """A deferred digest's retry, sent at its retry time."""
    retry_at = Digest.objects.get(pk=digest_id).retry_at
    with mock.patch("django.utils.timezone.now", return_value=retry_at):
        [outcome] = send_digests([digest_id], mailer=Mailer())
    return outcome


def test_opens_one_digest_per_user_and_period_however_often_it_runs(subscriber):
    open_due_digests(at=MONDAY_9)
    open_due_digests(at=MONDAY_9)
    open_due_digests(at=MONDAY_9 + timedelta(hours=30))

    [digest] = Digest.objects.all()
    assert (digest.period_start, digest.due_at) == (
        date(2026, 7, 13),
        datetime(2026, 7, 13, 8, tzinfo=UTC),
    )


def test_no_digest_for_a_period_that_began_before_the_account(subscriber):
    User.objects.filter(pk=subscriber.pk).update(date_joined=MONDAY_9)

    open_due_digests(at=MONDAY_9 + timedelta(hours=1))

    assert not Digest.objects.exists()


def test_a_schedule_change_does_not_give_a_second_digest_in_the_period(subscriber):
    open_due_digests(at=MONDAY_9)
    # Moved to Fridays on Wednesday: the current period then began on the
    # Friday before, earlier than the digest already opened on Monday.
    preferences(subscriber, weekday=4)

    open_due_digests(at=MONDAY_9 + timedelta(days=2))
    assert Digest.objects.count() == 1
    open_due_digests(at=MONDAY_9 + timedelta(days=4))
    assert Digest.objects.count() == 2


@pytest.mark.parametrize(
    "change",
    [
        lambda user: User.objects.filter(pk=user.pk).update(is_active=False),
        lambda user: preferences(user, frequency="off"),
        lambda user: Follow.objects.filter(user=user).update(muted=True),
    ],
    ids=["inactive", "off", "all-muted"],
)
def test_no_digest_is_opened_for(subscriber, change):
    change(subscriber)

    open_due_digests(at=MONDAY_9)

    assert not Digest.objects.exists()


def test_sends_the_new_papers_once_in_text_and_html(subscriber, agents):
    [paper] = add_papers(agents, date(2026, 7, 10), title="Agents that plan")

    [outcome] = send_due(MONDAY_9)

    assert outcome.status == "sent"
    [message] = mail.outbox
    html = message.alternatives[0][0]
    assert message.to == ["alice@example.com"]
    assert message.subject == "1 new paper in Agents"
    assert "Agents that plan" in message.body
    assert "Agents that plan" in html
    assert f"https://momentum.example/papers/{paper.arxiv_id}/" in message.body
    assert "https://momentum.example/digest/preview/?digest=" in html
    digest = Digest.objects.get()
    assert digest.status == "sent"
    assert digest.paper_count == 1
    assert message.extra_headers["Message-ID"] == digest.message_id
    assert list(DigestPaper.objects.values_list("paper_id", flat=True)) == [paper.pk]


def test_headers_offer_one_click_unsubscribe(subscriber, agents):
    add_papers(agents, date(2026, 7, 10))

    send_due(MONDAY_9)

    message = mail.outbox[0]
    headers = message.extra_headers
    assert headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert headers["List-Unsubscribe"].startswith(
        "<https://momentum.example/unsubscribe/"
    )
    # The header's link is its own: the body's goes on when the mail is forwarded.
    header_token = headers["List-Unsubscribe"].strip("<>").rstrip("/").split("/")[-1]
    assert read_token(header_token).header
    assert header_token not in message.body
    assert unsubscribe_token(subscriber) in message.body


def test_the_inbox_preview_names_the_first_papers_not_the_boilerplate(
    subscriber, agents
):
    """Mail apps show the first text of an email beside its subject: the
    papers, before the header's "New papers in the topics you follow"."""
    add_papers(agents, date(2026, 7, 10), title=r"$\alpha$-Agents & tools")
    add_papers(agents, date(2026, 7, 9), title="Planning agents")

    send_due(MONDAY_9)

    html = mail.outbox[0].alternatives[0][0]
    body = html.split("<body", 1)[1]
    preview = re.search(r'<div style="display:none[^"]*">(.*?)</div>', body).group(1)
    assert preview == "\u03b1-Agents &amp; tools · Planning agents"
    assert body.index(preview) < body.index("New papers in the topics you follow")


def test_a_paper_sent_once_is_never_sent_again(subscriber, agents):
    add_papers(agents, date(2026, 7, 13))
    send_due(MONDAY_9)
    [later] = add_papers(agents, date(2026, 7, 14))

    send_due(MONDAY_9 + timedelta(days=7))

    assert len(mail.outbox) == 2
    assert Digest.objects.get(period_start=date(2026, 7, 20)).sections[0]["papers"] == [
        [later.pk, []]
    ]


def test_nothing_new_is_skipped_with_the_reason_and_sends_nothing(subscriber):
    [outcome] = send_due(MONDAY_9)

    assert outcome.status == "skipped"
    assert mail.outbox == []
    assert Digest.objects.get().reason == "Nothing new since Jul 6, 2026."


def test_only_verified_addresses_get_digests(subscriber, agents):
    subscriber.emailaddress_set.update(verified=False)
    add_papers(agents, date(2026, 7, 10))

    send_due(MONDAY_9)

    assert mail.outbox == []
    assert Digest.objects.get().reason == "No verified email address."


def test_unsubscribing_after_the_digest_opened_stops_it(subscriber, agents):
    add_papers(agents, date(2026, 7, 10))
    open_due_digests(at=MONDAY_9)
    unsubscribe(user=subscriber)

    send_digests(hand_out(), mailer=Mailer())

    assert mail.outbox == []
    assert Digest.objects.get().status == "skipped"


def test_a_deleted_user_takes_their_digests_along(subscriber, agents):
    add_papers(agents, date(2026, 7, 10))
    open_due_digests(at=MONDAY_9)
    ids = hand_out()
    subscriber.delete()

    assert send_digests(ids, mailer=Mailer()) == []
    assert mail.outbox == []


def test_hostile_titles_are_escaped_in_html_and_plain_in_text(subscriber, agents):
    hostile = '<script>alert("x")</script> & <img src=x onerror=alert(1)>'
    add_papers(agents, date(2026, 7, 10), title=hostile)

    send_due(MONDAY_9)

    html = mail.outbox[0].alternatives[0][0]
    assert "<script>" not in html
    assert "<img src=x" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp;" in html
    assert hostile in mail.outbox[0].body


def test_a_claimed_digest_is_not_sent_by_a_second_sender(subscriber, agents):
    add_papers(agents, date(2026, 7, 10))
    open_due_digests(at=MONDAY_9)
    ids = hand_out()
    Digest.objects.update(
        status="sending", claimed_by="other", claimed_at=datetime.now(UTC)
    )

    assert send_digests(ids, mailer=Mailer()) == []
    assert mail.outbox == []


def test_a_dead_senders_claim_expires_and_the_digest_goes_once(subscriber, agents):
    add_papers(agents, date(2026, 7, 10))
    open_due_digests(at=MONDAY_9)
    hand_out()
    Digest.objects.update(
        status="sending", claimed_by="dead", claimed_at=datetime(2026, 1, 1, tzinfo=UTC)
    )

    ids = hand_out()
    send_digests(ids, mailer=Mailer())
    send_digests(ids, mailer=Mailer())

    assert len(ids) == 1
    assert len(mail.outbox) == 1


def test_a_batch_behind_a_slow_mail_server_sends_each_digest_once(
    subscriber, bob, agents
):
    """The whole batch was claimed once: past the claim's time, the next run
    took over the digests still waiting, and both runs sent them."""
    Follow.objects.create(user=verified(bob), topic=agents)
    User.objects.filter(pk=bob.pk).update(date_joined=JOINED)
    add_papers(agents, date(2026, 7, 10))
    open_due_digests(at=MONDAY_9)
    ids = hand_out()
    first, second = sorted(ids)

    class SlowMailer(Mailer):
        def send(self, message):
            # While the first goes out, the claim runs out and another run
            # takes the second over, as the hourly tick would.
            Digest.objects.filter(pk=second).update(claimed_by="the next run")
            super().send(message)

    outcomes = send_digests(ids, mailer=SlowMailer())

    assert [(o.digest_id, o.status) for o in outcomes] == [
        (first, "sent"),
        (second, TAKEN_OVER),
    ]
    assert len(mail.outbox) == 1
    assert Digest.objects.get(pk=second).claimed_by == "the next run"


def test_hand_out_gives_each_digest_once_until_its_task_could_be_lost(subscriber):
    open_due_digests(at=MONDAY_9)

    assert len(hand_out()) == 1
    assert hand_out() == []


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (smtplib.SMTPRecipientsRefused({"a@x": (550, b"no such user")}), "permanent"),
        (smtplib.SMTPRecipientsRefused({"a@x": (452, b"mailbox full")}), "transient"),
        (smtplib.SMTPDataError(451, b"try later"), "transient"),
        (smtplib.SMTPDataError(554, b"rejected"), "permanent"),
        (smtplib.SMTPAuthenticationError(535, b"bad login"), "transient"),
        (smtplib.SMTPServerDisconnected("gone"), "transient"),
        (ConnectionRefusedError(111, "refused"), "transient"),
    ],
)
def test_errors_are_classified_by_reply_code(error, kind):
    expected = PermanentSendError if kind == "permanent" else TransientSendError
    assert isinstance(classify(error), expected)


class DroppingServer(SMTPBackend):
    """An SMTP connection whose server drops it at the next message, as a
    server that never answers does when the read times out."""

    def __init__(self, drops: int) -> None:
        super().__init__(fail_silently=False)
        self.drops, self.tries = drops, 0

    def open(self) -> bool:
        return True

    def close(self) -> None:
        pass

    def send_messages(self, messages) -> int:
        self.tries += 1
        if self.drops:
            self.drops -= 1
            raise smtplib.SMTPServerDisconnected("Connection unexpectedly closed")
        return len(messages)


def test_a_connection_dropped_while_idle_is_opened_again_but_a_new_one_is_not():
    """An idle connection the server closed gets one more try; a server that
    drops a connection just opened (never answers) costs one timeout, not two."""
    message = EmailMultiAlternatives("Hi", "Body", to=["a@example.org"])
    idle = Mailer(DroppingServer(drops=0))
    idle.send(message)
    idle.connection.drops = 1

    idle.send(message)  # dropped while idle: sent again, once

    new = Mailer(DroppingServer(drops=1))
    with pytest.raises(TransientSendError):
        new.send(message)

    assert idle.connection.tries == 3
    assert new.connection.tries == 1


def test_a_mail_server_out_of_reach_is_logged_once_a_batch_naming_it(caplog):
    """Each digest of the batch is deferred; the operator reads one warning
    that says which server, not one line per digest at INFO."""
    port = free_port()  # nothing listens there
    mailer = Mailer(SMTPBackend(host="127.0.0.1", port=port, timeout=2))
    message = EmailMultiAlternatives("Hi", "Body", to=["a@example.org"])

    with caplog.at_level(logging.WARNING, logger="notifications.mailer"):
        for _ in range(3):
            with pytest.raises(TransientSendError, match="ConnectionRefusedError"):
                mailer.send(message)

    [warning] = caplog.records
    assert f"127.0.0.1:{port}" in warning.getMessage()

    with smtp_server() as (handler, live):
        mailer.connection.port = live
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="notifications.mailer"):
            mailer.send(message)
            mailer.send(message)

    assert len(handler.messages) == 2
    [back] = [r for r in caplog.records if r.name == "notifications.mailer"]
    assert back.getMessage() == f"mail server 127.0.0.1:{live}: taking messages again"


def test_a_refused_recipient_is_no_warning_about_the_server(caplog, settings):
    settings.EMAIL_BACKEND = FAILING_BACKEND
    FailingBackend.error = smtplib.SMTPRecipientsRefused({"a": (550, b"no user")})
    message = EmailMultiAlternatives("Hi", "Body", to=["a@example.org"])

    with (
        caplog.at_level(logging.WARNING, logger="notifications.mailer"),
        pytest.raises(PermanentSendError),
    ):
        Mailer().send(message)

    assert not caplog.records


def test_an_error_that_is_no_mail_failure_is_logged_with_its_traceback(
    caplog, settings
):
    """A bug met while sending (a header the backend refuses) was recorded as
    any temporary failure: the digest deferred, then given up, at INFO, with
    no line an operator would look at nor where it came from."""
    settings.EMAIL_BACKEND = FAILING_BACKEND
    FailingBackend.error = ValueError("Header values can't contain newlines")
    message = EmailMultiAlternatives("Hi", "Body", to=["a@example.org"])

    with (
        caplog.at_level(logging.WARNING, logger="notifications.mailer"),
        pytest.raises(TransientSendError),
    ):
        Mailer().send(message)

    [error] = caplog.records
    assert error.levelname == "ERROR"
    assert error.exc_info is not None
    assert "a@example.org" not in error.getMessage()


def test_temporary_failures_are_deferred_then_given_up(
    subscriber, agents, settings, caplog
):
    settings.MOMENTUM_DIGEST_MAX_ATTEMPTS = 2
    settings.EMAIL_BACKEND = FAILING_BACKEND
    FailingBackend.error = smtplib.SMTPDataError(451, b"try later")
    add_papers(agents, date(2026, 7, 10))
    open_due_digests(at=MONDAY_9)
    ids = hand_out()

    with caplog.at_level(logging.INFO, logger="notifications.delivery"):
        [first] = send_digests(ids, mailer=Mailer())
    digest = Digest.objects.get()
    assert first.retry_in is not None
    # The operator reads which attempt it was, as the Celery retry line does not.
    [deferred] = [r.getMessage() for r in caplog.records if "deferred" in r.msg]
    assert re.fullmatch(
        rf"digest {digest.pk} deferred \d+s after attempt 1: 451 try later",
        deferred,
    )
    assert (digest.status, digest.attempts) == ("pending", 1)
    assert digest.reason == "Will retry: 451 try later"
    assert DigestPaper.objects.count() == 1

    second = retry(digest.pk)
    digest.refresh_from_db()
    assert second.retry_in is None
    assert digest.status == "failed"
    assert digest.reason.startswith("Gave up after 2 attempts")
    assert DigestPaper.objects.count() == 0


def test_a_second_send_of_a_just_deferred_digest_waits_for_its_retry_time(
    subscriber, agents, settings, monkeypatch
):
    """A second send_digest for the digest (its first message redelivered, a
    worker killed after the deferral) comes long before its retry time: it
    leaves the digest, and the retry sends it when its pause is over."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_USE_TLS = False
    monkeypatch.setattr(notifications.tasks._local, "mailer", None, raising=False)
    add_papers(agents, date(2026, 7, 10))
    with smtp_server() as (handler, port):
        settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", port
        handler.rcpt_replies = ["451 4.3.0 Mailbox busy, try again later"]
        [deferred] = send_due(MONDAY_9)

        assert send_digest(deferred.digest_id) == "not claimed"
        assert handler.messages == []
        digest = Digest.objects.get()
        assert (digest.status, digest.attempts) == ("pending", 1)

        # The retry's message, handed out by the sweep at its retry time.
        retry = timezone.now() + timedelta(seconds=deferred.retry_in)
        with mock.patch("django.utils.timezone.now", return_value=retry):
            assert send_digest(deferred.digest_id) == "sent"
        worker_mailer().close()

    assert len(handler.messages) == 1
    assert Digest.objects.get().attempts == 2


def deferred() -> Digest:
    """A digest planned and refused for the moment (451) at its first try."""
    open_due_digests(at=MONDAY_9)
    with override_settings(EMAIL_BACKEND=FAILING_BACKEND):
        FailingBackend.error = smtplib.SMTPDataError(451, b"try later")
        send_digests(hand_out(), mailer=Mailer())
    return Digest.objects.get()


def test_a_retry_a_moment_before_its_time_by_this_clock_is_sent(subscriber, agents):
    """Its countdown ran on another worker's clock, or this one stepped back."""
    add_papers(agents, date(2026, 7, 10))
    digest = deferred()

    moment_early = digest.retry_at - timedelta(seconds=1)
    with mock.patch("django.utils.timezone.now", return_value=moment_early):
        [outcome] = send_digests([digest.pk], mailer=Mailer())

    assert outcome.status == "sent"
    assert len(mail.outbox) == 1


def test_the_sweep_hands_out_a_deferred_digest_once_at_its_retry_time(
    subscriber, agents
):
    """The retry is the outbox's alone: no message a killed worker could take
    down with it. Handed out once when its time comes; again only if that
    task is lost (not claimed a claim's time later)."""
    add_papers(agents, date(2026, 7, 10))
    digest = deferred()

    assert hand_out(now=digest.retry_at - timedelta(seconds=1)) == []
    assert hand_out(now=digest.retry_at) == [digest.pk]
    assert hand_out(now=digest.retry_at + timedelta(seconds=1)) == []
    lost = digest.retry_at + claim_timeout() + timedelta(seconds=1)
    assert hand_out(now=lost) == [digest.pk]
    with mock.patch("django.utils.timezone.now", return_value=lost):
        [outcome] = send_digests([digest.pk], mailer=Mailer())
    assert outcome.status == "sent"


def test_a_send_stopped_by_the_tasks_time_limit_is_no_mail_server_failure(
    subscriber, agents, settings
):
    """The task's soft time limit, met while a message goes out, stops the
    task: it is not recorded as the mail server's failure (a retry's reason, or
    giving up on the last attempt); the claim expires and the next tick resumes."""
    settings.EMAIL_BACKEND = FAILING_BACKEND
    FailingBackend.error = SoftTimeLimitExceeded()
    add_papers(agents, date(2026, 7, 10))
    open_due_digests(at=MONDAY_9)

    with pytest.raises(SoftTimeLimitExceeded):
        send_digests(hand_out(), mailer=Mailer())

    digest = Digest.objects.get()
    assert (digest.status, digest.reason) == ("sending", "")


def test_a_connection_stopped_mid_message_is_not_used_again():
    class StoppedServer(DroppingServer):
        def send_messages(self, messages) -> int:
            raise SoftTimeLimitExceeded()

    mailer = Mailer(StoppedServer(drops=0))
    with pytest.raises(SoftTimeLimitExceeded):
        mailer.send(EmailMultiAlternatives("Hi", "Body", to=["a@example.org"]))

    assert not mailer.opened  # the next message opens a connection of its own


def test_permanent_failures_are_recorded_and_free_the_papers(
    subscriber, agents, settings
):
    settings.EMAIL_BACKEND = FAILING_BACKEND
    FailingBackend.error = smtplib.SMTPRecipientsRefused({"a": (550, b"no user")})
    add_papers(agents, date(2026, 7, 10))

    send_due(MONDAY_9)

    digest = Digest.objects.get()
    assert (digest.status, digest.reason) == (
        "failed",
        "recipient refused: 550 no user",
    )
    assert DigestPaper.objects.count() == 0


def test_resend_puts_a_failed_digest_back_and_plans_it_anew(
    subscriber, agents, settings
):
    settings.EMAIL_BACKEND = FAILING_BACKEND
    FailingBackend.error = smtplib.SMTPRecipientsRefused({"a": (550, b"no user")})
    add_papers(agents, date(2026, 7, 10))
    send_due(MONDAY_9)
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"

    ids = resend(Digest.objects.all())
    [outcome] = send_digests(ids, mailer=Mailer())

    assert outcome.status == "sent"
    assert len(mail.outbox) == 1
    assert DigestPaper.objects.count() == 1


def test_papers_counted_under_and_more_are_not_new_again_next_time(subscriber, agents):
    """A digest counts every new paper ("2 new papers") and links those past its
    cap; the next one, whose days overlap it, counted them as new again."""
    preferences(subscriber, max_papers=1)
    add_papers(agents, date(2026, 7, 13), count=2)  # the send day: in both

    send_due(MONDAY_9)
    outcomes = send_due(MONDAY_9 + timedelta(days=7))

    [message] = mail.outbox
    assert message.subject == "2 new papers in Agents"
    assert [outcome.status for outcome in outcomes] == ["skipped"]
    assert DigestPaper.objects.count() == 2


def test_a_schedule_change_promises_the_digest_the_outbox_opens(subscriber, agents):
    """Today's daily digest went at 08:00; at 10:00 the reader moves the hour
    to 20:00. Today's period has its digest: the next is tomorrow's."""
    preferences(subscriber, frequency="daily")
    add_papers(agents, date(2026, 7, 13))
    send_due(datetime(2026, 7, 13, 8, 5, tzinfo=UTC))
    preferences(subscriber, frequency="daily", hour=20)

    promised = next_due(
        subscriber,
        Schedule(frequency="daily", hour=20),
        datetime(2026, 7, 13, 10, tzinfo=UTC),
    )

    assert promised == datetime(2026, 7, 14, 20, tzinfo=UTC)
    open_due_digests(at=datetime(2026, 7, 13, 20, 5, tzinfo=UTC))
    open_due_digests(at=promised)
    assert list(Digest.objects.values_list("due_at", flat=True)) == [
        promised,
        datetime(2026, 7, 13, 8, tzinfo=UTC),
    ]


def deferred_then_retried(change) -> Digest:
    """A digest planned, refused for the moment (451); `change` happens before
    its retry, which the mail server takes."""
    open_due_digests(at=MONDAY_9)
    ids = hand_out()
    with override_settings(EMAIL_BACKEND=FAILING_BACKEND):
        FailingBackend.error = smtplib.SMTPDataError(451, b"try later")
        send_digests(ids, mailer=Mailer())
    change()
    retry(ids[0])
    return Digest.objects.get(pk=ids[0])


def test_a_retry_after_its_topic_was_merged_sends_its_papers_under_the_target(
    subscriber, agents
):
    papers = add_papers(agents, date(2026, 7, 10), count=3)
    robots = make_topic("Robots", rule="ti:robot", slug="robots")

    digest = deferred_then_retried(lambda: merge_topics(robots, [agents]))

    assert digest.status == "sent"
    [message] = mail.outbox
    assert message.subject == "3 new papers in Robots"
    assert all(paper.title in message.body for paper in papers)
    assert set(DigestPaper.objects.values_list("paper_id", "topic_id")) == {
        (paper.pk, robots.pk) for paper in papers
    }


def test_a_retry_after_its_only_section_went_sends_no_email(subscriber, agents):
    """The topic deleted: nothing the reader follows holds its papers now."""
    add_papers(agents, date(2026, 7, 10))

    digest = deferred_then_retried(lambda: agents.delete())

    assert (digest.status, digest.reason) == (
        "skipped",
        "Nothing new since Jul 6, 2026.",
    )
    assert not mail.outbox
    assert not DigestPaper.objects.exists()


def test_a_retry_after_the_reader_changed_address_records_the_address_it_went_to(
    subscriber, agents
):
    """Admin's digest said (and was searched by) the address it was planned
    for, not the one the retry mailed."""
    add_papers(agents, date(2026, 7, 10))

    def change_address():
        EmailAddress.objects.filter(user=subscriber).update(email="alice@work.example")

    digest = deferred_then_retried(change_address)

    [message] = mail.outbox
    assert message.to == ["alice@work.example"]
    assert digest.to_email == "alice@work.example"


def test_a_planned_digest_whose_papers_were_all_deleted_sends_no_empty_email(
    subscriber, agents
):
    add_papers(agents, date(2026, 7, 10))

    digest = deferred_then_retried(lambda: Paper.objects.all().delete())

    assert (digest.status, digest.reason) == ("skipped", "Its papers were deleted.")
    assert not mail.outbox


def test_a_mail_server_down_for_hours_delays_the_digest_and_loses_nothing(
    subscriber, agents, settings
):
    """Out of reach (connection refused) for more tries than
    MOMENTUM_DIGEST_MAX_ATTEMPTS allows a refused message: the digest waits for
    the server, and goes when it is back."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", free_port()
    settings.EMAIL_USE_TLS = False
    add_papers(agents, date(2026, 7, 10), title="Owed paper")
    open_due_digests(at=MONDAY_9)
    [digest_id] = hand_out()
    hours_later = MONDAY_9 + timedelta(hours=5)
    with mock.patch("django.utils.timezone.now", return_value=hours_later):
        [outcome] = send_digests([digest_id], mailer=Mailer())
    for _ in range(settings.MOMENTUM_DIGEST_MAX_ATTEMPTS + 1):
        assert outcome.retry_in is not None
        outcome = retry(digest_id)
    assert outcome.retry_in is not None

    with smtp_server() as (handler, port):
        settings.EMAIL_PORT = port
        outcome = retry(digest_id)

    assert outcome.status == "sent"
    [message] = handler.messages
    assert "Owed paper" in message.get_body(("plain",)).get_content()


def test_a_mail_server_down_until_the_next_period_frees_the_papers_for_it(
    subscriber, agents, settings
):
    settings.EMAIL_BACKEND = FAILING_BACKEND
    FailingBackend.error = ConnectionRefusedError(111, "Connection refused")
    [owed] = add_papers(agents, date(2026, 7, 10), title="Owed paper")
    [outcome] = send_due(MONDAY_9)  # due a week before its period's next, months ago
    for _ in range(settings.MOMENTUM_DIGEST_MAX_ATTEMPTS - 1):
        outcome = retry(outcome.digest_id)

    digest = Digest.objects.get()
    assert digest.status == "failed"
    assert digest.reason.startswith("Gave up after 6 attempts: ")
    assert not DigestPaper.objects.exists()

    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    send_due(MONDAY_9 + timedelta(days=7))
    [message] = mail.outbox
    assert owed.title in message.body


def test_a_new_readers_failed_first_digest_leaves_its_papers_to_the_next(
    subscriber, agents, settings
):
    """Never sent a digest, the reader is owed the failed one's papers: the
    next covers its days too, not only its own period."""
    [first] = add_papers(agents, date(2026, 7, 10), title="First week paper")
    settings.EMAIL_BACKEND = FAILING_BACKEND
    FailingBackend.error = smtplib.SMTPRecipientsRefused({"a": (550, b"full")})
    send_due(MONDAY_9)
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    [second] = add_papers(agents, date(2026, 7, 15), title="Second week paper")

    send_due(MONDAY_9 + timedelta(days=7))

    [message] = mail.outbox
    assert first.title in message.body
    assert second.title in message.body
    assert "first announced since Jul 6, 2026" in message.body


def test_a_digest_resent_while_the_mail_server_is_down_is_tried_again(
    subscriber, agents, settings
):
    """Past its period (admin's resend of an old digest): the tries a refused
    message gets, not one."""
    add_papers(agents, date(2026, 7, 10))
    settings.EMAIL_BACKEND = FAILING_BACKEND
    FailingBackend.error = ConnectionRefusedError(111, "Connection refused")
    [outcome] = send_due(MONDAY_9)
    while outcome.retry_in is not None:
        outcome = retry(outcome.digest_id)
    [digest_id] = resend(Digest.objects.all())

    [outcome] = send_digests([digest_id], mailer=Mailer())

    assert outcome.retry_in is not None


def test_an_old_digest_resent_while_the_mail_server_is_down_gives_up_in_time(
    subscriber, agents, settings
):
    """A resend of a digest whose next period has its own digest waits for no
    later digest: it has the tries a refused message gets, then fails (it
    waited on for the reader's next digest to come, weeks on)."""
    add_papers(agents, date(2026, 7, 10))
    send_due(MONDAY_9)
    send_due(MONDAY_9 + timedelta(days=7))
    settings.EMAIL_BACKEND = FAILING_BACKEND
    FailingBackend.error = ConnectionRefusedError(111, "Connection refused")
    first = Digest.objects.get(period_start=date(2026, 7, 13))
    [digest_id] = resend(Digest.objects.filter(pk=first.pk))

    later = MONDAY_9 + timedelta(days=8)
    with mock.patch("django.utils.timezone.now", return_value=later):
        [outcome] = send_digests([digest_id], mailer=Mailer())
    for _ in range(settings.MOMENTUM_DIGEST_MAX_ATTEMPTS - 1):
        outcome = retry(digest_id)

    assert outcome.status == "failed"


def test_a_daily_digest_waits_for_the_mail_server_whatever_the_retry_ceiling(
    subscriber, agents, settings
):
    """A ceiling of a day puts a daily digest's last try before its due time."""
    settings.MOMENTUM_DIGEST_RETRY_MAX_SECONDS = 24 * 3600.0
    preferences(subscriber, frequency="daily")
    add_papers(agents, date(2026, 7, 12))
    settings.EMAIL_BACKEND = FAILING_BACKEND
    FailingBackend.error = ConnectionRefusedError(111, "Connection refused")

    with mock.patch("django.utils.timezone.now", return_value=MONDAY_9):
        [outcome] = send_due(MONDAY_9)

    assert outcome.retry_in is not None


def test_a_sender_that_lost_its_claim_frees_no_papers_of_a_gone_section(
    subscriber, agents
):
    """It stalled past its claim; another sender took the digest over and sent
    it: the papers it sent stay recorded."""
    add_papers(agents, date(2026, 7, 10), count=2)
    send_due(MONDAY_9)
    digest = Digest.objects.get()
    # The stale sender's copy: planned, a section whose topic is gone since.
    digest.sections = [{**digest.sections[0], "topic": 999_999}]

    _unplan_gone_sections([digest], claim="a claim lost long ago")

    assert DigestPaper.objects.count() == 2


def test_the_next_digest_promised_after_a_move_west_across_the_date_line(subscriber):
    """The next send time's local day before the last digest's: the outbox
    opens it, as promised."""
    preferences(subscriber, frequency="daily", hour=8, time_zone="Pacific/Kiritimati")
    open_due_digests(at=datetime(2026, 7, 13, 18, 30, tzinfo=UTC))
    assert Digest.objects.get().period_start == date(2026, 7, 14)
    preferences(subscriber, frequency="daily", hour=23, time_zone="Pacific/Pago_Pago")
    schedule = Schedule("daily", 0, 23, "Pacific/Pago_Pago")

    promised = next_due(subscriber, schedule, datetime(2026, 7, 13, 18, 30, tzinfo=UTC))
    open_due_digests(at=datetime(2026, 7, 14, 10, 5, tzinfo=UTC))

    assert promised == Digest.objects.order_by("due_at").last().due_at


def test_the_next_digest_promised_after_two_days_of_digests_then_a_move_west(
    subscriber,
):
    preferences(subscriber, frequency="daily", hour=8, time_zone="Pacific/Kiritimati")
    open_due_digests(at=datetime(2026, 7, 12, 18, 30, tzinfo=UTC))
    open_due_digests(at=datetime(2026, 7, 13, 18, 30, tzinfo=UTC))  # Jul 13 and 14
    preferences(subscriber, frequency="daily", hour=23, time_zone="Pacific/Pago_Pago")
    schedule = Schedule("daily", 0, 23, "Pacific/Pago_Pago")

    promised = next_due(subscriber, schedule, datetime(2026, 7, 13, 18, 30, tzinfo=UTC))
    for day in (14, 15, 16):
        open_due_digests(at=datetime(2026, 7, day, 10, 5, tzinfo=UTC))

    assert promised == Digest.objects.order_by("due_at").last().due_at


def test_a_sender_that_lost_its_claim_frees_no_papers_when_its_send_fails(
    subscriber, agents
):
    add_papers(agents, date(2026, 7, 10), count=2)
    send_due(MONDAY_9)

    _fail(Digest.objects.get(), "a claim lost long ago", "550 mailbox unavailable")

    assert DigestPaper.objects.count() == 2


def test_a_mail_server_down_across_a_week_shortened_by_daylight_saving_loses_nothing(
    subscriber, agents, settings
):
    """New York's clocks go forward on Sunday 2026-03-08: from one Sunday 08:00
    to the next is 167 hours, and the next digest is due an hour earlier in UTC
    (12:00, not 13:00). The digest waiting for the mail server gives up before
    it, so that its papers, freed, are that digest's."""
    User.objects.filter(pk=subscriber.pk).update(
        date_joined=datetime(2026, 2, 1, tzinfo=UTC)
    )
    preferences(subscriber, weekday=6, hour=8, time_zone="America/New_York")
    settings.EMAIL_BACKEND = FAILING_BACKEND
    FailingBackend.error = ConnectionRefusedError(111, "Connection refused")
    [owed] = add_papers(agents, date(2026, 2, 27), title="Owed paper")

    def at(day: int, hour: int, minute: int):
        moment = datetime(2026, 3, day, hour, minute, tzinfo=UTC)
        return mock.patch("django.utils.timezone.now", return_value=moment)

    with at(1, 13, 5):
        [outcome] = send_due(datetime(2026, 3, 1, 13, 5, tzinfo=UTC))
    for _ in range(settings.MOMENTUM_DIGEST_MAX_ATTEMPTS):
        retry(outcome.digest_id)
    with at(8, 11, 45):
        send_digests([outcome.digest_id], mailer=Mailer())
    with at(8, 12, 5):
        open_due_digests(at=datetime(2026, 3, 8, 12, 5, tzinfo=UTC))
        [next_id] = Digest.objects.exclude(pk=outcome.digest_id).values_list(
            "pk", flat=True
        )
        send_digests([next_id], mailer=Mailer())
    with at(8, 12, 35):
        send_digests([outcome.digest_id], mailer=Mailer())
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    with at(8, 12, 50):
        send_digests([next_id], mailer=Mailer())

    # Not skipped as "nothing new" while the owed paper was held by the other.
    assert [owed.title in message.body for message in mail.outbox] == [True]


def test_a_move_to_an_earlier_weekday_promises_the_digest_the_outbox_opens(
    subscriber, agents
):
    """Monday's digest went; on Wednesday the reader moves to Tuesdays. The
    period that began on Tuesday has no digest yet: the outbox opens it at its
    next round, not next Tuesday."""
    add_papers(agents, date(2026, 7, 10))
    send_due(MONDAY_9)
    preferences(subscriber, weekday=1)
    wednesday = datetime(2026, 7, 15, 10, tzinfo=UTC)

    promised = next_due(subscriber, Schedule(weekday=1), wednesday)

    open_due_digests(at=wednesday + timedelta(minutes=5))
    assert promised == Digest.objects.order_by("due_at").last().due_at


def test_a_mail_server_down_after_the_hour_moved_later_that_day_is_waited_for(
    subscriber, agents, settings
):
    """Monday's 08:00 digest waits for the mail server; at 09:00 the reader
    moves their hour to 20:00. The period has its digest, so the outbox opens
    none at 20:00 but next Monday: the digest is not given up by this evening,
    to send its papers a week late, but goes when the server is back."""
    settings.EMAIL_BACKEND = FAILING_BACKEND
    FailingBackend.error = ConnectionRefusedError(111, "Connection refused")
    [owed] = add_papers(agents, date(2026, 7, 10), title="Owed paper")
    with mock.patch("django.utils.timezone.now", return_value=MONDAY_9):
        [outcome] = send_due(MONDAY_9)
    preferences(subscriber, hour=20)
    evening = MONDAY_9 + timedelta(hours=10, minutes=45)  # 19:45, 20:05

    with mock.patch("django.utils.timezone.now", return_value=evening):
        [outcome] = send_digests([outcome.digest_id], mailer=Mailer())
    for _ in range(settings.MOMENTUM_DIGEST_MAX_ATTEMPTS - 1):
        assert outcome.retry_in is not None
        outcome = retry(outcome.digest_id)
    assert outcome.retry_in is not None
    open_due_digests(at=evening + timedelta(minutes=20))
    assert Digest.objects.count() == 1

    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    outcome = retry(outcome.digest_id)
    assert outcome.status == "sent"
    [message] = mail.outbox
    assert owed.title in message.body
