"""Digest pages: view in browser, unsubscribe, and the settings page's digest part."""

from __future__ import annotations

import contextlib
import re
import smtplib
import threading
from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import timedelta
from math import ceil
from unittest import mock
from urllib.parse import parse_qsl
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.core import mail
from django.db import connection
from django.test import Client
from django.utils import timezone
from django.utils.html import escape

import notifications.tasks
from accounts.models import DigestPreferences
from accounts.models import User
from notifications import preferences
from notifications.delivery import hand_out
from notifications.delivery import open_due_digests
from notifications.delivery import send_digests
from notifications.mailer import Mailer
from notifications.models import Digest
from notifications.models import DigestPaper
from notifications.schedule import Schedule
from notifications.tokens import unsubscribe_token
from tests.accounts.factories import verified
from tests.clients import signed_in
from tests.notifications.factories import FAILING_BACKEND
from tests.notifications.factories import FailingBackend
from tests.notifications.factories import add_papers
from tests.topics.factories import make_topic
from topics.curation import merge_topics
from topics.models import Follow
from topics.models import Topic
from topics.saved_searches import create_search

POSTGRESQL = connection.vendor == "postgresql"

pytestmark = pytest.mark.django_db

PREVIEW = "/digest/preview/"


def test_preview_needs_a_login():
    response = Client().get(PREVIEW)
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]


def test_preview_shows_the_next_digest_with_inline_styles_allowed(subscriber, agents):
    add_papers(agents, datetime.now(UTC).date(), title="Planning <agents>")

    response = signed_in(subscriber).get(PREVIEW)

    assert response.status_code == 200
    assert b"Planning &lt;agents&gt;" in response.content
    policy = response["Content-Security-Policy"]
    assert "style-src 'self' 'unsafe-inline'" in policy
    assert "script-src 'self'" in policy


def test_preview_holds_the_next_digests_papers_not_the_week_before_them(
    subscriber, agents
):
    """The next digest covers the period before its send time; a preview built
    on the period whose send time has passed showed a week no digest sends."""
    preferences = DigestPreferences.objects.for_user(subscriber)
    due = Schedule.of(preferences).next_send_time(datetime.now(UTC))
    period_start = due.date() - timedelta(days=7)
    add_papers(agents, period_start, title="In the next digest")
    add_papers(agents, period_start - timedelta(days=1), title="The week before")

    response = signed_in(subscriber).get(PREVIEW)

    assert b"In the next digest" in response.content
    assert b"The week before" not in response.content
    assert f"first announced since {period_start:%b %-d, %Y}".encode() in (
        response.content
    )


def test_preview_with_nothing_new_says_so(subscriber):
    response = signed_in(subscriber).get(PREVIEW)

    assert response.status_code == 200
    assert b"Nothing is new for you since" in response.content


def test_preview_of_a_sent_digest_shows_its_papers_to_its_owner_only(
    subscriber, agents, bob
):
    digest = sent_digest(subscriber, agents)

    mine = signed_in(subscriber).get(PREVIEW, {"digest": digest.pk})
    theirs = signed_in(bob).get(PREVIEW, {"digest": digest.pk})
    bad = signed_in(subscriber).get(PREVIEW, {"digest": "1 OR 1=1"})

    assert mine.status_code == 200
    assert b"Sent before" in mine.content
    assert theirs.status_code == 404
    assert bad.status_code == 404


@pytest.mark.parametrize("raw", ["\u00b2", "\u0663", "9" * 40, "-1", ""])
def test_a_digest_id_that_is_not_one_is_a_404_to_anyone(subscriber, raw):
    # Digits Python reads (², an Arabic 3) or the database cannot hold.
    for client in (Client(), signed_in(subscriber)):
        assert client.get(PREVIEW, {"digest": raw}).status_code == 404


