"""Parse arXiv's metadata snapshot: one JSON object per line.

The layout is that of arxiv-metadata-oai-snapshot.json (Kaggle); Momentum's
recent/ demo file uses the same layout with a few fields dropped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from papers.ingest.authors import authors_from_parsed
from papers.ingest.authors import split_authors
from papers.ingest.records import PaperRecord
from papers.ingest.records import ParseError
from papers.ingest.records import Rejected
from papers.ingest.records import VersionRecord
from papers.ingest.records import clean_text
from papers.ingest.records import is_withdrawn
from papers.ingest.records import rfc2822_utc
from papers.ingest.records import split_arxiv_id


@dataclass(frozen=True)
class Oversized:
    """A line too long to be a paper, read through without being kept."""

    size: int
    limit: int


def iter_snapshot(
    lines: Iterable[bytes | str | Oversized], *, primary_first: bool | None = None
) -> Iterator[PaperRecord | Rejected]:
    """Yield one record per snapshot line; a bad line yields Rejected, never raises.

    `primary_first` says whether the source lists the primary category first:
    True for arXiv's own snapshot, False for sources that sort categories, None
    (the default) to decide per line, see `_primary_category`.
    """
    for number, line in enumerate(lines, 1):
        if isinstance(line, Oversized):
            reason = f"{line.size:,} bytes, more than a record may be ({line.limit:,})"
            yield Rejected(entry=f"line {number}", reason=reason)
            continue
        if not line.strip():
            continue
        row = None
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise ParseError(f"{_kind(row)}, not a JSON object")
            record = _record(row, primary_first)
        except (ParseError, ValueError, TypeError, KeyError, AttributeError) as exc:
            yield _rejected(row, number, str(exc))
        except RecursionError:
            # json's parser recurses once per level of [ or {.
            yield Rejected(
                entry=f"line {number}", reason="nested too deeply to be a paper"
            )
        else:
            yield record


def _rejected(row: object, number: int, reason: str) -> Rejected:
    # Name the paper when the line got as far as an id, and the line in the
    # reason; else the line is the entry, named once.
    paper_id = row.get("id") if isinstance(row, dict) else None
    if isinstance(paper_id, str) and paper_id.strip():
        return Rejected(entry=paper_id.strip(), reason=f"line {number}: {reason}")
    return Rejected(entry=f"line {number}", reason=reason)


def _record(row: dict[str, Any], primary_first: bool | None) -> PaperRecord:
    raw_id = _text(row, "id").strip()
    if not raw_id:
        raise ParseError("no id")
    arxiv_id, _ = split_arxiv_id(raw_id)
    listed = row.get("versions") or []
    if not isinstance(listed, list):
        raise ParseError(f"versions is {_kind(listed)}, not a list")
    versions = sorted((_version(v) for v in listed), key=_number)
    if not versions:
        raise ParseError(f"{arxiv_id} has no versions")
    categories = tuple(_text(row, "categories").split())
    comment = clean_text(_text(row, "comments"))
    abstract = clean_text(_text(row, "abstract"))
    raw_authors = _text(row, "authors")
    return PaperRecord(
        arxiv_id=arxiv_id,
        version=versions[-1].version,
        title=clean_text(_text(row, "title")),
        abstract=abstract,
        # The raw string is split the same way as in arXivRaw and the listings;
        # authors_parsed (absent from the recent file) is the fallback.
        authors=split_authors(raw_authors)
        if raw_authors.strip()
        else authors_from_parsed(row.get("authors_parsed") or ()),
        categories=categories,
        primary_category=_primary_category(categories, primary_first),
        published=versions[0].submitted,
        updated=versions[-1].submitted,
        comment=comment,
        journal_ref=clean_text(_text(row, "journal-ref")),
        doi=clean_text(_text(row, "doi")),
        license=clean_text(_text(row, "license")),
        withdrawn=is_withdrawn(comment=comment, abstract=abstract),
        versions=tuple(versions),
    )


def _text(row: dict[str, Any], name: str) -> str:
    """A field that must be text ("cs.AI cs.LG", not ["cs.AI"], which read as
    the category "['cs.AI']"), or "" when absent."""
    value = row.get(name) or ""
    if not isinstance(value, str):
        raise ParseError(f"{name} is {type(value).__name__}, not text")
    return value


def _primary_category(
    categories: tuple[str, ...], primary_first: bool | None
) -> str | None:
    """Pick the primary category, or None when the line cannot tell.

    arXiv's snapshot lists the primary category first; the recent/ demo file
    sorts categories alphabetically, which loses it. The two share one layout,
    so by default a line decides for itself: one category is the primary; a
    list out of alphabetical order cannot have been sorted, so its first entry
    is the primary; a sorted list of several could come from either source and
    gets None rather than a guess. Callers that know the source say so.
    """
    if not categories:
        return None
    if primary_first or len(categories) == 1:
        return categories[0]
    if primary_first is None and list(categories) != sorted(categories):
        return categories[0]
    return None


def _version(item: object) -> VersionRecord:
    if not isinstance(item, dict):
        raise ParseError(f"a version is {_kind(item)}, not an object")
    return VersionRecord(
        version=int(str(item["version"]).lstrip("v")),
        submitted=rfc2822_utc(item["created"]),
        size=str(item.get("size") or ""),
    )


def _kind(value: object) -> str:
    """A JSON value's type as Python names it, null as JSON does."""
    return "null" if value is None else type(value).__name__


def _number(version: VersionRecord) -> int:
    return version.version
