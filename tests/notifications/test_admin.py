"""Digests in admin: by status, and "resend"."""

from __future__ import annotations

import re
from datetime import UTC
from datetime import date
from datetime import datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from notifications.models import Digest
from notifications.models import DigestPaper
from papers.ingest.upsert import upsert_records
from papers.models import Paper
from tests.notifications.factories import add_papers
from tests.papers.factories import paper_record

pytestmark = pytest.mark.django_db

URL = "/admin/notifications/digest/"


def make_digest(user, status: str, day: int) -> Digest:
    return Digest.objects.create(
        user=user,
        frequency="weekly",
        period_start=date(2026, 7, day),
        due_at=datetime(2026, 7, day, 8, tzinfo=UTC),
        status=status,
        reason="550 no such user" if status == "failed" else "",
    )


def test_lists_digests_by_status(admin_client, alice):
    make_digest(alice, "failed", 6)
    make_digest(alice, "sent", 13)

    page = admin_client.get(URL, {"status__exact": "failed"}).content.decode()

    assert "550 no such user" in page
    assert "Jul. 13, 2026" not in page


def test_resend_asks_first_saying_how_many_emails_to_how_many_readers(
    admin_client, alice, bob
):
    """Select all reaches every digest ever sent: nothing goes before the
    operator confirms."""
    for day in (6, 13, 20):
        make_digest(alice, "sent", day)
    make_digest(bob, "failed", 13)
    make_digest(bob, "pending", 20)

    page = admin_client.post(
        URL,
        {
            "action": "resend_digests",
            "select_across": "1",
            "_selected_action": [Digest.objects.first().pk],
        },
    )

    assert page.status_code == 200
    text = " ".join(page.text.split())
    assert (
        "4 digests of 2 readers, for periods from Jul 6, 2026 to Jul 20, 2026, "
        "will go again, each as a new email"
    ) in text
    assert "Readers with more than one digest selected get one email for each" in text
    assert 'name="select_across" value="1"' in page.text
    assert not Digest.objects.filter(status="pending").exclude(user=bob).exists()

    assert "<title>Resend digests |" in page.text
    assert 'href="/admin/notifications/digest/">Digests</a>' in page.text
    one_period = admin_client.post(
        URL,
        {"action": "resend_digests", "_selected_action": [Digest.objects.last().pk]},
    )
    assert "for the period of Jul 6, 2026, will go again" in " ".join(
        one_period.text.split()
    )

    confirmed = dict(form_fields(page.text))
    admin_client.post(URL, confirmed)

    assert Digest.objects.filter(status="pending").count() == 5


def form_fields(html: str) -> list[tuple[str, str]]:
    """The hidden fields a confirmation page posts back."""
    return re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', html)


def resend_confirmed(client, digests: list[Digest]) -> str:
    response = client.post(
        URL,
        {
            "action": "resend_digests",
            "_selected_action": [digest.pk for digest in digests],
            "post": "yes",
        },
        follow=True,
    )
    assert response.status_code == 200
    return response.text


def test_resend_puts_finished_digests_back_and_queues_them(
    admin_client, alice, monkeypatch, settings
):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    sent = []

    def broker_takes(task, *args):  # a worker sends it later
        sent.append(args)
        return True

    monkeypatch.setattr("notifications.admin.send", broker_takes)
    failed = make_digest(alice, "failed", 6)
    pending = make_digest(alice, "pending", 13)

    page = resend_confirmed(admin_client, [failed, pending])

    failed.refresh_from_db()
    assert (failed.status, failed.reason, failed.attempts) == ("pending", "", 0)
    assert sent == [(failed.pk,)]
    assert "1 digest(s) sent to the email queue" in page


def test_resend_without_a_broker_says_it_sent_them_in_the_request(
    admin_client, alice, settings
):
    """It said they were sent to the email queue, which had run them already."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    digest = make_digest(alice, "failed", 6)

    page = resend_confirmed(admin_client, [digest])

    assert "Tried 1 digest(s) in this request: see their status." in page
    assert "email queue" not in page
    digest.refresh_from_db()
    assert (digest.status, digest.reason) == ("skipped", "No verified email address.")


def test_the_lists_cost_the_same_whatever_they_hold(admin_client, alice, bob):
    """Each digest paper's reader was read once a row; the digest list counted
    and sorted every digest ever sent (520,000: 0.9-2 s a page)."""
    digest = make_digest(alice, "sent", 6)
    papers = [paper_record(f"2606.{n:05d}") for n in range(1, 21)]
    upsert_records(papers)

    def queries(url: str) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert admin_client.get(url).status_code == 200
        return len(captured)

    lists = [
        "/admin/notifications/digestpaper/",
        URL,
        f"{URL}{digest.pk}/change/",  # its papers, each named
    ]
    for url in lists:
        queries(url)  # the first request's own look-ups
    few = {url: queries(url) for url in lists}
    for n, paper in enumerate(Paper.objects.all()):
        owner = alice if n % 2 else bob
        add = make_digest(owner, "sent", 13 + n % 2) if n < 2 else digest
        DigestPaper.objects.create(digest=add, user=owner, paper=paper)

    assert {url: queries(url) for url in lists} == few
    assert "frequency" in admin_client.get(URL).text  # a filter of fixed choices


def test_a_digests_page_says_what_it_holds_by_section(admin_client, alice, topic):
    """Its planned sections were shown as JSON of ids ([[1234, []], ...]): each is
    named as the email names it, with how many papers it shows and counts."""
    papers = add_papers(topic, date(2026, 7, 8), count=2)
    digest = make_digest(alice, "sent", 13)
    digest.since = date(2026, 7, 6)
    digest.sections = [
        {"topic": topic.pk, "papers": [[paper.pk, []] for paper in papers], "more": 3}
    ]
    digest.save()

    page = admin_client.get(f"{URL}{digest.pk}/change/").text

    assert f"{topic.name}: 2 papers, 3 more counted and linked" in page
    assert "[[" not in page


def test_a_digest_whose_topics_were_deleted_says_so(admin_client, alice, topic):
    papers = add_papers(topic, date(2026, 7, 8), count=1)
    digest = make_digest(alice, "sent", 13)
    digest.since = date(2026, 7, 6)
    digest.sections = [{"topic": topic.pk, "papers": [[papers[0].pk, []]], "more": 0}]
    digest.save()
    topic.delete()

    page = admin_client.get(f"{URL}{digest.pk}/change/").text

    assert "None now: the topics it held were deleted since." in page