def sent_digest(subscriber, agents) -> Digest:
    User.objects.filter(pk=subscriber.pk).update(
        date_joined=datetime(2026, 7, 1, tzinfo=UTC)
    )
    add_papers(agents, date(2026, 7, 10), title="Sent before")
    open_due_digests(at=datetime(2026, 7, 13, 9, tzinfo=UTC))
    send_digests(hand_out(), mailer=Mailer())
    return Digest.objects.get()


def view_in_browser_link(text: str) -> str:
    [link] = re.findall(r"^View in your browser: (\S+)$", text, re.MULTILINE)
    return link.removeprefix(settings.MOMENTUM_SITE_URL)


def test_the_mails_view_in_browser_link_opens_the_digest_without_a_login(
    subscriber, agents
):
    sent_digest(subscriber, agents)
    [message] = mail.outbox
    link = view_in_browser_link(message.body)
    # The HTML part links to the same page.
    assert (
        f'href="{escape(settings.MOMENTUM_SITE_URL + link)}"'
        in (message.alternatives[0][0])
    )

    response = Client().get(link)  # a phone's browser, never logged in here

    assert response.status_code == 200
    assert b"Sent before" in response.content
    # The page needs no link to itself; and whoever the link was passed on to
    # (it opens without a login) cannot turn the reader's digests off.
    assert "View in your browser" not in response.text
    assert "/unsubscribe/" not in response.text
    assert f'href="{settings.MOMENTUM_SITE_URL}/settings/"' in response.text
    assert not response.cookies
    # The link is a credential: kept by no shared cache, indexed by no engine.
    assert response["Cache-Control"] == "private"
    assert response["X-Robots-Tag"] == "noindex"


def test_an_old_digests_view_in_browser_shows_a_merged_topics_papers_where_they_went(
    subscriber, agents
):
    """A curator merged the digest's topic into another since: the page said
    "0 new papers", "New papers , first announced since" and "because you  on
    Momentum", with none of the papers the mail showed."""
    sent_digest(subscriber, agents)
    link = view_in_browser_link(mail.outbox[0].body)
    robots = make_topic("Robots", rule="ti:robot", slug="robots")
    merge_topics(robots, [agents])

    response = Client().get(link)

    assert response.status_code == 200
    assert "<title>1 new paper in Robots</title>" in response.text
    assert "Sent before" in response.text
    assert "New papers in the topics you follow" in response.text
    assert f'href="{settings.MOMENTUM_SITE_URL}/topics/robots/"' in response.text


def test_an_old_digests_view_in_browser_names_no_topic_a_paper_is_also_in_twice(
    subscriber, agents
):
    """The paper was in both topics the reader follows, listed under Agents
    "Also in Robots"; Agents was merged into Robots since: under Robots, the
    page said it was also in Robots."""
    robots = make_topic("Robots", rule="ti:robot", slug="robots")
    Follow.objects.create(user=subscriber, topic=robots)
    User.objects.filter(pk=subscriber.pk).update(
        date_joined=datetime(2026, 7, 1, tzinfo=UTC)
    )
    add_papers([agents, robots], date(2026, 7, 10), title="Robot agents")
    open_due_digests(at=datetime(2026, 7, 13, 9, tzinfo=UTC))
    send_digests(hand_out(), mailer=Mailer())
    assert "Also in: Robots" in mail.outbox[0].body
    link = view_in_browser_link(mail.outbox[0].body)
    merge_topics(robots, [agents])

    response = Client().get(link)

    assert "<title>1 new paper in Robots</title>" in response.text
    assert "Robot agents" in response.text
    assert "Also in" not in response.text


def test_an_old_digest_whose_every_topic_was_deleted_is_no_empty_page(
    subscriber, agents
):
    sent_digest(subscriber, agents)
    link = view_in_browser_link(mail.outbox[0].body)
    agents.delete()

    response = Client().get(link)

    assert response.status_code == 404
    assert "0 new papers" not in response.text


