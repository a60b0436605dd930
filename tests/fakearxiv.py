"""A fake arXiv at the HTTP level: a local server replaying real saved responses.

The real client, parsers and database run; only the far end is replaced. Bodies
come byte for byte from tests/fixtures/arxiv (see its PROVENANCE.md). The few
protocol replies no recording holds (OAI-PMH error envelopes) are written here
to the OAI-PMH 2.0 specification, and say so.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request
from werkzeug import Response

from papers.ingest import http

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "arxiv"
API = FIXTURES / "api_atom"
OAI = FIXTURES / "oai_arXiv"

TESTING_PAGES = {
    start: next(API.glob(f"arxiv.py_q_testing_s{start}_m10_*.atom.xml"))
    for start in (0, 10, 20, 30, 40, 50)
}
# arXiv's reply to a query with no results (totalResults 0).
EMPTY_API_RESPONSE = API / "arxiv.py_id_0000.0000_s0_m100_8b51d9633a68.atom.xml"
API_ERROR_RESPONSE = API / "arxiv.py_id_abc_s0_m100_b79c8dcf6bc3.atom.xml"
OAI_FIRST_PAGE = OAI / "arxivXMLParser_ListRecords_arXiv_cs_2016-03_page001.xml"
OAI_LAST_PAGE = OAI / "arxivXMLParser_ListRecords_arXiv_cs_2016-03_page103.xml"
OAI_FIRST_TOKEN = "1122234|1001"
OAI_RETRY_RECORDING = (
    OAI / "cassettes" / "paperhive-oai-pmh_nock_listrecords_arXiv_2015-01-01.json"
)

# Written to the OAI-PMH 2.0 specification, section 3.6 (no recording has one).
OAI_ERROR = """<?xml version="1.0" encoding="UTF-8"?>
<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">
<responseDate>2026-07-01T00:00:00Z</responseDate>
<request verb="ListRecords">https://oaipmh.arxiv.org/oai</request>
<error code="{code}">{message}</error>
</OAI-PMH>
"""

Reply = Response | Callable[[Request], Response]


@dataclass
class FakeArxiv:
    server: HTTPServer
    requests: list[Request] = field(default_factory=list)
    # Path -> replies served in turn; the last one repeats.
    replies: dict[str, list[Reply]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # What the client's backoff would have slept, instead of sleeping.
    backoff_waits: list[float] = field(default_factory=list)

    def on(self, path: str, *replies: Reply) -> None:
        self.replies[path] = list(replies)

    def handle(self, request: Request) -> Response:
        with self.lock:
            self.requests.append(request)
            queue = self.replies.get(request.path)
            if not queue:
                return Response("not found", status=404)
            reply = queue.pop(0) if len(queue) > 1 else queue[0]
        return (
            reply(request)
            if callable(reply) and not isinstance(reply, Response)
            else reply
        )

    def params(self, path: str) -> list[dict[str, str]]:
        return [dict(r.args) for r in self.requests if r.path == path]


def xml(path: Path, status: int = 200, **headers: str) -> Response:
    return Response(
        path.read_bytes(), status=status, headers=headers, content_type="text/xml"
    )


def oai_error(code: str, message: str) -> Response:
    body = OAI_ERROR.format(code=code, message=message)
    return Response(body, content_type="text/xml")


def recorded(path: Path, index: int) -> Response:
    """One reply of a nock recording, with its status and headers."""
    entry = json.loads(path.read_text())[index]
    raw = entry.get("rawHeaders", [])
    headers = {
        name: value
        for name, value in zip(raw[::2], raw[1::2], strict=True)
        if name.lower() not in {"content-length", "connection", "date"}
    }
    return Response(entry["response"], status=entry["status"], headers=headers)


def api_pages(
    pages: dict[int, Path | bytes], after: Path = EMPTY_API_RESPONSE
) -> Reply:
    """Serve the query API by its `start` parameter, as arXiv pages its results."""

    def reply(request: Request) -> Response:
        page = pages.get(int(request.args.get("start", 0)), after)
        body = page if isinstance(page, bytes) else page.read_bytes()
        return Response(body, content_type="application/atom+xml")

    return reply


def slow(reply: Response, seconds: float) -> Reply:
    def handler(request: Request) -> Response:
        time.sleep(seconds)
        return reply

    return handler


@pytest.fixture
def fake_arxiv(httpserver: HTTPServer, settings, monkeypatch) -> FakeArxiv:
    """arXiv's API, OAI-PMH and listing endpoints on a local server; no real waits."""
    fake = FakeArxiv(httpserver)
    httpserver.expect_request(re.compile(".*")).respond_with_handler(fake.handle)
    base = httpserver.url_for("")
    settings.MOMENTUM_ARXIV_API_URL = f"{base}api/query"
    settings.MOMENTUM_ARXIV_OAI_URL = f"{base}oai"
    settings.MOMENTUM_ARXIV_LISTING_URL = base + "atom/{category}"
    settings.MOMENTUM_ARXIV_API_PAGE_SIZE = 10
    settings.MOMENTUM_ARXIV_MIN_INTERVAL = 0.01
    monkeypatch.setattr(http, "backoff_sleep", fake.backoff_waits.append)
    return fake
