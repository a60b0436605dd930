"""The feed sources' admin: "Run now" says what it did."""

from __future__ import annotations

import pytest

from papers.models import FeedSource
from papers.models import IngestRun
from tests.fakearxiv import xml
from tests.papers.test_harvest import EMPTY_LISTING

pytestmark = pytest.mark.django_db


def run_now(client, source: FeedSource) -> str:
    response = client.post(
        "/admin/papers/feedsource/",
        {"action": "run_now", "_selected_action": [source.pk]},
        follow=True,
    )
    assert response.status_code == 200
    return response.text


def test_run_now_without_a_broker_says_the_sources_ran(
    admin_client, fake_arxiv, settings
):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    fake_arxiv.on("/atom/cs.AI", xml(EMPTY_LISTING))
    source = FeedSource.objects.create(name="cs.AI", kind="listing", category="cs.AI")

    page = run_now(admin_client, source)

    assert (
        'Ran 1 source(s) in this request: see <a href="/admin/papers/ingestrun/">'
        "their runs</a>." in page
    )
    assert "Queued" not in page
    assert IngestRun.objects.get().feed == source


def test_run_now_with_a_broker_says_the_sources_are_queued(
    admin_client, monkeypatch, settings
):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    sent = []

    def broker_takes(task, *args):  # a worker runs it later
        sent.append(args)
        return True

    monkeypatch.setattr("papers.admin.send", broker_takes)
    source = FeedSource.objects.create(name="cs.AI", kind="listing", category="cs.AI")

    page = run_now(admin_client, source)

    assert "Queued 1 source(s) to run now." in page
    assert sent == [(source.pk,)]