def test_a_view_key_opens_only_its_own_digest(subscriber, agents, bob):
    digest = sent_digest(subscriber, agents)
    key = dict(parse_qsl(urlsplit(view_in_browser_link(mail.outbox[0].body)).query))
    other = {"digest": digest.pk + 1, "key": key["key"]}
    tampered = {"digest": digest.pk, "key": key["key"][:-1] + "x"}

    # Logged out, a key that does not fit asks to log in; its reader then sees it.
    for query in (other, tampered, {"digest": digest.pk}):
        response = Client().get(PREVIEW, query)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/?next=")
    assert signed_in(subscriber).get(PREVIEW, tampered).status_code == 200
    assert signed_in(bob).get(PREVIEW, tampered).status_code == 404


def test_unsubscribe_link_asks_then_unsubscribes_without_login_cookies_or_redirect(
    subscriber,
):
    url = f"/unsubscribe/{unsubscribe_token(subscriber)}/"
    client = Client()

    page = client.get(url)
    assert page.status_code == 200
    # Anyone with the link can open it: the address is only hinted at.
    assert "a•••@example.com" in page.text
    assert "alice@example.com" not in page.text
    assert f'action="{url}"'.encode() in page.content
    assert not DigestPreferences.objects.filter(frequency="off").exists()

    done = client.post(url)
    assert done.status_code == 200
    assert b"You are unsubscribed" in done.content
    assert not page.cookies
    assert not done.cookies
    assert DigestPreferences.objects.get(user=subscriber).frequency == "off"
    # Opened again: it says so, and asks nothing.
    again = client.get(url)
    assert "You are already unsubscribed" in again.text
    assert "a•••@example.com will get no more digest emails." in again.text
    assert f'action="{url}"' not in again.text


def test_one_click_post_from_a_mail_client_unsubscribes(subscriber):
    response = Client(enforce_csrf_checks=True).post(
        f"/unsubscribe/{unsubscribe_token(subscriber)}/",
        data="List-Unsubscribe=One-Click",
        content_type="application/x-www-form-urlencoded",
    )

    assert response.status_code == 200
    assert DigestPreferences.objects.get(user=subscriber).frequency == "off"


@pytest.mark.parametrize(
    "token", ["nonsense", "eyJ1IjoxfQ:tampered", "eyJ1Ijo5OTk5OX0:AAAA", "%00"]
)
def test_a_bad_unsubscribe_token_gets_a_clear_400(token):
    response = Client().post(f"/unsubscribe/{token}/")

    assert response.status_code == 400
    assert b"This unsubscribe link is not valid" in response.content


def test_a_tampered_user_id_is_refused(subscriber, bob):
    signature = unsubscribe_token(subscriber).split(":", 1)[1]
    forged = unsubscribe_token(bob).split(":", 1)[0] + ":" + signature

    response = Client().post(f"/unsubscribe/{forged}/")

    assert response.status_code == 400
    assert not DigestPreferences.objects.filter(frequency="off").exists()


@pytest.mark.parametrize("turned_on_by", ["settings page", "api"])
def test_a_link_from_before_digests_were_turned_back_on_no_longer_unsubscribes(
    subscriber, turned_on_by
):
    old_link = f"/unsubscribe/{unsubscribe_token(subscriber)}/"
    assert Client().post(old_link).status_code == 200
    client = signed_in(subscriber)
    if turned_on_by == "api":
        client.patch(
            "/api/v1/me/digest/",
            {"frequency": "weekly"},
            content_type="application/json",
        )
    else:
        client.post("/settings/", {**settings_form(subscriber), "frequency": "weekly"})
    assert DigestPreferences.objects.get(user=subscriber).frequency == "weekly"

    stale = Client().post(old_link)
    subscriber.refresh_from_db()
    fresh = Client().get(f"/unsubscribe/{unsubscribe_token(subscriber)}/")

    assert stale.status_code == 410
    assert "from an older digest" in stale.text
    assert "Digests for a•••@example.com were turned back on" in stale.text
    assert "in your latest digest" not in stale.text  # which may be this one
    assert DigestPreferences.objects.get(user=subscriber).frequency == "weekly"
    assert fresh.status_code == 200
    assert "Unsubscribe from digests?" in fresh.text


