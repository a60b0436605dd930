"""A paper's full text, from its PDF, for AskPDF.

In production the PDFs live in a folder (MOMENTUM_ASK_PDF_DIR) that operators
fill from arXiv's bulk PDF access or a polite fetch job, named by arXiv id with
"/" as "_" (math/0601001 -> math_0601001.pdf). The text of each PDF is extracted
once with pypdf and cached (keyed by the file's size and modification time), then
cut into passages of about PASSAGE_WORDS words that retrieval ranks. Without the
setting, or without the file, AskPDF answers from the abstract and metadata.
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from pypdf import PdfReader

from papers.models import Paper

logger = logging.getLogger(__name__)

MAX_PDF_BYTES = 50 * 1024 * 1024
MAX_PAGES = 80
PASSAGE_WORDS = 150
CACHE_SECONDS = 7 * 24 * 3600


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


def extract_pages(data: bytes) -> list[str]:
    """The text of each page of a PDF, at most MAX_PAGES of them."""
    if len(data) > MAX_PDF_BYTES:
        raise FullTextError(f"PDF over {MAX_PDF_BYTES} bytes")
    try:
        reader = PdfReader(io.BytesIO(data))
        return [
            " ".join((page.extract_text() or "").split())
            for page in reader.pages[:MAX_PAGES]
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
