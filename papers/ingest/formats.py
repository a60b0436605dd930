"""Recognise which arXiv wire format a file holds and parse it with the right parser."""

from __future__ import annotations

import codecs
import gzip
import io
import re
import zlib
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path

from django.conf import settings

from papers.ingest.arxiv_api import parse_api_response
from papers.ingest.listings import parse_listing
from papers.ingest.oai import parse_oai_response
from papers.ingest.records import PaperRecord
from papers.ingest.records import ParseError
from papers.ingest.records import Rejected
from papers.ingest.records import size_text
from papers.ingest.snapshot import Oversized
from papers.ingest.snapshot import iter_snapshot

GZIP_MAGIC = b"\x1f\x8b"
SNIFF_BYTES = 64 * 1024
ATOM = b"http://www.w3.org/2005/Atom"
ARXIV_ATOM = b"http://arxiv.org/schemas/atom"
# Skip the XML declaration, comments, processing instructions and a doctype
# (with its internal subset) to reach the root element's name.
_PROLOG_RE = re.compile(
    rb"(?:\s+|<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>\[]*(?:\[.*?\])?\s*>)*", re.S | re.I
)
_ROOT_RE = re.compile(rb"<([A-Za-z_][\w.:-]*)")
# A snapshot's line: an object with the paper's arXiv id among its first keys,
# as in arXiv's own snapshot and ours ({"id": "2606.01234", ...). Any line of
# the head will do, so a first line without its id is one bad entry, rejected.
_SNAPSHOT_LINE_RE = re.compile(rb'^\{[^\n]{0,200}?"id"\s*:\s*"[^"\n]+"', re.M)
# What a truncated or corrupt gzip stream raises while being read.
_GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)


# Byte order marks of the encodings read as UTF-8 would be NULs between the
# letters; UTF-32's first, as little-endian UTF-16's mark begins it.
_WIDE_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)


class UnrecognisedFormat(ParseError):
    """The bytes are not arXiv metadata in any wire format we read (an HTML page,
    some other JSON or XML), as opposed to a feed that is broken."""


class Format(StrEnum):
    API_ATOM = "api_atom"
    LISTING_ATOM = "listing_atom"
    LISTING_RSS = "listing_rss"
    OAI_PMH = "oai_pmh"
    SNAPSHOT_JSONL = "snapshot_jsonl"


def sniff(head: bytes) -> Format:
    """Tell the format from a file's first (decompressed) bytes, or raise ParseError."""
    head = head.removeprefix(codecs.BOM_UTF8)
    for bom, encoding in _WIDE_BOMS:
        if head.startswith(bom):
            raise ParseError(
                f"encoded as {encoding}; arXiv metadata is read as UTF-8: convert "
                f"it first (iconv -f {encoding} -t UTF-8)"
            )
    if not head.strip():
        raise ParseError("empty file")
    if head.lstrip().startswith(b"{"):
        if not _SNAPSHOT_LINE_RE.search(head.lstrip()):
            raise UnrecognisedFormat(
                "JSON, but not arXiv's metadata snapshot (one paper with its "
                '"id" per line)'
            )
        return Format.SNAPSHOT_JSONL
    prolog = _PROLOG_RE.match(head)
    assert prolog is not None  # it matches the empty string
    root = _ROOT_RE.match(head, prolog.end())
    if root is None:
        raise UnrecognisedFormat("not an arXiv feed: no XML root element")
    name = root.group(1).decode("ascii", "replace")
    if name.lower() == "html":
        raise UnrecognisedFormat("looks like an HTML page")
    fmt = _format_for_root(name.rpartition(":")[2], head)
    if fmt is None:
        raise UnrecognisedFormat(f"not an arXiv feed: root element <{name}>")
    return fmt


def check_path(path: Path) -> None:
    """Raise UnrecognisedFormat if the file is not arXiv metadata at all. Files
    that cannot be read, or are broken, pass: reading them will say why."""
    try:
        with _open(path) as stream:
            head = stream.read(SNIFF_BYTES)
        if head.strip():
            sniff(head)
    except UnrecognisedFormat:
        raise
    except (OSError, ParseError, *_GZIP_ERRORS):
        return


def expect_format(data: bytes, *expected: Format) -> Format:
    """Sniff a fetched body and refuse anything but the expected formats."""
    fmt = sniff(data[:SNIFF_BYTES])
    if fmt not in expected:
        raise ParseError(f"expected {' or '.join(expected)}, got {fmt}")
    return fmt


def read_bytes(data: bytes) -> tuple[Format, list[PaperRecord | Rejected]]:
    """Parse a whole document held in memory (gzip is undone transparently, up to
    the size a fetched document may have)."""
    if data.startswith(GZIP_MAGIC):
        limit = settings.MOMENTUM_HTTP_MAX_BYTES
        inflater = zlib.decompressobj(wbits=31)
        try:
            data = inflater.decompress(data, limit + 1)
        except zlib.error as exc:
            raise ParseError(f"broken gzip data: {exc}") from exc
        if len(data) > limit:
            raise ParseError(f"more than {size_text(limit)} once decompressed")
        if not inflater.eof:
            raise ParseError("broken gzip data: it ends before the stream does")
    fmt = sniff(data[:SNIFF_BYTES])
    if fmt is Format.SNAPSHOT_JSONL:
        return fmt, list(iter_snapshot(data.splitlines()))
    return fmt, _parse_xml_document(fmt, data)