def test_a_mail_clients_one_click_from_an_older_digest_still_unsubscribes(subscriber):
    """RFC 8058's POST to the address in the List-Unsubscribe header is the
    mailbox's owner pressing Unsubscribe on that very email; the client shows
    no page to say it did nothing, so it is kept. The footer's link is the
    body's, which goes wherever the mail is forwarded: a one-click request
    made with it follows the link's generation, as its page does."""
    header_link = f"/unsubscribe/{unsubscribe_token(subscriber, header=True)}/"
    footer_link = f"/unsubscribe/{unsubscribe_token(subscriber)}/"
    Client().post(footer_link)
    signed_in(subscriber).post(
        "/settings/", {**settings_form(subscriber), "frequency": "weekly"}
    )

    def one_click(link: str) -> int:
        return (
            Client(enforce_csrf_checks=True)
            .post(
                link,
                data="List-Unsubscribe=One-Click",
                content_type="application/x-www-form-urlencoded",
            )
            .status_code
        )

    assert one_click(footer_link) == 410
    assert DigestPreferences.objects.get(user=subscriber).frequency == "weekly"
    assert one_click(header_link) == 200
    assert DigestPreferences.objects.get(user=subscriber).frequency == "off"


def test_a_link_mailed_to_an_address_the_account_left_unsubscribes_it_no_more(
    subscriber,
):
    """The reader moved their account to another address (leaving a job): the
    old mailbox's owner, pressing Unsubscribe in its mail client or opening
    the footer's link, turned off the digests now going to the new one."""
    header_link = f"/unsubscribe/{unsubscribe_token(subscriber, header=True)}/"
    footer_link = f"/unsubscribe/{unsubscribe_token(subscriber)}/"
    User.objects.filter(pk=subscriber.pk).update(email="alice@home.example")

    one_click = Client(enforce_csrf_checks=True).post(
        header_link,
        data="List-Unsubscribe=One-Click",
        content_type="application/x-www-form-urlencoded",
    )
    page = Client().get(footer_link)
    button = Client().post(footer_link)

    assert [one_click.status_code, page.status_code, button.status_code] == [410] * 3
    assert "was sent to an address this account no longer has" in page.text
    assert "Unsubscribe from digests?" not in page.text
    assert not DigestPreferences.objects.filter(frequency="off").exists()
    fresh = f"/unsubscribe/{unsubscribe_token(User.objects.get(pk=subscriber.pk))}/"
    assert Client().post(fresh).status_code == 200


def settings_form(user: User) -> dict[str, object]:
    preferences = DigestPreferences.objects.get(user=user)
    return {
        "frequency": preferences.frequency,
        "weekday": preferences.weekday,
        "hour": preferences.hour,
        "time_zone": preferences.time_zone,
        "max_papers": preferences.max_papers,
    }


def test_unsubscribe_for_a_deleted_account_is_a_404_page(subscriber):
    url = f"/unsubscribe/{unsubscribe_token(subscriber)}/"
    subscriber.delete()

    response = Client().get(url)

    assert response.status_code == 404
    assert b"No account for this link" in response.content


def test_a_mail_clients_one_click_for_a_deleted_account_succeeds(subscriber):
    """RFC 8058's POST for an account deleted since its mail was sent: there is
    nothing left to unsubscribe, so the request did what it asked (2xx), and
    the client shows no failure. It says what the page says, no more."""
    url = f"/unsubscribe/{unsubscribe_token(subscriber, header=True)}/"
    subscriber.delete()

    one_click = Client(enforce_csrf_checks=True).post(
        url,
        data="List-Unsubscribe=One-Click",
        content_type="application/x-www-form-urlencoded",
    )
    page = Client().get(url)

    assert one_click.status_code == 200
    assert one_click.text == Client().post(url).text
    assert "No account for this link" in one_click.text
    assert "gets no digests" in one_click.text
    assert page.status_code == 404
    assert "No account for this link" in page.text


