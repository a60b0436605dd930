"""Parse responses of the arXiv query API (export.arxiv.org/api/query, Atom 1.0).

Both backends are understood: the classic one (2016-2020 recordings) and the
2025/26 one (single-quoted XML declaration, https ids, other element order).

Unlike the listing feeds, API responses are read with the hardened XML parser
alone, not feedparser: the API only ever sends strict, namespaced Atom, and one
XML pass instead of feedparser's plus ours parses about ten times faster. The
repairs feedparser made for us (double-encoded UTF-8, windows-1252 characters,
`updated` falling back to `published`) are made here.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from io import BytesIO
from xml.etree.ElementTree import Element
from xml.etree.ElementTree import ParseError as XmlSyntaxError

from defusedxml import DefusedXmlException
from defusedxml import ElementTree as SafeElementTree

from papers.ingest.authors import clean_affiliation
from papers.ingest.authors import clean_name
from papers.ingest.records import AuthorRecord
from papers.ingest.records import PaperRecord
from papers.ingest.records import ParseError
from papers.ingest.records import Rejected
from papers.ingest.records import clean_text
from papers.ingest.records import in_zone
from papers.ingest.records import is_category_code
from papers.ingest.records import is_withdrawn
from papers.ingest.records import repair_text
from papers.ingest.records import split_arxiv_id

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
# In one real collection only the first <entry> declares the Atom namespace, so
# Atom elements are recognised with and without it. arXiv's own elements always
# carry their namespace (the prefix would not parse otherwise).
_FEEDS = (f"{ATOM}feed", "feed")
_ENTRIES = (f"{ATOM}entry", "entry")
_NAMES = (f"{ATOM}name", "name")
_AFFILIATION = f"{ARXIV}affiliation"
_ENTRY_FIELDS = {
    **{
        namespace + name: name
        for namespace in (ATOM, "")
        for name in ("id", "title", "summary", "published", "updated")
    },
    **{ARXIV + name: name for name in ("comment", "journal_ref", "doi")},
}
_AUTHORS = (f"{ATOM}author", "author")
_CATEGORIES = (f"{ATOM}category", "category")
_PRIMARY_CATEGORY = f"{ARXIV}primary_category"

# Old backend: http://arxiv.org/api/errors#..., new backend: https://.
_ERROR_ID_RE = re.compile(r"^https?://(?:export\.)?arxiv\.org/api/errors")
_ENCODING_RE = re.compile(
    rb"^(?:\xef\xbb\xbf)?<\?xml[^>]*?encoding\s*=\s*[\"']([^\"']*)"
)
# C1 control characters in text are windows-1252 characters mislabelled.
_CP1252 = str.maketrans(
    {
        code: bytes([code]).decode("cp1252")
        for code in range(0x80, 0xA0)
        if code not in (0x81, 0x8D, 0x8F, 0x90, 0x9D)  # unassigned in cp1252
    }
)


@dataclass(frozen=True, slots=True)
class ApiPage:
    records: list[PaperRecord | Rejected]
    total_results: int | None
    start_index: int | None
    items_per_page: int | None


def parse_api_response(data: bytes) -> ApiPage:
    """Parse one query API response; an API error entry raises ParseError."""
    utf8 = _is_utf8(data)
    records: list[PaperRecord | Rejected] = []
    atom = False
    # Entries are read as they are parsed and then cleared, so a page never
    # holds a whole tree of elements (which would also wake the garbage
    # collector's full passes, page after page).
    for element in _parse_ends(data):
        if element.tag in _ENTRIES:
            atom = atom or element.tag == _ENTRIES[0]
            records.append(_entry_record(element, len(records) + 1, utf8))
            element.clear()
    root = element  # the last element to end is the document's root
    if root.tag not in _FEEDS and not atom:
        raise ParseError("not an Atom feed")
    return ApiPage(
        records=records,
        total_results=_int(root.findtext(f"{OPENSEARCH}totalResults")),
        start_index=_int(root.findtext(f"{OPENSEARCH}startIndex")),
        items_per_page=_int(root.findtext(f"{OPENSEARCH}itemsPerPage")),
    )


def _parse_ends(data: bytes) -> Iterator[Element]:
    """Each element of the document as it ends, parsed with defusedxml.

    DTDs (entity bombs) and broken or truncated XML raise ParseError, as in
    oai.parse_xml.
    """
    try:
        for _, element in SafeElementTree.iterparse(
            BytesIO(data), events=("end",), forbid_dtd=True
        ):
            yield element
    except DefusedXmlException as exc:
        raise ParseError(f"refusing unsafe XML: {exc}") from exc
    except XmlSyntaxError as exc:
        raise ParseError(f"not well-formed XML: {exc}") from exc


def _entry_record(entry: Element, position: int, utf8: bool) -> PaperRecord | Rejected:
    fields: dict[str, Element] = {}
    authors: list[Element] = []
    terms: dict[tuple[str, str, str], None] = {}
    primary = None
    # One pass over the children; a repeated element counts once, the last.
    for child in entry:
        tag = child.tag
        if tag in _ENTRY_FIELDS:
            fields[_ENTRY_FIELDS[tag]] = child
        elif tag in _AUTHORS:
            authors.append(child)
        elif tag in _CATEGORIES:
            # A category with the same term, scheme and label counts once.
            attrs = child.attrib
            term = attrs.get("term", "")
            scheme = attrs.get("scheme", attrs.get("domain", ""))
            if term or scheme or attrs.get("label"):
                terms[term, scheme, attrs.get("label", "")] = None
        elif tag == _PRIMARY_CATEGORY:
            primary = child.get("term")
    entry_id = _text(fields.get("id"), utf8)
    if _ERROR_ID_RE.match(entry_id):
        summary = _content(fields.get("summary"), utf8)
        raise ParseError(f"arXiv API error: {summary}")
    try:
        arxiv_id, version = split_arxiv_id(entry_id)
    except ParseError:
        return Rejected(entry=f"entry {position}", reason="entry has no arXiv id")
    abstract = _content(fields.get("summary"), utf8)
    comment = clean_text(_text(fields.get("comment"), utf8))
    # Category terms also carry ACM ("E.1; F.2.2") and MSC ("68P05") classes,
    # and some responses a literal term="null".
    categories = [t for t, _, _ in terms if is_category_code(t) and t != "null"]
    if primary and primary not in categories:
        categories.insert(0, primary)
    published = _utc(_text(fields.get("published"), utf8))
    return PaperRecord(
        arxiv_id=arxiv_id,
        version=version,
        title=_content(fields.get("title"), utf8),
        abstract=abstract,
        authors=tuple(_authors(authors)),
        categories=tuple(categories),
        primary_category=primary or None,
        published=published,
        # An entry without <updated> has only ever had its first version.
        updated=_utc(_text(fields["updated"], utf8))
        if "updated" in fields
        else published,
        comment=comment,
        journal_ref=clean_text(_text(fields.get("journal_ref"), utf8)),
        doi=clean_text(_text(fields.get("doi"), utf8)),
        withdrawn=is_withdrawn(comment=comment, abstract=abstract),
    )


def _authors(authors: list[Element]) -> list[AuthorRecord]:
    found = []
    for author in authors:
        name = ""
        affiliations = []
        for child in author:
            if child.tag in _NAMES:
                name = _element_text(child).strip()
            elif child.tag == _AFFILIATION:
                affiliations.append(clean_affiliation(child.text or ""))
        name = clean_name(name)
        if name:
            found.append(AuthorRecord(name=name, affiliations=tuple(affiliations)))
    return found


def _content(element: Element | None, utf8: bool) -> str:
    """A title or summary as plain text, whitespace collapsed."""
    text = _text(element, utf8)
    if element is not None and element.get("type", "").lower() in ("html", "text/html"):
        text = html.unescape(text)
    return clean_text(text)


def _text(element: Element | None, utf8: bool) -> str:
    if element is None:
        return ""
    text = _element_text(element).strip()
    if text.isascii():
        return text
    if utf8:
        text = repair_text(text)
    return text.translate(_CP1252)


def _element_text(element: Element) -> str:
    return "".join(element.itertext()) if len(element) else element.text or ""


def _is_utf8(data: bytes) -> bool:
    # The XML declaration names the encoding; without one, XML is UTF-8.
    declared = _ENCODING_RE.match(data[:200])
    return declared is None or declared.group(1).lower() in (b"utf-8", b"utf8")


def _utc(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return in_zone(moment, UTC).replace(microsecond=0)
    except ValueError:
        return None


def _int(text: str | None) -> int | None:
    return int(text) if text and text.strip().isdigit() else None
