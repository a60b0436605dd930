"""AskPDF's fetch of a paper's PDF with real Celery workers on the real Redis
broker and PostgreSQL, against the fake arXiv."""

from __future__ import annotations

import threading

import pytest
from werkzeug import Response

from papers.ingest import http
from papers.models import FeedSource
from papers.models import IngestRun
from papers.tasks import ingest_source
from tests.ask.pdfs import PAGES
from tests.ask.pdfs import tiny_pdf
from tests.fakearxiv import xml
from tests.integration.celery_workers import worker_process
from tests.integration.celery_workers import worker_thread
from tests.papers.test_harvest import STAT_LISTING
from tests.waiting import wait_for
from topics.ask.fulltext import COMING
from topics.ask.fulltext import READY
from topics.ask.fulltext import fulltext_state
from topics.ask.fulltext import request_fulltext
from topics.tasks import fetch_paper_pdf

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("broker"),
]


@pytest.fixture
def pdf_on_arxiv(fake_arxiv, paper, settings, tmp_path):
    """The paper's PDF on the fake arXiv, and a PDF folder without it."""
    settings.MOMENTUM_ASK_PDF_DIR = str(tmp_path / "pdfs")
    settings.MOMENTUM_ASK_PDF_URL = fake_arxiv.server.url_for("/pdf/{id}")
    fake_arxiv.on(
        f"/pdf/{paper.versioned_id}",
        Response(tiny_pdf(PAGES), content_type="application/pdf"),
    )
    return fake_arxiv


def test_a_pdf_comes_while_the_ingest_queues_worker_harvests(
    pdf_on_arxiv, paper, settings, monkeypatch
):
    """arXiv tells the harvest to come back later (503, Retry-After): the ingest
    queue's one worker waits it out, and the reader's PDF, on a queue of its
    own, is fetched meanwhile, between the harvest's requests (one limiter,
    through Redis)."""
    feed = FeedSource.objects.create(
        name="stat listing", kind="listing", category="stat"
    )
    busy = Response("busy", status=503, headers={"Retry-After": "60"})
    pdf_on_arxiv.on("/atom/stat", busy, xml(STAT_LISTING))
    # The harvest's wait for Retry-After, until the test ends it.
    retry = threading.Event()
    monkeypatch.setattr(http, "backoff_sleep", lambda seconds: retry.wait(60))
    # A process of its own, as the Procfile runs it (two test workers in one
    # process share Celery's stop flag, and one may not stop).
    fetcher = worker_process(
        "fetch",
        MOMENTUM_ASK_PDF_DIR=settings.MOMENTUM_ASK_PDF_DIR,
        MOMENTUM_ASK_PDF_URL=settings.MOMENTUM_ASK_PDF_URL,
        MOMENTUM_ARXIV_MIN_INTERVAL=str(settings.MOMENTUM_ARXIV_MIN_INTERVAL),
        REDIS_URL=settings.REDIS_URL,
    )
    try:
        with worker_thread("ingest"):
            ingest_source.delay(feed.pk)
            try:
                wait_for(lambda: pdf_on_arxiv.params("/atom/stat"))
                assert request_fulltext(paper) == COMING
                wait_for(lambda: fulltext_state(paper) == READY, timeout=60)
                harvest = IngestRun.objects.get().status
            finally:
                # Even when the PDF never came: a harvest left waiting would
                # outlive its worker, and this test's database.
                retry.set()
            wait_for(lambda: IngestRun.objects.filter(status="succeeded").exists())
    finally:
        fetcher.kill()
        fetcher.wait(timeout=10)

    assert harvest == IngestRun.Status.RUNNING
    assert [request.path for request in pdf_on_arxiv.requests] == [
        "/atom/stat",
        f"/pdf/{paper.versioned_id}",
        "/atom/stat",
    ]


def test_a_pdf_fetch_sent_to_the_ingest_queue_before_an_upgrade_still_runs(
    pdf_on_arxiv, paper
):
    """Releases before the fetch queue sent it to ingest: its worker runs any
    task it knows, whatever queue it came by."""
    with worker_thread("ingest"):
        fetch_paper_pdf.apply_async((paper.arxiv_id,), queue="ingest")
        wait_for(lambda: fulltext_state(paper) == READY)

    assert pdf_on_arxiv.params(f"/pdf/{paper.versioned_id}") == [{}]
