"""Parse responses of the arXiv query API (export.arxiv.org/api/query, Atom 1.0).

Both backends are understood: the classic one (2016-2020 recordings) and the
2025/26 one (single-quoted XML declaration, https ids, other element order).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from xml.etree.ElementTree import Element

from feedparser import FeedParserDict

from papers.ingest.authors import clean_affiliation
from papers.ingest.authors import clean_name
from papers.ingest.listings import feed_text
from papers.ingest.listings import load_feed
from papers.ingest.oai import parse_xml
from papers.ingest.records import AuthorRecord
from papers.ingest.records import PaperRecord
from papers.ingest.records import ParseError
from papers.ingest.records import Rejected
from papers.ingest.records import clean_text
from papers.ingest.records import is_withdrawn
from papers.ingest.records import split_arxiv_id

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
# Old backend: http://arxiv.org/api/errors#..., new backend: https://.
_ERROR_ID_RE = re.compile(r"^https?://(?:export\.)?arxiv\.org/api/errors")
# Category terms also carry ACM ("E.1; F.2.2") and MSC ("68P05") classes.
_CATEGORY_RE = re.compile(r"^[a-z]+(?:-[a-z]+)*(?:\.[A-Za-z]+(?:-[a-z]+)*)?$")


@dataclass(frozen=True, slots=True)
class ApiPage:
    records: list[PaperRecord | Rejected]
    total_results: int | None
    start_index: int | None
    items_per_page: int | None


def parse_api_response(data: bytes) -> ApiPage:
    """Parse one query API response; an API error entry raises ParseError."""
    # The hardened parse rejects DTDs and broken XML before feedparser runs, and
    # is needed anyway: feedparser keeps only the last arxiv:affiliation of an entry.
    affiliations = _affiliations_by_id(parse_xml(data))
    feed = load_feed(data)
    for entry in feed.entries:
        if _ERROR_ID_RE.match(entry.get("id", "")):
            raise ParseError(
                f"arXiv API error: {feed_text(entry.get('summary_detail'))}"
            )
    records = [
        _entry_record(entry, position, affiliations)
        for position, entry in enumerate(feed.entries, 1)
    ]
    return ApiPage(
        records=records,
        total_results=_int(feed.feed.get("opensearch_totalresults")),
        start_index=_int(feed.feed.get("opensearch_startindex")),
        items_per_page=_int(feed.feed.get("opensearch_itemsperpage")),
    )


def _entry_record(
    entry: FeedParserDict, position: int, affiliations: dict[str, list[tuple[str, ...]]]
) -> PaperRecord | Rejected:
    try:
        arxiv_id, version = split_arxiv_id(entry.get("id", ""))
    except ParseError:
        return Rejected(entry=f"entry {position}", reason="entry has no arXiv id")
    abstract = feed_text(entry.get("summary_detail"))
    comment = clean_text(entry.get("arxiv_comment"))
    primary = (entry.get("arxiv_primary_category") or {}).get("term")
    terms = [tag.get("term") or "" for tag in entry.get("tags", [])]
    # Some responses also carry a literal term="null" category.
    categories = [t for t in terms if _CATEGORY_RE.match(t) and t != "null"]
    if primary and primary not in categories:
        categories.insert(0, primary)
    return PaperRecord(
        arxiv_id=arxiv_id,
        version=version,
        title=feed_text(entry.get("title_detail")),
        abstract=abstract,
        authors=_authors(entry, affiliations.get(entry.get("id", ""), [])),
        categories=tuple(categories),
        primary_category=primary or None,
        published=_utc(entry.get("published_parsed")),
        updated=_utc(entry.get("updated_parsed")),
        comment=comment,
        journal_ref=clean_text(entry.get("arxiv_journal_ref")),
        doi=clean_text(entry.get("arxiv_doi")),
        withdrawn=is_withdrawn(comment=comment, abstract=abstract),
    )


def _authors(
    entry: FeedParserDict, affiliations: list[tuple[str, ...]]
) -> tuple[AuthorRecord, ...]:
    names = [
        clean_name(_undo_double_utf8(author.get("name", "")))
        for author in entry.get("authors", [])
    ]
    # Both parsers see the same <author> elements; if they ever disagree, names
    # without affiliations beat affiliations on the wrong person.
    if len(affiliations) != len(names):
        affiliations = [()] * len(names)
    return tuple(
        AuthorRecord(name=name, affiliations=affs)
        for name, affs in zip(names, affiliations, strict=True)
        if name
    )


def _affiliations_by_id(root: Element) -> dict[str, list[tuple[str, ...]]]:
    """Map each entry's <id> to its authors' affiliations, author by author."""
    found = {}
    # In one real collection only the first <entry> declares the Atom namespace,
    # so entries and their children are matched with and without it.
    for entry in root.iter():
        if entry.tag not in (f"{ATOM}entry", "entry"):
            continue
        entry_id = clean_text(entry.findtext(f"{ATOM}id") or entry.findtext("id"))
        authors = [*entry.iterfind(f"{ATOM}author"), *entry.iterfind("author")]
        found[entry_id] = [
            tuple(
                clean_affiliation(_undo_double_utf8(a.text or ""))
                for a in author.iterfind(f"{ARXIV}affiliation")
            )
            for author in authors
        ]
    return found


def _undo_double_utf8(text: str) -> str:
    # Bodies saved from requests' `.text` hold UTF-8 decoded as Latin-1 and
    # encoded again ("ClÃ©ment" for "Clément"). feedparser repairs titles and
    # abstracts but not author names, so names and affiliations are repaired
    # here. Correct text never survives the round trip, so it is left alone.
    try:
        return text.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return text


def _utc(parsed: time.struct_time | None) -> datetime | None:
    # feedparser normalises every timestamp to a UTC struct_time.
    return datetime(*parsed[:6], tzinfo=UTC) if parsed else None


def _int(text: str | None) -> int | None:
    return int(text) if text and text.strip().isdigit() else None
