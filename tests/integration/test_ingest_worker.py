"""Ingestion with a real Celery worker on the real Redis broker and PostgreSQL."""

from __future__ import annotations

import signal

import pytest
from django.conf import settings
from django.utils import timezone

from papers.models import FeedSource
from papers.models import IngestRun
from papers.models import Paper
from papers.tasks import enqueue_due_sources
from papers.tasks import ingest_source
from tests.fakearxiv import FIXTURES
from tests.fakearxiv import OAI_FIRST_PAGE
from tests.fakearxiv import OAI_FIRST_TOKEN
from tests.fakearxiv import OAI_LAST_PAGE
from tests.fakearxiv import slow
from tests.fakearxiv import xml
from tests.integration.celery_workers import worker_process
from tests.integration.celery_workers import worker_thread
from tests.topics.factories import make_topic
from tests.waiting import wait_for
from topics.models import PaperTopic

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("broker"),
]

STAT_LISTING = (
    FIXTURES
    / "listing_rss2_2024"
    / "emanuelealiverti-arxiv_rss_stat_2024-03-26.rss.xml"
)


def finished_runs() -> list[IngestRun]:
    return list(
        IngestRun.objects.exclude(status=IngestRun.Status.RUNNING).order_by("pk")
    )


def test_beat_entry_sends_the_due_source_to_a_worker_that_stores_and_tags(fake_arxiv):
    entry = settings.CELERY_BEAT_SCHEDULE["enqueue-due-sources"]
    topic = make_topic("Conformal prediction", rule="ti:conformal", slug="conformal")
    FeedSource.objects.create(name="stat listing", kind="listing", category="stat")
    fake_arxiv.on("/atom/stat", xml(STAT_LISTING))

    with worker_thread("ingest"):
        enqueue_due_sources.apply_async(**entry.get("options", {}))
        wait_for(lambda: len(finished_runs()) == 1)

    run = finished_runs()[0]
    assert entry["task"] == enqueue_due_sources.name
    assert run.status == IngestRun.Status.SUCCEEDED
    assert run.new_count == Paper.objects.count() > 50
    assert PaperTopic.objects.filter(topic=topic).exists()


def test_beat_firing_twice_sends_a_source_once(fake_arxiv):
    FeedSource.objects.create(name="stat listing", kind="listing", category="stat")
    fake_arxiv.on("/atom/stat", xml(STAT_LISTING))

    with worker_thread("ingest"):
        enqueue_due_sources.delay()
        enqueue_due_sources.delay()
        wait_for(lambda: len(finished_runs()) == 1)
        wait_for(lambda: len(fake_arxiv.requests) == 1)

    assert len(fake_arxiv.requests) == 1


def test_two_workers_running_one_source_at_once_store_it_once(fake_arxiv):
    feed = FeedSource.objects.create(
        name="stat listing", kind="listing", category="stat"
    )
    fake_arxiv.on("/atom/stat", slow(xml(STAT_LISTING), 1.0))

    with worker_thread("ingest", concurrency=2):
        ingest_source.delay(feed.pk)
        ingest_source.delay(feed.pk)
        wait_for(lambda: len(finished_runs()) == 1)
        first_count = Paper.objects.count()
        ingest_source.delay(feed.pk)
        wait_for(lambda: len(finished_runs()) == 2)

    first, second = finished_runs()
    assert first.new_count == first_count == Paper.objects.count()
    assert (second.new_count, second.updated_count) == (0, 0)
    assert second.unchanged_count == first.new_count + first.unchanged_count


def test_a_worker_killed_midway_leaves_whole_pages_and_beat_resumes_the_run(
    fake_arxiv, settings
):
    """The source's next scheduled run is a day away; the next beat tick after
    the dead worker's lease expires resumes it from the checkpoint anyway."""
    # Short leases and timeouts, so what a dead worker holds (its claim on the
    # source, the arXiv connection lock) is released within seconds.
    timeouts = {
        "MOMENTUM_INGEST_CLAIM_SECONDS": "2",
        "MOMENTUM_HTTP_CONNECT_TIMEOUT": "1",
        "MOMENTUM_HTTP_READ_TIMEOUT": "2",
    }
    for name, value in timeouts.items():
        setattr(settings, name, float(value))
    feed = FeedSource.objects.create(name="cs OAI", kind="oai", category="cs")
    # The test server answers one request at a time: the stalled page 2 must end
    # (unanswered by then) before the next run can be served.
    fake_arxiv.on("/oai", xml(OAI_FIRST_PAGE), slow(xml(OAI_LAST_PAGE), 3))
    # As beat would have sent it: its next run is moved a day on first.
    FeedSource.objects.filter(pk=feed.pk).update(next_run_at=timezone.now())
    enqueue_due_sources()
    worker = worker_process(
        "ingest",
        MOMENTUM_ARXIV_OAI_URL=settings.MOMENTUM_ARXIV_OAI_URL,
        MOMENTUM_ARXIV_MIN_INTERVAL="0.01",
        **timeouts,
    )
    try:
        # Killed while waiting for page 2, after page 1 was stored.
        wait_for(lambda: len(fake_arxiv.requests) == 2, timeout=60)
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=10)
    finally:
        if worker.poll() is None:
            worker.kill()
    after_kill = Paper.objects.count()
    feed.refresh_from_db()
    fake_arxiv.requests.clear()
    fake_arxiv.on("/oai", xml(OAI_LAST_PAGE))

    assert feed.next_run_at > timezone.now()  # not due: beat must see the lease
    with worker_thread("ingest"):
        wait_for(lambda: _claim_expired(feed), timeout=10)
        enqueue_due_sources.delay()  # the next beat tick
        wait_for(lambda: IngestRun.objects.filter(status="succeeded").exists(), 60)

    assert after_kill == 1000
    assert feed.resumption_token == OAI_FIRST_TOKEN
    assert fake_arxiv.params("/oai") == [
        {"verb": "ListRecords", "resumptionToken": OAI_FIRST_TOKEN}
    ]
    killed, resumed = IngestRun.objects.order_by("pk")
    assert killed.status == IngestRun.Status.FAILED
    assert "Abandoned" in killed.message
    assert Paper.objects.count() == after_kill + resumed.new_count
    assert Paper.objects.values("arxiv_id").distinct().count() == Paper.objects.count()


def _claim_expired(feed: FeedSource) -> bool:
    feed.refresh_from_db()
    return feed.claimed_until is None or feed.claimed_until < timezone.now()
