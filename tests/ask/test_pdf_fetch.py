"""AskPDF fetches a missing PDF on demand, politely, from a fake arXiv of ours.

The fake server answers /pdf/<versioned id> with a real small PDF, a 404, a
body over the size cap, an HTML page, or too slowly; the fetch goes through the
polite client (papers.ingest.http) with the in-process limiter and no backoff
sleeps. The Celery task is recorded instead of queued, then run by the test.
"""

from __future__ import annotations

import json
import threading
import time

import pytest
from werkzeug import Response

from papers.ingest import http
from tests.ask.pdfs import PAGES
from tests.ask.pdfs import tiny_pdf
from topics import tasks
from topics.ask.fulltext import COMING
from topics.ask.fulltext import READY
from topics.ask.fulltext import UNAVAILABLE
from topics.ask.fulltext import download_pdf
from topics.ask.fulltext import fulltext_state
from topics.ask.fulltext import request_fulltext

QUESTION = "What does the ablation show about the value head?"


@pytest.fixture
def arxiv(httpserver, settings, tmp_path, monkeypatch):
    """The fake arXiv PDF server, configured as the site's, with a PDF folder."""
    settings.MOMENTUM_ASK_PDF_DIR = str(tmp_path / "pdfs")
    settings.MOMENTUM_ASK_PDF_URL = httpserver.url_for("/pdf/{id}")
    settings.MOMENTUM_ARXIV_MIN_INTERVAL = 0.0
    settings.MOMENTUM_HTTP_READ_TIMEOUT = 0.5
    settings.MOMENTUM_HTTP_MAX_ATTEMPTS = 2
    settings.REDIS_URL = ""  # the in-process limiter
    monkeypatch.setattr(http, "backoff_sleep", lambda seconds: None)
    return httpserver


@pytest.fixture
def queued(monkeypatch) -> list[str]:
    """The ids sent to the fetch task, recorded instead of queued."""
    sent: list[str] = []
    monkeypatch.setattr(tasks.fetch_paper_pdf, "delay", sent.append)
    return sent


def pdf_route(arxiv, paper):
    return arxiv.expect_request(f"/pdf/{paper.versioned_id}")


def folder_files(settings) -> list[str]:
    from pathlib import Path

    folder = Path(settings.MOMENTUM_ASK_PDF_DIR)
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_askpdf_answers_from_the_abstract_while_the_pdf_comes_then_from_it(
    client, paper, arxiv, queued, settings
):
    pdf_route(arxiv, paper).respond_with_data(
        tiny_pdf(PAGES), content_type="application/pdf"
    )
    url = f"/papers/{paper.arxiv_id}/ask/"

    first = client.get(url, {"q": QUESTION}).content.decode()

    assert queued == [paper.arxiv_id]
    assert "being fetched from arXiv" in first
    assert "halves the rollout budget" not in first
    # Asked again before it is in: not queued twice.
    client.get(url, {"q": QUESTION})
    assert queued == [paper.arxiv_id]

    tasks.fetch_paper_pdf(paper.arxiv_id)

    assert folder_files(settings) == ["2606.00001.pdf"]
    later = client.get(url, {"q": QUESTION}).content.decode()
    assert "being fetched" not in later
    assert "The ablation shows the value head halves the rollout budget." in later
    assert f"{paper.pdf_url}#page=2" in later
    assert fulltext_state(paper) == READY


def test_api_says_whether_the_answer_read_the_full_text(
    anonymous, paper, arxiv, queued, settings
):
    pdf_route(arxiv, paper).respond_with_data(tiny_pdf(PAGES))
    url = f"/api/v1/papers/{paper.arxiv_id}/ask/"

    assert anonymous.get(url, {"q": QUESTION}).json()["full_text"] == COMING
    download_pdf(paper.arxiv_id)
    body = anonymous.get(url, {"q": QUESTION}).json()

    assert body["full_text"] == READY
    assert "Page 2" in [source["label"] for source in body["cited"]]


def test_a_missing_pdf_is_recorded_and_not_asked_for_again(
    client, paper, arxiv, queued, settings
):
    pdf_route(arxiv, paper).respond_with_data("Not found", status=404)

    assert request_fulltext(paper) == COMING
    assert download_pdf(paper.arxiv_id) is None

    assert fulltext_state(paper) == UNAVAILABLE
    assert request_fulltext(paper) == UNAVAILABLE
    assert queued == [paper.arxiv_id]
    assert len(arxiv.log) == 1  # a 404 is not retried
    page = client.get(f"/papers/{paper.arxiv_id}/ask/", {"q": QUESTION})
    assert "could not be fetched" in page.content.decode()
    assert "plan rollouts" in page.content.decode()  # the abstract still answers


