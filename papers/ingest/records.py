"""Plain records that every arXiv parser yields and the upsert consumes.

Parsing is pure: a parser turns bytes into these records and never touches the
database. Everything here is immutable so a record can be passed between threads
or compared in tests.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import timedelta
from datetime import tzinfo
from email.utils import parsedate_to_datetime

import ftfy
from ftfy.fixes import fix_surrogates

from core.text import shown

# New-style ids (0704.0001, 2508.13167) and old-style ids (math/0601001,
# math.AG/0601001), each with an optional version suffix.
ARXIV_ID_RE = re.compile(
    r"(?P<id>\d{4}\.\d{4,5}|[a-z]+(?:-[a-z]+)*(?:\.[A-Z]{2})?/\d{7})(?:v(?P<version>\d+))?"
)
# An id standing whole in a text (an address, "arXiv:…"): not a piece of a
# longer run, as 2607.21595 is of the typo 2607.215951.
WHOLE_ID_RE = re.compile(rf"(?<![\w.-]){ARXIV_ID_RE.pattern}(?![\w-]|\.\d)")


class ParseError(ValueError):
    """The input is not a readable arXiv document; the message says why."""


@dataclass(frozen=True, slots=True)
class AuthorRecord:
    name: str
    affiliations: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class VersionRecord:
    version: int
    submitted: datetime
    size: str = ""


@dataclass(frozen=True, slots=True)
class PaperRecord:
    """One paper as a source describes it.

    `version` is None when the source does not say (OAI-PMH `arXiv` format), and
    `published`/`updated` are timezone-aware UTC datetimes or None when unknown.
    `announced` is the listing day for daily listing feeds, and `announce_type`
    is one of new, cross, replace, replace-cross there; both are empty elsewhere.
    """

    arxiv_id: str
    version: int | None
    title: str
    abstract: str
    authors: tuple[AuthorRecord, ...]
    categories: tuple[str, ...]
    primary_category: str | None
    published: datetime | None
    updated: datetime | None
    comment: str = ""
    journal_ref: str = ""
    doi: str = ""
    license: str = ""
    withdrawn: bool = False
    versions: tuple[VersionRecord, ...] = ()
    announced: date | None = None
    announce_type: str = ""


@dataclass(frozen=True, slots=True)
class Rejected:
    """An entry a parser could not turn into a record; the rest of the input goes on."""

    entry: str  # the entry's arXiv id if it had one, else its position ("entry 7")
    reason: str


def size_text(size: int) -> str:
    """A byte count as people read it: "64 MiB", or "1,500 bytes"."""
    mib = 1 << 20
    return f"{size // mib:,} MiB" if size % mib == 0 else f"{size:,} bytes"


def split_arxiv_id(text: str) -> tuple[str, int | None]:
    """Return (id without version, version or None) from an id, URL or OAI id."""
    match = WHOLE_ID_RE.search(text.strip())
    if match is None:
        raise ParseError(f"not an arXiv identifier: {text[:80]!r}")
    version = match.group("version")
    return match.group("id"), int(version) if version else None


def versioned_id(arxiv_id: str, version: int | None) -> str:
    """The id with its version, when it has one: split_arxiv_id undone."""
    return f"{arxiv_id}v{version}" if version else arxiv_id


def clean_text(text: str | None) -> str:
    """Collapse the line wraps and indentation arXiv puts in titles and abstracts,
    undo mojibake (repair_text) and drop control characters, which no page, feed
    or mail could show (core.text)."""
    return shown(repair_text(" ".join((text or "").split())))


def repair_text(text: str) -> str:
    """Undo mojibake, UTF-8 read in a wrong encoding once or more ("ClÃ©ment"
    for "Clément"), with ftfy: a source that declared the wrong encoding must not
    leave it in the database. Half a character, a lone surrogate that JSON can
    spell ("\\ud83d" without its partner) and no UTF-8 column can hold, becomes
    U+FFFD, as undecodable bytes do. An accent sent as a letter of its own (NFD:
    o and a combining diaeresis) is composed with its letter (NFC), as pages,
    highlights and queries write it. Correct text is left alone."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFC", ftfy.fix_encoding(fix_surrogates(text)))


def rfc2822_utc(text: str) -> datetime:
    """Parse a version date ("Mon, 2 Apr 2007 19:18:42 GMT") as aware UTC."""
    moment = parsedate_to_datetime(text.strip())
    # "-0000" (and no zone at all) parse as naive: RFC 2822 calls that UTC.
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return in_zone(moment, UTC)


def in_zone(moment: datetime, zone: tzinfo) -> datetime:
    """The moment in that zone; a ValueError, as for any unreadable date, where
    it falls outside the years 1 to 9999 (0001-01-01T00:30+01:00), which is
    an OverflowError that would fail a whole file rather than its entry."""
    try:
        return moment.astimezone(zone)
    except OverflowError as exc:
        raise ValueError(f"date out of range: {moment.isoformat()}") from exc