def last_digest(user: User, **fields: object) -> Digest:
    """The user's weekly digest of Jul 13, 2026, as `fields` say it went."""
    return Digest.objects.create(
        user=user,
        frequency="weekly",
        period_start=date(2026, 7, 13),
        due_at=datetime(2026, 7, 13, 8, tzinfo=UTC),
        **fields,
    )


def test_settings_show_the_last_digest_mutes_and_the_test_button(subscriber):
    last_digest(subscriber, status="skipped", reason="Nothing new since Jul 6, 2026.")

    page = signed_in(subscriber).get("/settings/").content.decode()

    assert "Last digest, 13 Jul 2026:" in page
    assert "Nothing new since Jul 6, 2026." in page
    assert "Test digest" not in page  # none asked for
    assert 'action="/digest/mute/agents/"' in page
    assert 'aria-label="Mute Agents in your digest">Mute</button>' in page
    assert "Send me a test digest" in page
    assert 'style="' not in page


def test_settings_date_digests_in_the_readers_time_zone(subscriber):
    """Honolulu's Monday 08:00 digest is due at 18:00 UTC; a test asked for on
    Friday evening there is Saturday in UTC."""
    preferences = DigestPreferences.objects.for_user(subscriber)
    preferences.time_zone = "Pacific/Honolulu"
    preferences.save()
    for kind, due_at in [
        ("scheduled", datetime(2026, 7, 13, 18, tzinfo=UTC)),
        ("test", datetime(2026, 7, 18, 9, 21, tzinfo=UTC)),
    ]:
        Digest.objects.create(
            user=subscriber,
            kind=kind,
            frequency="weekly",
            period_start=date(2026, 7, 13),
            due_at=due_at,
            status="sent",
        )

    page = signed_in(subscriber).get("/settings/").content.decode()

    assert "Last digest, 13 Jul 2026:" in page
    assert "Test digest, 17 Jul 2026:" in page


def test_settings_say_a_digest_due_already_goes_in_minutes_not_a_period_on(
    subscriber,
):
    """A digest went three days ago; the reader moves their weekday to two days
    ago. That day's period has no digest yet: the outbox opens it at its next
    round, not a week on."""
    now = datetime.now(UTC)
    User.objects.filter(pk=subscriber.pk).update(date_joined=now - timedelta(days=30))
    three_days_ago = now - timedelta(days=3)
    Digest.objects.create(
        user=subscriber,
        frequency="weekly",
        period_start=three_days_ago.date(),
        due_at=three_days_ago,
        status="sent",
    )
    moved = Schedule("weekly", (now - timedelta(days=2)).weekday(), 8)
    DigestPreferences.objects.update_or_create(
        user=subscriber, defaults={"weekday": moved.weekday, "hour": 8}
    )

    page = signed_in(subscriber).get("/settings/").content.decode()

    open_due_digests(at=now)
    due = Digest.objects.order_by("due_at").last().due_at
    assert due == moved.current_period(now)[1]
    assert (
        f"Next one in a few minutes, for the period from {due:%A %-d %b, %H:%M} (UTC)"
    ) in page


def test_mute_and_unmute_a_topic_from_settings(subscriber, agents):
    client = signed_in(subscriber)

    client.post("/digest/mute/agents/", {"muted": "1"})
    assert Follow.objects.get(user=subscriber).muted
    client.post("/digest/mute/agents/", {"muted": "0"})
    assert not Follow.objects.get(user=subscriber).muted
    assert client.post("/digest/mute/unknown/", {"muted": "1"}).status_code == 404