def test_a_pdf_over_the_size_cap_is_refused_and_nothing_is_written(
    paper, arxiv, settings
):
    settings.MOMENTUM_ASK_PDF_MAX_BYTES = 2000
    big = tiny_pdf(PAGES) + b"%" + b"x" * 5000 + b"\n"
    pdf_route(arxiv, paper).respond_with_data(big, content_type="application/pdf")

    assert download_pdf(paper.arxiv_id) is None

    assert fulltext_state(paper) == UNAVAILABLE
    assert folder_files(settings) == []


def test_a_streamed_body_over_the_cap_is_cut_off_while_reading(paper, arxiv, settings):
    settings.MOMENTUM_ASK_PDF_MAX_BYTES = 2000

    def chunks():
        yield b"%PDF-1.4\n"
        for _ in range(100):
            yield b"x" * 1000

    # No Content-Length: only counting the bytes read can stop it.
    pdf_route(arxiv, paper).respond_with_handler(
        lambda request: Response(chunks(), content_type="application/pdf")
    )

    assert download_pdf(paper.arxiv_id) is None
    assert folder_files(settings) == []


def test_a_response_that_is_not_a_pdf_is_refused(paper, arxiv, settings):
    pdf_route(arxiv, paper).respond_with_data(
        "<html><body>Please solve this captcha</body></html>",
        content_type="text/html",
    )

    assert download_pdf(paper.arxiv_id) is None

    assert fulltext_state(paper) == UNAVAILABLE
    assert folder_files(settings) == []


def test_an_unreadable_pdf_is_refused(paper, arxiv, settings):
    pdf_route(arxiv, paper).respond_with_data(b"%PDF-1.4 broken beyond repair")

    assert download_pdf(paper.arxiv_id) is None
    assert folder_files(settings) == []


def test_a_server_too_slow_is_retried_then_given_up(paper, arxiv, settings, caplog):
    released = threading.Event()

    def slow(request):
        released.wait(1.5)  # past the 0.5 s read timeout
        return Response(tiny_pdf(PAGES), content_type="application/pdf")

    pdf_route(arxiv, paper).respond_with_handler(slow)

    started = time.monotonic()
    try:
        assert download_pdf(paper.arxiv_id) is None
    finally:
        released.set()  # let the server finish, so the next test starts clean

    assert time.monotonic() - started < 10
    assert "timed out after 2 attempts" in caplog.text
    assert fulltext_state(paper) == UNAVAILABLE
    assert folder_files(settings) == []


def test_the_fetch_names_the_site_to_arxiv(paper, arxiv, settings):
    settings.MOMENTUM_CONTACT_EMAIL = "ops@momentum.example"
    pdf_route(arxiv, paper).respond_with_data(tiny_pdf(PAGES))

    assert download_pdf(paper.arxiv_id) is not None

    request, _ = arxiv.log[-1]
    assert "mailto:ops@momentum.example" in request.headers["User-Agent"]


def test_a_broker_that_is_down_leaves_the_abstract_answer(
    client, paper, arxiv, monkeypatch
):
    def down(arxiv_id):
        raise ConnectionError("broker unreachable")

    monkeypatch.setattr(tasks.fetch_paper_pdf, "delay", down)

    response = client.get(f"/papers/{paper.arxiv_id}/ask/", {"q": QUESTION})

    assert response.status_code == 200
    assert "plan rollouts" in response.content.decode()
    assert fulltext_state(paper) == UNAVAILABLE


def test_with_a_model_the_full_text_passages_go_to_it_and_citations_are_checked(
    client, paper, arxiv, chat, settings
):
    pdf_route(arxiv, paper).respond_with_data(tiny_pdf(PAGES))
    download_pdf(paper.arxiv_id)
    chat.answer = "The value head halves the rollout budget [2]. Made up [9]."

    page = client.get(
        f"/papers/{paper.arxiv_id}/ask/", {"q": QUESTION, "stream": "0"}
    ).content.decode()

    sent = json.loads(chat.requests[0]["messages"][1]["content"].split("\n", 1)[1])
    parts = {source["part"] for source in sent["sources"]}
    assert "Page 2" in parts
    assert any("halves the rollout budget" in s["text"] for s in sent["sources"])
    assert "The value head halves the rollout budget." in page
    assert "Made up" not in page
