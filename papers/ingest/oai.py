"""Parse arXiv OAI-PMH responses (ListRecords, GetRecord) into PaperRecords.

Three metadata formats are understood: `arXiv` (structured authors, dates only),
`arXivRaw` (every version with its submission time and size, raw author string)
and `oai_dc` (Dublin Core: subject names instead of category codes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import time
from xml.etree.ElementTree import Element
from xml.etree.ElementTree import ParseError as XmlSyntaxError

from defusedxml import DefusedXmlException
from defusedxml import ElementTree as SafeElementTree

from papers.ingest.authors import author_from_parts
from papers.ingest.authors import split_authors
from papers.ingest.records import AuthorRecord
from papers.ingest.records import PaperRecord
from papers.ingest.records import ParseError
from papers.ingest.records import Rejected
from papers.ingest.records import VersionRecord
from papers.ingest.records import clean_text
from papers.ingest.records import is_withdrawn
from papers.ingest.records import rfc2822_utc
from papers.ingest.records import split_arxiv_id
from papers.taxonomy import OAI_SUBJECT_CODES

OAI = "{http://www.openarchives.org/OAI/2.0/}"
ARXIV = "{http://arxiv.org/OAI/arXiv/}"
ARXIV_RAW = "{http://arxiv.org/OAI/arXivRaw/}"
OAI_DC = "{http://www.openarchives.org/OAI/2.0/oai_dc/}"
DC = "{http://purl.org/dc/elements/1.1/}"


class OaiError(ParseError):
    """The repository answered with an OAI-PMH error (badResumptionToken, ...)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"OAI-PMH error {code}: {message}")
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class OaiPage:
    records: list[PaperRecord | Rejected]
    resumption_token: str | None
    cursor: int | None
    complete_list_size: int | None
    latest_datestamp: date | None


def parse_xml(data: bytes) -> Element:
    """Parse XML with defusedxml; DTDs, entity bombs and broken XML raise ParseError."""
    try:
        return SafeElementTree.fromstring(data, forbid_dtd=True)
    except DefusedXmlException as exc:
        raise ParseError(f"refusing unsafe XML: {exc}") from exc
    except XmlSyntaxError as exc:
        raise ParseError(f"not well-formed XML: {exc}") from exc


def parse_oai_response(data: bytes) -> OaiPage:
    """Parse one OAI-PMH page; OAI errors raise OaiError, except noRecordsMatch."""
    root = parse_xml(data)
    if root.tag != f"{OAI}OAI-PMH":
        raise ParseError(f"not an OAI-PMH response: root element <{root.tag}>")
    _raise_for_errors(root)
    records = root.findall(f"./{OAI}ListRecords/{OAI}record")
    records += root.findall(f"./{OAI}GetRecord/{OAI}record")
    stamps = [_date(r.findtext(f"{OAI}header/{OAI}datestamp")) for r in records]
    token = root.find(f".//{OAI}resumptionToken")
    if token is None:
        token = Element("resumptionToken")
    return OaiPage(
        records=[_record(element, n) for n, element in enumerate(records, 1)],
        # An empty token element marks the last page of a list.
        resumption_token=clean_text(token.text) or None,
        cursor=_int(token.get("cursor")),
        complete_list_size=_int(token.get("completeListSize")),
        latest_datestamp=max((stamp for stamp in stamps if stamp), default=None),
    )


def _raise_for_errors(root: Element) -> None:
    for error in root.findall(f"{OAI}error"):
        code = error.get("code", "unknown")
        # An empty result is an answer, not a failure: the page just has no records.
        if code != "noRecordsMatch":
            raise OaiError(code, clean_text(error.text))


def _record(record: Element, position: int) -> PaperRecord | Rejected:
    header = record.find(f"{OAI}header")
    if header is None:
        header = Element(f"{OAI}header")
    identifier = clean_text(header.findtext(f"{OAI}identifier"))
    entry = identifier.removeprefix("oai:arXiv.org:") or f"record {position}"
    if header.get("status") == "deleted":
        return Rejected(entry=entry, reason="deleted at source")
    metadata = record.find(f"{OAI}metadata")
    if metadata is None or len(metadata) == 0:
        return Rejected(entry=entry, reason="record has no metadata")
    parser = _PARSERS.get(metadata[0].tag)
    if parser is None:
        return Rejected(
            entry=entry, reason=f"unsupported metadata format {metadata[0].tag}"
        )
    try:
        return parser(metadata[0], header)
    except (ParseError, ValueError, TypeError) as exc:
        return Rejected(entry=entry, reason=str(exc))