def test_a_former_slug_mutes_the_topic_it_leads_to(subscriber, agents):
    """A settings page open from before the topic's new slug (or a merge)."""
    agents.slug = "llm-agents"
    agents.save()

    response = signed_in(subscriber).post("/digest/mute/agents/", {"muted": "1"})

    assert response.url == "/settings/"
    assert Follow.objects.get(user=subscriber, topic=agents).muted


def test_a_topic_the_curators_paused_is_listed_apart_and_can_be_unfollowed(
    subscriber, agents
):
    """Not under "Topics in your digest", which leaves it out, with a link to
    its page, which is gone."""
    agents.is_active = False
    agents.save()
    client = signed_in(subscriber)

    page = client.get("/settings/").content.decode()
    left = client.post("/topics/agents/follow/", {"on": "0", "next": "/settings/"})

    assert "Topics in your digest" not in page
    assert 'href="/topics/agents/"' not in page
    assert "Paused by the curators" in page
    assert 'action="/topics/agents/follow/"' in page
    assert left.url == "/settings/"
    assert not Follow.objects.filter(user=subscriber).exists()
    # Followed again only once it is back.
    assert client.post("/topics/agents/follow/", {"on": "1"}).status_code == 404
    # Left, it is gone to them as to anyone else, its name too.
    assert client.get("/topics/agents/follow/?on=0").status_code == 404


def test_a_paused_topics_unfollow_page_is_no_page_for_a_reader_who_never_followed_it(
    bob, agents
):
    agents.is_active = False
    agents.save()
    client = signed_in(bob)

    asked = client.get("/topics/agents/follow/?on=0")
    left = client.post("/topics/agents/follow/", {"on": "0"})

    assert asked.status_code == left.status_code == 404
    assert "Agents" not in asked.text


def test_mute_is_only_ever_the_users_own_follow(subscriber, bob, agents):
    Follow.objects.create(user=bob, topic=agents)

    signed_in(bob).post("/digest/mute/agents/", {"muted": "1"})

    assert not Follow.objects.get(user=subscriber).muted
    assert Follow.objects.get(user=bob).muted


def test_test_digest_is_sent_once_its_outbox_row_is_stored(
    subscriber, agents, settings
):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    # Older than a weekly digest reaches: a test digest shows it rather than
    # nothing, and does not count it as sent.
    add_papers(agents, datetime.now(UTC).date() - timedelta(days=20), title="Shown")
    client = signed_in(subscriber)

    response = client.post("/digest/test/")
    again = client.post("/digest/test/", follow=True)

    assert response.status_code == 302
    [message] = mail.outbox
    assert message.subject.startswith("[Test] ")
    assert "Shown" in message.body
    assert Digest.objects.get().kind == "test"
    assert not DigestPaper.objects.exists()
    assert b"A test digest was sent to you a moment ago" in again.content
    # The refusal says the wait the limit (two minutes) leaves, not "a minute".
    assert b"try again in 2 minutes." in again.content
    # Its page in the browser says, as the mail does, that it is a test.
    page = Client().get(view_in_browser_link(message.body))
    assert "This is a test digest" in page.text
    # The settings page says it went, and links to it.
    test = Digest.objects.get()
    settings_page = client.get("/settings/").text
    assert f"Test digest, {test.due_at:%-d %b %Y}:" in settings_page
    assert "sent with 1 new paper (" in settings_page
    assert f'href="/digest/preview/?digest={test.pk}">read it</a>' in settings_page
    assert "No digest yet." in settings_page  # none scheduled has gone