# Withdrawal notices as arXiv and authors write them in the comments field:
# "This paper has been withdrawn by the authors", "arXiv admin note: This
# submission has been withdrawn by arXiv administrators", "Withdrawn by the
# authors due to ...", "We are withdrawing this version ...".
_PAPER = r"(?:paper|article|manuscript|submission|preprint|version|work)"
_WITHDRAWN_COMMENT_RES = tuple(
    re.compile(pattern, re.IGNORECASE)
    for pattern in (
        rf"\b(?:{_PAPER}|it)\s+(?:has\s+been|have\s+been|is\s+being|is|was)\s+withdrawn\b",
        r"\bwithdrawn\s+by\s+(?:the\s+)?(?:authors?|submitter|arxiv)\b",
        r"^\W*withdraw(?:n|al|ing)\b",
        rf"\bwithdraw(?:ing)?\s+(?:(?:this|the|our)\s+(?:current\s+)?{_PAPER}|it)\b",
        rf"\bwithdrawal\s+of\s+(?:this|the|our)\s+(?:current\s+)?{_PAPER}",
        r"\bneeds?\s+to\s+be\s+withdrawn\b",
    )
)
# Abstracts mention withdrawals in other senses ("the drug was withdrawn"), so
# only a notice at the very start of the abstract counts.
_WITHDRAWN_ABSTRACT_RE = re.compile(
    r"^\W*(?:withdrawn\b|this\s+(?:paper|article|manuscript|submission|preprint)\s+"
    r"(?:has\s+been|is|was)\s+withdrawn\b)",
    re.IGNORECASE,
)


def is_withdrawn(*, comment: str = "", abstract: str = "", last_size: str = "") -> bool:
    """Tell whether a paper's latest version is a withdrawal notice."""
    # arXivRaw lists a withdrawal as a new version with no source: size "0kb".
    if last_size.strip().lower() == "0kb":
        return True
    comment = clean_text(comment)
    if any(pattern.search(comment) for pattern in _WITHDRAWN_COMMENT_RES):
        return True
    return bool(_WITHDRAWN_ABSTRACT_RE.match(clean_text(abstract)))


# Far beyond any real paper (the longest arXiv abstracts are ~6,000 characters,
# the most authors a few thousand): past these an entry is junk, not a paper.
FIELD_LIMITS = {
    "title": 1_000,
    "abstract": 20_000,
    "comment": 5_000,
    "journal_ref": 1_000,
    # The widths of papers.models' columns: a longer value failed its batch.
    "arxiv_id": 40,
    "doi": 255,
    "license": 255,
}
MAX_AUTHORS = 5_000
# Clock skew between arXiv and us is minutes; a day of slack is generous.
FUTURE_SLACK = timedelta(days=1)
# arXiv opened in August 1991; a few papers carry earlier dates of their own.
ARXIV_BEGAN = datetime(1986, 1, 1, tzinfo=UTC)
# arXiv's category codes (cs.AI, cond-mat.str-el, hep-th), no longer than
# papers.models' Category.code: a longer one failed its batch.
CATEGORY_CODE = re.compile(r"[a-z]+(?:-[a-z]+)*(?:\.[A-Za-z]+(?:-[a-z]+)*)?")
CODE_WIDTH = 32
MAX_VERSION = 32_767


def is_category_code(text: str) -> bool:
    return len(text) <= CODE_WIDTH and CATEGORY_CODE.fullmatch(text) is not None


def validation_error(record: PaperRecord, *, now: datetime) -> str | None:
    """Why a parsed record must not be stored, or None if it is fine."""
    if not record.title:
        return "no title"
    for name, limit in FIELD_LIMITS.items():
        length = len(getattr(record, name))
        if length > limit:
            return f"{name} is {length:,} characters long (limit {limit:,})"
    if len(record.authors) > MAX_AUTHORS:
        return f"{len(record.authors):,} authors (limit {MAX_AUTHORS:,})"
    # The first version's date (or a listing's announcement day) gives the paper
    # its place in feeds, digests and momentum; without it, it would vanish.
    if record.published is None and record.announced is None:
        return "no date of the first version (missing or unreadable)"
    for moment in (record.published, record.updated):
        if moment is not None and moment > now + FUTURE_SLACK:
            return f"date in the future: {moment.isoformat()}"
        if moment is not None and moment < ARXIV_BEGAN:
            return f"date before arXiv began: {moment.isoformat()}"
    if odd := [code for code in record.categories if not is_category_code(code)]:
        return f"not an arXiv category: {odd[0][:40]!r}"
    if record.version is not None and not 0 < record.version <= MAX_VERSION:
        return f"version {record.version} (arXiv's run from 1)"
    return None