def _arxiv_record(meta: Element, header: Element) -> PaperRecord:
    arxiv_id, _ = split_arxiv_id(_text(meta, f"{ARXIV}id"))
    created = _midnight(_text(meta, f"{ARXIV}created"))
    updated_text = _text(meta, f"{ARXIV}updated")
    categories = tuple(_text(meta, f"{ARXIV}categories").split())
    comment = _text(meta, f"{ARXIV}comments")
    abstract = _text(meta, f"{ARXIV}abstract")
    return PaperRecord(
        arxiv_id=arxiv_id,
        # The format has dates but no version numbers; without <updated> the
        # paper has only ever had its first version.
        version=None if updated_text else 1,
        title=_text(meta, f"{ARXIV}title"),
        abstract=abstract,
        authors=tuple(
            _arxiv_author(a) for a in meta.iterfind(f"{ARXIV}authors/{ARXIV}author")
        ),
        categories=categories,
        # arXiv lists the primary category first in every format it publishes.
        primary_category=categories[0] if categories else None,
        published=created,
        updated=_midnight(updated_text) if updated_text else created,
        comment=comment,
        journal_ref=_text(meta, f"{ARXIV}journal-ref"),
        doi=_text(meta, f"{ARXIV}doi"),
        license=_text(meta, f"{ARXIV}license"),
        withdrawn=is_withdrawn(comment=comment, abstract=abstract),
    )


def _arxiv_author(author: Element) -> AuthorRecord:
    return author_from_parts(
        keyname=_text(author, f"{ARXIV}keyname"),
        forenames=_text(author, f"{ARXIV}forenames"),
        suffix=_text(author, f"{ARXIV}suffix"),
        affiliations=[a.text or "" for a in author.iterfind(f"{ARXIV}affiliation")],
    )


def _raw_record(meta: Element, header: Element) -> PaperRecord:
    arxiv_id, _ = split_arxiv_id(_text(meta, f"{ARXIV_RAW}id"))
    versions = sorted(
        (_raw_version(element) for element in meta.iterfind(f"{ARXIV_RAW}version")),
        key=lambda version: version.version,
    )
    if not versions:
        raise ParseError("arXivRaw record without versions")
    categories = tuple(_text(meta, f"{ARXIV_RAW}categories").split())
    comment = _text(meta, f"{ARXIV_RAW}comments")
    abstract = _text(meta, f"{ARXIV_RAW}abstract")
    return PaperRecord(
        arxiv_id=arxiv_id,
        version=versions[-1].version,
        title=_text(meta, f"{ARXIV_RAW}title"),
        abstract=abstract,
        authors=split_authors(_text(meta, f"{ARXIV_RAW}authors")),
        categories=categories,
        primary_category=categories[0] if categories else None,
        published=versions[0].submitted,
        updated=versions[-1].submitted,
        comment=comment,
        journal_ref=_text(meta, f"{ARXIV_RAW}journal-ref"),
        doi=_text(meta, f"{ARXIV_RAW}doi"),
        license=_text(meta, f"{ARXIV_RAW}license"),
        withdrawn=is_withdrawn(
            comment=comment, abstract=abstract, last_size=versions[-1].size
        ),
        versions=tuple(versions),
    )


def _raw_version(element: Element) -> VersionRecord:
    number = element.get("version", "").lstrip("v")
    return VersionRecord(
        version=int(number),
        submitted=rfc2822_utc(_text(element, f"{ARXIV_RAW}date")),
        size=_text(element, f"{ARXIV_RAW}size"),
    )