@pytest.mark.parametrize(
    ("error", "told", "status"),
    [
        (
            smtplib.SMTPRecipientsRefused({"a": (450, b"greylisted")}),
            "The mail server did not take your test digest just now: "
            "it is tried again in",
            "on its way.",
        ),
        (
            smtplib.SMTPDataError(552, b"message too big"),
            "Your test digest could not be delivered: 552 message too big",
            "could not be delivered. 552 message too big",
        ),
    ],
)
def test_a_test_digest_the_mail_server_refuses_is_said_so_not_promised(
    subscriber, agents, settings, monkeypatch, error, told, status
):
    """The embedded default sends in the request: a mail server's refusal is
    known there, and a moment's is tried again by this process, not a 500."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    settings.EMAIL_BACKEND = FAILING_BACKEND
    FailingBackend.error = error
    monkeypatch.setattr(notifications.tasks._local, "mailer", None, raising=False)
    later = []
    monkeypatch.setattr("core.queue._run_later", lambda *args: later.append(args))
    add_papers(agents, datetime.now(UTC).date() - timedelta(days=20))
    client = signed_in(subscriber)

    page = client.post("/digest/test/", follow=True)

    assert page.status_code == 200
    # Apart from good news, and announced at once by a screen reader.
    assert f'role="alert">{told}' in page.text
    assert "on its way to your inbox" not in page.text
    assert status in page.text
    digest = Digest.objects.get()
    assert digest.attempts == 1
    if digest.status == "pending":
        [(seconds, task, args)] = later
        assert task.name == "notifications.tasks.send_digest"
        assert args == (digest.pk,)
        assert f"it is tried again in {ceil(seconds / 60)} minute" in page.text
        # Pressed again meanwhile: it is waiting, not sent.
        again = client.post("/digest/test/", follow=True).text
        assert "Your last test digest waits to be tried again" in again
        # The timer, at its countdown, sends it: the outbox's pause is over.
        settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
        countdown = timezone.now() + timedelta(seconds=seconds)
        with mock.patch("django.utils.timezone.now", return_value=countdown):
            task.apply(args, throw=True)
        assert Digest.objects.get().status == "sent"
    else:
        assert later == []
        # Nothing went: the reader may try again at once.
        FailingBackend.error = smtplib.SMTPDataError(552, b"still too big")
        again = client.post("/digest/test/", follow=True).text
        assert "could not be delivered: 552 still too big" in again
        assert Digest.objects.count() == 2


@pytest.mark.parametrize(
    "follows", ["nothing", "only a muted topic", "only a paused topic"]
)
def test_a_reader_whose_digest_can_hold_nothing_is_told_so_not_promised_one(
    alice, agents, follows
):
    verified(alice)
    if follows == "only a muted topic":
        Follow.objects.create(user=alice, topic=agents, muted=True)
    if follows == "only a paused topic":
        Follow.objects.create(user=alice, topic=agents)
        add_papers(agents, date(2026, 7, 10))
        Topic.objects.filter(pk=agents.pk).update(is_active=False)
    client = signed_in(alice)
    told = (
        "Your digest has nothing to hold: follow a topic (and leave it unmuted) "
        "or an author, or save a search. A topic the curators paused is in no digest."
    )

    refused = client.post("/digest/test/", follow=True).text
    settings_page = client.get("/settings/").text
    preview = client.get("/digest/preview/").text

    assert told in refused
    assert not Digest.objects.exists()
    assert told in settings_page
    assert "Next one" not in settings_page
    assert told in preview
    assert "Nothing is new for you" not in preview


def test_test_digest_holds_the_latest_week_harvested_when_recent_weeks_are_empty(
    subscriber, agents, django_capture_on_commit_callbacks, settings
):
    """A database whose harvest ended months ago (the demo ends in July) still
    sends a real test digest: the latest week harvested, not "nothing new"."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    last_day = datetime.now(UTC).date() - timedelta(days=130)
    add_papers(agents, last_day, title="Latest week")
    add_papers(agents, last_day - timedelta(days=9), title="Week before")

    with django_capture_on_commit_callbacks(execute=True):
        response = signed_in(subscriber).post("/digest/test/", follow=True)

    assert b"A test digest is on its way" in response.content
    [message] = mail.outbox
    assert "Latest week" in message.body
    assert "Week before" not in message.body
    assert "latest week harvested" in message.body
    assert Digest.objects.get().status == "sent"