def read_path(path: Path) -> tuple[Format, Iterator[PaperRecord | Rejected]]:
    """Open a file of any supported format; JSON lines stream, XML is parsed at once."""
    with _open(path) as stream:
        try:
            head = stream.read(SNIFF_BYTES)
        except _GZIP_ERRORS as exc:
            raise ParseError(f"broken gzip file {path.name}: {exc}") from exc
    fmt = sniff(head)
    if fmt is Format.SNAPSHOT_JSONL:
        return fmt, _stream_snapshot(path)
    # An XML document is parsed whole: no larger than a fetched one may be.
    limit = settings.MOMENTUM_HTTP_MAX_BYTES
    with _open(path) as stream:
        try:
            data = stream.read(limit + 1)
        except _GZIP_ERRORS as exc:
            raise ParseError(f"broken gzip file {path.name}: {exc}") from exc
    if len(data) > limit:
        raise ParseError(
            f"{path.name} is more than {size_text(limit)} (decompressed): an XML "
            "document is read whole, and arXiv's are far smaller"
        )
    return fmt, iter(_parse_xml_document(fmt, data))


def _format_for_root(name: str, head: bytes) -> Format | None:
    if name == "OAI-PMH":
        return Format.OAI_PMH
    if name == "rss":
        return Format.LISTING_RSS
    if name == "feed" and (b"rss.arxiv.org" in head or b"announce_type" in head):
        return Format.LISTING_ATOM
    # The API's Atom declares arXiv's namespace (other Atom feeds, Momentum's
    # own among them, hold entries that are not arXiv's metadata). A collection
    # of API entries under a home-made root (one real dataset wraps them in
    # <articles>) parses like an API response.
    if ARXIV_ATOM in head and (name == "feed" or (b"<entry" in head and ATOM in head)):
        return Format.API_ATOM
    return None


def _parse_xml_document(fmt: Format, data: bytes) -> list[PaperRecord | Rejected]:
    if fmt is Format.API_ATOM:
        return parse_api_response(data).records
    if fmt is Format.OAI_PMH:
        return parse_oai_response(data).records
    return parse_listing(data).records


def _open(path: Path) -> io.BufferedIOBase:
    with path.open("rb") as probe:
        magic = probe.read(len(GZIP_MAGIC))
    return gzip.open(path, "rb") if magic == GZIP_MAGIC else path.open("rb")


def _stream_snapshot(path: Path) -> Iterator[PaperRecord | Rejected]:
    # One line at a time, each at most MOMENTUM_INGEST_MAX_RECORD_BYTES, so
    # memory stays flat however large the snapshot (or a line of it) is.
    with _open(path) as stream:
        try:
            yield from iter_snapshot(_bounded_lines(_Capped(stream, path)))
        except _GZIP_ERRORS as exc:
            raise ParseError(f"broken gzip file {path.name}: {exc}") from exc


class _Capped:
    """A file's decompressed bytes, refused past MOMENTUM_INGEST_MAX_BYTES or,
    for a gzip file, past MOMENTUM_INGEST_MAX_RATIO times its size on disk (a
    compression bomb: text compresses about 5 to 1, a bomb 1,000 to 1)."""

    def __init__(self, stream: io.BufferedIOBase, path: Path) -> None:
        self.stream, self.name, self.read_bytes = stream, path.name, 0
        self.limit = settings.MOMENTUM_INGEST_MAX_BYTES
        if isinstance(stream, gzip.GzipFile):
            ratio_limit = settings.MOMENTUM_INGEST_MAX_RATIO * path.stat().st_size
            self.limit = min(self.limit, max(ratio_limit, SNIFF_BYTES))

    def readline(self, size: int) -> bytes:
        line = self.stream.readline(size)
        self.read_bytes += len(line)
        if self.read_bytes > self.limit:
            raise ParseError(
                f"{self.name} is more than {size_text(self.limit)} once decompressed "
                "(MOMENTUM_INGEST_MAX_BYTES, MOMENTUM_INGEST_MAX_RATIO)"
            )
        return line


def _bounded_lines(stream: _Capped) -> Iterator[bytes | Oversized]:
    """The stream's lines; one longer than MOMENTUM_INGEST_MAX_RECORD_BYTES is
    read through in pieces and given as Oversized, never held whole."""
    limit = settings.MOMENTUM_INGEST_MAX_RECORD_BYTES
    while line := stream.readline(limit + 1):
        if len(line) <= limit or line.endswith(b"\n"):
            yield line
            continue
        size = len(line)
        while (rest := stream.readline(limit)) and not rest.endswith(b"\n"):
            size += len(rest)
        yield Oversized(size + len(rest), limit)
