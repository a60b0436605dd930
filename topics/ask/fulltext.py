"""A paper's full text, from its PDF, for AskPDF.

The PDFs live in a folder (MOMENTUM_ASK_PDF_DIR), named by arXiv id with "/" as
"_" (math/0601001 -> math_0601001.pdf): operators may fill it from arXiv's bulk
PDF access, and a question about a paper whose PDF is missing asks for it
(`request_fulltext`): a Celery task (topics.tasks.fetch_paper_pdf) fetches it
through the polite arXiv client (papers.ingest.http: the shared limiter,
retries, timeouts), refuses a body over MOMENTUM_ASK_PDF_MAX_BYTES or one that
is not a readable PDF, and writes it into the folder whole or not at all. Until
then AskPDF answers from the abstract and says the full text is coming; a PDF
that could not be had is not asked for again for a day.

The text of each PDF (its first MOMENTUM_ASK_PDF_MAX_PAGES pages) is extracted
once with pypdf and cached (keyed by the file's size and modification time),
then cut into passages of about PASSAGE_WORDS words that retrieval ranks.
"""

from __future__ import annotations

import io
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from pypdf import PdfReader

from papers.ingest.http import FetchError
from papers.ingest.http import fetch
from papers.models import Paper

logger = logging.getLogger(__name__)

PASSAGE_WORDS = 150
CACHE_SECONDS = 7 * 24 * 3600
# A fetch asked for and not finished by then (a worker lost) may be asked again.
PENDING_SECONDS = 15 * 60
# A PDF that could not be had (404, too large, not a PDF, arXiv failing) is not
# asked for again before then.
FAILED_SECONDS = 24 * 3600

# What a page says of a paper's full text.
READY = "ready"  # on disk: answers come from its passages
COMING = "coming"  # being fetched: answers come from the abstract meanwhile
UNAVAILABLE = "unavailable"  # could not be fetched lately
OFF = "off"  # no folder configured: abstract and metadata only


class FullTextError(Exception):
    """The PDF could not be read."""


@dataclass(frozen=True)
class Passage:
    page: int  # 1-based
    text: str


def pdf_path(arxiv_id: str) -> Path | None:
    """Where this paper's PDF would be, or None when no folder is configured."""
    folder = settings.MOMENTUM_ASK_PDF_DIR
    if not folder:
        return None
    return Path(folder) / f"{arxiv_id.replace('/', '_')}.pdf"


def paper_passages(paper: Paper) -> list[Passage]:
    """The passages of the paper's PDF, or [] when there is none or it is unreadable;
    caches the extracted text."""
    path = pdf_path(paper.arxiv_id)
    if path is None:
        return []
    try:
        stat = path.stat()
    except OSError:
        return []
    key = f"ask:fulltext:{paper.arxiv_id}:{stat.st_size}:{stat.st_mtime_ns}"
    pages = cache.get(key)
    if pages is None:
        try:
            pages = extract_pages(path.read_bytes())
        except (OSError, FullTextError) as exc:
            logger.warning("No full text for %s: %s", paper.arxiv_id, exc)
            pages = []
        cache.set(key, pages, CACHE_SECONDS)
    return passages(pages)


def fulltext_state(paper: Paper) -> str:
    """READY, COMING, UNAVAILABLE or OFF (see above); reads only."""
    path = pdf_path(paper.arxiv_id)
    if path is None:
        return OFF
    if path.exists():
        return READY
    if cache.get(_failed_key(paper.arxiv_id)):
        return UNAVAILABLE
    return COMING if cache.get(_pending_key(paper.arxiv_id)) else UNAVAILABLE


def request_fulltext(paper: Paper) -> str:
    """The paper's full-text state, after asking for its PDF to be fetched when
    it is missing (once per PENDING_SECONDS, never after a recent failure)."""
    path = pdf_path(paper.arxiv_id)
    if path is None or path.exists() or cache.get(_failed_key(paper.arxiv_id)):
        return fulltext_state(paper)
    if cache.add(_pending_key(paper.arxiv_id), 1, PENDING_SECONDS):
        from topics.tasks import fetch_paper_pdf

        try:
            fetch_paper_pdf.delay(paper.arxiv_id)
        # A broker that is down must not fail the question: the answer comes
        # from the abstract, and a later question asks again.
        except Exception as exc:
            logger.warning("Could not queue the PDF of %s: %s", paper.arxiv_id, exc)
            cache.delete(_pending_key(paper.arxiv_id))
            return UNAVAILABLE
    return fulltext_state(paper)


def download_pdf(arxiv_id: str) -> Path | None:
    """Fetch the paper's PDF into the folder; None (and the reason recorded for
    FAILED_SECONDS) when it could not be had."""
    path = pdf_path(arxiv_id)
    paper = Paper.objects.filter(arxiv_id=arxiv_id).first()
    if path is None or paper is None:
        return None
    if path.exists():
        return path
    url = settings.MOMENTUM_ASK_PDF_URL.format(id=paper.versioned_id)
    try:
        data = fetch(url, max_bytes=settings.MOMENTUM_ASK_PDF_MAX_BYTES).body
        if not data.startswith(b"%PDF-"):
            raise FullTextError("the response is not a PDF")
        extract_pages(data)  # refuses one pypdf cannot read
        _write_whole(path, data)
    except (FetchError, FullTextError, OSError) as exc:
        logger.warning("No PDF for %s from %s: %s", arxiv_id, url, exc)
        cache.set(_failed_key(arxiv_id), str(exc)[:300], FAILED_SECONDS)
        return None
    finally:
        cache.delete(_pending_key(arxiv_id))
    logger.info("Fetched the PDF of %s, %s bytes", arxiv_id, len(data))
    return path


def _write_whole(path: Path, data: bytes) -> None:
    """Write through a temporary file and rename: readers never see half a PDF."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".part")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _pending_key(arxiv_id: str) -> str:
    return f"ask:pdf:pending:{arxiv_id}"


def _failed_key(arxiv_id: str) -> str:
    return f"ask:pdf:failed:{arxiv_id}"


def extract_pages(data: bytes) -> list[str]:
    """The text of each page of a PDF, at most MOMENTUM_ASK_PDF_MAX_PAGES."""
    limit = settings.MOMENTUM_ASK_PDF_MAX_BYTES
    if len(data) > limit:
        raise FullTextError(f"PDF over {limit} bytes")
    try:
        reader = PdfReader(io.BytesIO(data))
        return [
            " ".join((page.extract_text() or "").split())
            for page in reader.pages[: settings.MOMENTUM_ASK_PDF_MAX_PAGES]
        ]
    # PDFs come from outside and pypdf raises many kinds of errors on broken
    # ones; any of them means "no full text", never a failed page.
    except Exception as exc:
        raise FullTextError(f"unreadable PDF: {exc}") from exc


def passages(pages: list[str], words: int = PASSAGE_WORDS) -> list[Passage]:
    """Each page cut into runs of about `words` words, never across pages."""
    found = []
    for number, text in enumerate(pages, 1):
        page_words = text.split()
        for start in range(0, len(page_words), words):
            chunk = " ".join(page_words[start : start + words])
            if chunk:
                found.append(Passage(page=number, text=chunk))
    return found