def _dc_record(meta: Element, header: Element) -> PaperRecord:
    identifiers = [clean_text(e.text) for e in meta.iterfind(f"{DC}identifier")]
    abs_urls = [i for i in identifiers if "arxiv.org/abs/" in i]
    header_id = header.findtext(f"{OAI}identifier") or ""
    arxiv_id, _ = split_arxiv_id(abs_urls[0] if abs_urls else header_id)
    descriptions = [clean_text(e.text) for e in meta.iterfind(f"{DC}description")]
    comments = [
        d.removeprefix("Comment:").strip()
        for d in descriptions
        if d.startswith("Comment:")
    ]
    abstracts = [d for d in descriptions if not d.startswith("Comment:")]
    # One dc:date per version, oldest first; dates only, so midnight UTC.
    dates = sorted(_midnight(clean_text(e.text)) for e in meta.iterfind(f"{DC}date"))
    categories, primary = _dc_categories(meta, header)
    abstract = abstracts[0] if abstracts else ""
    comment = comments[0] if comments else ""
    return PaperRecord(
        arxiv_id=arxiv_id,
        version=len(dates) or None,
        title=_text(meta, f"{DC}title"),
        abstract=abstract,
        authors=tuple(
            _dc_author(clean_text(e.text)) for e in meta.iterfind(f"{DC}creator")
        ),
        categories=categories,
        primary_category=primary,
        published=dates[0] if dates else None,
        updated=dates[-1] if dates else None,
        comment=comment,
        doi=next(
            (i.removeprefix("doi:") for i in identifiers if i.startswith("doi:")), ""
        ),
        license=_text(meta, f"{DC}rights"),
        withdrawn=is_withdrawn(comment=comment, abstract=abstract),
        versions=tuple(VersionRecord(n, d) for n, d in enumerate(dates, 1)),
    )


def _dc_author(creator: str) -> AuthorRecord:
    # oai_dc writes "Keyname, Forenames" and, with a suffix, "Keyname, Forenames, Jr".
    keyname, _, rest = creator.partition(",")
    forenames, _, suffix = rest.partition(",")
    return author_from_parts(keyname, forenames, suffix)


def _dc_categories(
    meta: Element, header: Element
) -> tuple[tuple[str, ...], str | None]:
    """Map dc:subject names to category codes, or fall back to the header's sets.

    A subject maps only when its name belongs to exactly one category (see
    taxonomy.OAI_SUBJECT_CODES). If any subject does not map, the record's
    setSpecs (archives such as "cs" or "astro-ph") are kept instead and the
    primary category is unknown. Otherwise the first subject is the primary:
    arXiv writes subjects in category order (1207.1019 lists stat.ML before
    cs.CV, cs.LG and cs.MM, which is not alphabetical).
    """
    subjects = [clean_text(e.text) for e in meta.iterfind(f"{DC}subject")]
    codes = [OAI_SUBJECT_CODES.get(subject) for subject in subjects]
    if codes and all(codes):
        mapped = tuple(dict.fromkeys(code for code in codes if code))
        return mapped, mapped[0]
    specs = header.iterfind(f"{OAI}setSpec")
    return tuple(dict.fromkeys(_set_archive(clean_text(s.text)) for s in specs)), None


def _set_archive(set_spec: str) -> str:
    # "cs" -> "cs", "physics:astro-ph" -> "astro-ph", "physics:cond-mat:str-el"
    # -> "cond-mat.str-el" (the group:archive:category form of newer servers).
    parts = set_spec.split(":")
    return ".".join(parts[1:]) if len(parts) > 1 else parts[0]


_PARSERS: dict[str, Callable[[Element, Element], PaperRecord]] = {
    f"{ARXIV}arXiv": _arxiv_record,
    f"{ARXIV_RAW}arXivRaw": _raw_record,
    f"{OAI_DC}dc": _dc_record,
}


def _text(element: Element, path: str) -> str:
    return clean_text(element.findtext(path))


def _midnight(text: str) -> datetime:
    day = _date(text)
    if day is None:
        raise ParseError(f"not a date: {text!r}")
    return datetime.combine(day, time.min, UTC)


def _date(text: str | None) -> date | None:
    # Datestamps are days ("2016-03-08") or, at seconds granularity, instants.
    try:
        return date.fromisoformat(clean_text(text)[:10])
    except ValueError:
        return None


def _int(text: str | None) -> int | None:
    return int(text) if text and text.strip().isdigit() else None