def test_test_digest_says_why_when_the_followed_topics_have_nothing_that_week(
    subscriber, agents
):
    last_day = datetime.now(UTC).date() - timedelta(days=130)
    add_papers(make_topic("Robots", rule="ti:robot"), last_day, title="Robot")
    add_papers(agents, last_day - timedelta(days=9), title="Older agents")
    create_search(subscriber, name="Older", query="older", syntax="search")

    response = signed_in(subscriber).post("/digest/test/", follow=True)

    # Named as what the reader has: topics and a search, no authors.
    assert (
        b"The topics you follow and your saved searches have no papers in the "
        b"latest week harvested" in response.content
    )
    assert b"on its way" not in response.content
    assert not Digest.objects.exists()


def test_preview_shows_the_latest_week_harvested_when_nothing_is_new(
    subscriber, agents
):
    last_day = datetime.now(UTC).date() - timedelta(days=130)
    add_papers(agents, last_day, title="Latest week")

    response = signed_in(subscriber).get(PREVIEW)

    assert response.status_code == 200
    assert b"Latest week" in response.content
    assert b"Nothing is new for you since" in response.content
    assert b"the papers of the latest week harvested" in response.content


def test_test_digest_holds_the_papers_announced_since_the_last_send_time(
    subscriber, agents, settings
):
    """A weekly digest sent two days ago: the papers harvested since were left
    out of the test digest's latest week (it stopped at that send time's day),
    and the page said there were none."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    today = datetime.now(UTC).date()
    DigestPreferences.objects.filter(user=subscriber).update(
        frequency="weekly", weekday=(today - timedelta(days=2)).weekday(), hour=0
    )
    add_papers(agents, today, title="Announced today")

    response = signed_in(subscriber).post("/digest/test/", follow=True)

    assert b"A test digest is on its way" in response.content
    [message] = mail.outbox
    assert "Announced today" in message.body


def test_settings_count_a_digests_new_papers_as_its_subject_does(subscriber):
    """It said "sent with 30 papers" beside a mail whose subject said 96 new."""
    last_digest(
        subscriber,
        status="sent",
        paper_count=30,
        sections=[{"topic": None, "papers": [], "more": 60}, {"more": 6}],
    )

    page = signed_in(subscriber).get("/settings/").content.decode()

    assert "sent with 96 new papers, 30 shown (" in page


@pytest.mark.skipif(not POSTGRESQL, reason="threads writing at once: PostgreSQL only")
@pytest.mark.django_db(transaction=True)
def test_two_test_digests_asked_at_once_send_one(
    subscriber, agents, settings, monkeypatch
):
    """Two presses at once (two tabs, a double click without JavaScript) both
    found no test digest sent a moment ago, and both sent one."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    add_papers(agents, datetime.now(UTC).date() - timedelta(days=3), title="Shown")
    # Each request waits here a moment for the other: both past the check.
    both_past_the_check = threading.Barrier(2)
    preview = preferences.preview_content

    def meeting_preview(*args, **kwargs):
        # Or the other waits for this one to finish.
        with contextlib.suppress(threading.BrokenBarrierError):
            both_past_the_check.wait(timeout=1)
        return preview(*args, **kwargs)

    monkeypatch.setattr(preferences, "preview_content", meeting_preview)
    refused = []

    def press() -> None:
        try:
            preferences.send_test_digest(user=User.objects.get(pk=subscriber.pk))
        except preferences.TestDigestRefused as refusal:
            refused.append(str(refusal))
        finally:
            connection.close()

    presses = [threading.Thread(target=press) for _ in range(2)]
    for thread in presses:
        thread.start()
    for thread in presses:
        thread.join(30)

    assert len(mail.outbox) == 1
    assert Digest.objects.filter(kind=Digest.Kind.TEST).count() == 1
    # Told as the second press alone would be (sent, or still on its way).
    [told] = refused
    assert told.endswith("; try again in 2 minutes.")
