"""Parse arXiv's daily listing feeds (rss.arxiv.org/atom/<cat> and /rss/<cat>).

A listing announces one day's new papers, cross-lists and replacements. Each
item carries its announce type and the listing day; the submission dates are
not in the feed, so `published`/`updated` stay None.
"""

from __future__ import annotations

import html
import re
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC
from datetime import date
from datetime import datetime
from email.utils import parsedate_to_datetime
from xml.parsers import expat
from xml.sax import SAXException
from zoneinfo import ZoneInfo

import feedparser
from feedparser import FeedParserDict

from papers.ingest.authors import split_authors
from papers.ingest.records import PaperRecord
from papers.ingest.records import ParseError
from papers.ingest.records import Rejected
from papers.ingest.records import clean_text
from papers.ingest.records import in_zone
from papers.ingest.records import is_withdrawn
from papers.ingest.records import split_arxiv_id

ARXIV_TZ = ZoneInfo("America/New_York")
_ANNOUNCE_TYPE_RE = re.compile(r"Announce Type:\s*(\S+)")
_DOCTYPE = re.compile(rb"<!DOCTYPE", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ListingPage:
    records: list[PaperRecord | Rejected]
    announced: date | None
    category: str


def load_feed(data: bytes) -> FeedParserDict:
    """Parse Atom or RSS with feedparser; DTDs and broken XML raise ParseError."""
    # arXiv never sends a DTD, and a DTD is how entity-expansion bombs get in.
    if _declares_dtd(data):
        raise ParseError("refusing a feed with a DTD")
    feed = feedparser.parse(data, sanitize_html=False, resolve_relative_uris=False)
    error = feed.get("bozo_exception")
    # feedparser also flags harmless oddities (CharacterEncodingOverride and the
    # other ThingsNobodyCaresAboutButMe); only XML errors mean a truncated or
    # broken document.
    if feed.get("bozo") and isinstance(error, SAXException):
        raise ParseError(f"not well-formed feed: {error}")
    if not feed.get("version"):
        raise ParseError("not an Atom or RSS feed")
    return feed


class _PrologRead(Exception):
    pass


def _declares_dtd(data: bytes) -> bool:
    """Whether the document declares a DTD, read by an XML parser up to its
    root element, so that comments and processing instructions are skipped as
    XML skips them. A document broken before its root says no: feedparser
    tells it is broken."""
    parser = expat.ParserCreate()
    declared = []

    def doctype(*args: object) -> None:
        declared.append(True)
        raise _PrologRead

    def root(*args: object) -> None:
        raise _PrologRead

    parser.StartDoctypeDeclHandler = doctype
    parser.StartElementHandler = root
    try:
        with suppress(_PrologRead, expat.ExpatError):
            parser.Parse(data, True)
    except (ValueError, LookupError):
        # An encoding expat does not read (Shift_JIS, an unknown name), which
        # feedparser decodes itself: a DOCTYPE anywhere in its bytes counts.
        return _DOCTYPE.search(data) is not None
    return bool(declared)


def feed_text(detail: FeedParserDict | None) -> str:
    """Return a feedparser text value as plain text, collapsing whitespace."""
    value = detail.get("value", "") if detail else ""
    # RSS descriptions count as HTML for feedparser, so it keeps entities escaped.
    if detail and detail.get("type") == "text/html":
        value = html.unescape(value)
    return clean_text(value)


def parse_listing(data: bytes) -> ListingPage:
    """Parse one daily listing feed (Atom or RSS 2.0); an empty feed is no error."""
    feed = load_feed(data)
    announced = _listing_day(feed.feed.get("published") or feed.feed.get("updated"))
    records = [
        _entry_record(entry, position, announced)
        for position, entry in enumerate(feed.entries, 1)
    ]
    return ListingPage(records=records, announced=announced, category=_category(feed))


def _entry_record(
    entry: FeedParserDict, position: int, announced: date | None
) -> PaperRecord | Rejected:
    summary = feed_text(entry.get("summary_detail"))
    try:
        # The versioned id is in the OAI-style guid; the link has no version.
        arxiv_id, version = split_arxiv_id(entry.get("id") or entry.get("link") or "")
    except ParseError:
        return Rejected(entry=f"entry {position}", reason="entry has no arXiv id")
    announce_type = clean_text(entry.get("arxiv_announce_type"))
    if not announce_type and (match := _ANNOUNCE_TYPE_RE.search(summary)):
        announce_type = match.group(1)
    abstract = summary.partition("Abstract:")[2].strip() or summary
    categories = tuple(tag["term"] for tag in entry.get("tags", []) if tag.get("term"))
    authors = tuple(
        author
        for creator in entry.get("authors", [])
        for author in split_authors(creator.get("name", ""))
    )
    return PaperRecord(
        arxiv_id=arxiv_id,
        version=version,
        title=feed_text(entry.get("title_detail")),
        abstract=abstract,
        authors=authors,
        categories=categories,
        # arXiv's feed writes the paper's categories primary first.
        primary_category=categories[0] if categories else None,
        published=None,
        updated=None,
        journal_ref=clean_text(entry.get("arxiv_journal_reference")),
        doi=clean_text(entry.get("arxiv_doi")),
        license=clean_text(entry.get("rights")),
        # Listings carry no comments field; only an abstract notice can tell.
        withdrawn=is_withdrawn(abstract=abstract),
        # Early-2024 RSS items have no pubDate; the channel's date applies.
        announced=_listing_day(entry.get("published")) or announced,
        announce_type=announce_type,
    )


def _listing_day(stamp: str | None) -> date | None:
    """Return the New York calendar day of a feed timestamp (Atom or RFC 822)."""
    if not stamp:
        return None
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        try:
            moment = parsedate_to_datetime(stamp)
        except (TypeError, ValueError):
            return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    # arXiv stamps a listing at midnight New York time (04:00 or 05:00 UTC).
    try:
        return in_zone(moment, ARXIV_TZ).date()
    except ValueError:
        return None


def _category(feed: FeedParserDict) -> str:
    # "http://rss.arxiv.org/atom/cs.AI" -> "cs.AI"; "…/rss/cs.AI+cs.LG" stays whole.
    url = feed.feed.get("id") or feed.feed.get("link") or ""
    return url.rstrip("/").rpartition("/")[2]
