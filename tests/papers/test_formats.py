from __future__ import annotations

import gzip
import types
from pathlib import Path

import pytest

from papers.ingest.formats import Format
from papers.ingest.formats import UnrecognisedFormat
from papers.ingest.formats import read_bytes
from papers.ingest.formats import read_path
from papers.ingest.formats import sniff
from papers.ingest.records import PaperRecord
from papers.ingest.records import ParseError

FIXTURES = Path(__file__).parents[1] / "fixtures" / "arxiv"
KAGGLE = (
    FIXTURES
    / "kaggle_jsonl/arxivSpider_mnbvc_arxiv-metadata-oai-snapshot_head200.jsonl"
)
TRUNCATED_FEED = (
    FIXTURES / "listing_atom_2024/zotero-arxiv-daily_cs.AI_2025-08-20.atom.xml"
)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("api_atom/arxiv.py_id_list=1111.2011v2.xml", Format.API_ATOM),
        ("api_atom/ReadArxiV4mENow_cat_astro-ph_2026-04-25.atom.xml", Format.API_ATOM),
        (
            "api_atom/StringologyTimes_arxiv_entries_cs.DS_1996-2024.xml",
            Format.API_ATOM,
        ),
        (
            "listing_atom_2024/researcharr_cs_EMPTY_weekend_2025-11-23.atom.xml",
            Format.LISTING_ATOM,
        ),
        (
            "listing_rss2_2024/emanuelealiverti-arxiv_rss_stat_2024-03-26.rss.xml",
            Format.LISTING_RSS,
        ),
        ("oai_arXivRaw/litpuvn-arxiv-oai-harvester_GetRecord.xml", Format.OAI_PMH),
        ("oai_dc/invenio-oaiharvester_GetRecord_oai_dc_1507.03011.xml", Format.OAI_PMH),
        (
            "kaggle_jsonl/arxivSpider_mnbvc_arxiv-metadata-oai-snapshot_head200.jsonl",
            Format.SNAPSHOT_JSONL,
        ),
    ],
)
def test_sniffs_each_wire_format(name, expected):
    assert sniff((FIXTURES / name).read_bytes()[:4096]) is expected


@pytest.mark.parametrize(
    ("head", "reason"),
    [
        (b"", "empty file"),
        (b"  \n\n", "empty file"),
        (b"<!DOCTYPE html>\n<html><head><title>503</title>", "looks like an HTML page"),
        (
            b"<HTML><body>Retry after 10 seconds</body></HTML>",
            "looks like an HTML page",
        ),
        (
            b'<?xml version="1.0"?>\n<catalog/>',
            r"not an arXiv feed: root element <catalog>",
        ),
        (b"<rdf:RDF xmlns:rdf='x'>", r"not an arXiv feed: root element <rdf:RDF>"),
        (b"hello", "no XML root element"),
    ],
)
def test_sniff_explains_what_it_refuses(head, reason):
    with pytest.raises(ParseError, match=reason):
        sniff(head)


@pytest.mark.parametrize(
    "head",
    [
        b'{\n "topic": "tool-use",\n "papers": []\n}',
        b'{"name": "a", "rows": [1, 2]}\n{"name": "b"}',
        b"<!DOCTYPE html><html>",
        b'<?xml version="1.0"?>\n<catalog/>',
        # Another site's Atom feed, as Momentum's own topic feed: no arXiv namespace.
        b'<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom"'
        b' xml:lang="en"><title>Agents</title><entry><id>https://arxiv.org/abs/2606.00001'
        b"</id></entry>",
    ],
)
def test_what_is_not_arxiv_metadata_at_all_is_unrecognised(head):
    with pytest.raises(UnrecognisedFormat):
        sniff(head)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_a_file_in_utf_16_or_32_is_refused_naming_its_encoding(encoding):
    """Windows' tools save text so (PowerShell's `>`): sniffing read the bytes
    as UTF-8 and said "not an arXiv feed: no XML root element", of a snapshot
    too, which sent its owner looking at the content rather than the encoding.
    It is a broken file, whose run fails, not one skipped as no metadata."""
    bom = {"utf-16": "", "utf-16-be": "\ufeff", "utf-32": ""}[encoding]
    head = (bom + '{"id": "2606.01234", "title": "T"}\n').encode(encoding)
    with pytest.raises(ParseError, match="encoded as UTF-") as refused:
        sniff(head)
    assert not isinstance(refused.value, UnrecognisedFormat)


def test_a_snapshot_line_is_recognised_by_its_arxiv_id():
    assert sniff(b'{"id": "2606.01234", "title": "T"}\n') is Format.SNAPSHOT_JSONL


def test_a_snapshot_whose_first_line_has_no_id_is_still_a_snapshot():
    # So that line is rejected with its reason, not the whole file skipped.
    head = b'{"title": "T"}\n{"id": "2606.01234", "title": "U"}\n'
    assert sniff(head) is Format.SNAPSHOT_JSONL


def test_reads_a_snapshot_from_bytes():
    fmt, records = read_bytes(KAGGLE.read_bytes())
    assert fmt is Format.SNAPSHOT_JSONL
    assert len(records) == 200


def test_reads_gzipped_bytes_by_magic_number():
    data = (
        FIXTURES / "oai_arXivRaw/litpuvn-arxiv-oai-harvester_GetRecord.xml"
    ).read_bytes()
    fmt, records = read_bytes(gzip.compress(data))
    assert fmt is Format.OAI_PMH
    assert [r.arxiv_id for r in records] == ["0804.2273"]


def test_streams_a_gzipped_snapshot_file(tmp_path):
    path = tmp_path / "snapshot.jsonl.gz"  # the name does not matter, the magic does
    path.write_bytes(gzip.compress(KAGGLE.read_bytes()))
    fmt, records = read_path(path)
    assert fmt is Format.SNAPSHOT_JSONL
    # A generator: lines are read as records are consumed, not all up front.
    assert isinstance(records, types.GeneratorType)
    first = next(records)
    assert isinstance(first, PaperRecord)
    assert first.arxiv_id == "0704.0001"
    assert sum(1 for _ in records) == 199


def test_reads_an_xml_file_whole(tmp_path):
    path = tmp_path / "page.xml.gz"
    page = (
        FIXTURES / "oai_arXiv/arxivXMLParser_ListRecords_arXiv_cs_2016-03_page103.xml"
    )
    path.write_bytes(gzip.compress(page.read_bytes()))
    fmt, records = read_path(path)
    assert fmt is Format.OAI_PMH
    assert len(list(records)) == 538


def test_a_truncated_xml_file_fails_when_read():
    with pytest.raises(ParseError, match="not well-formed"):
        read_path(TRUNCATED_FEED)


def test_a_truncated_gzip_snapshot_fails_while_streaming(tmp_path):
    data = gzip.compress(KAGGLE.read_bytes())
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(data[: len(data) // 2])
    fmt, records = read_path(path)
    assert fmt is Format.SNAPSHOT_JSONL
    with pytest.raises(ParseError, match="broken gzip"):
        list(records)


def test_truncated_gzip_bytes_raise_parse_error():
    data = gzip.compress(KAGGLE.read_bytes())
    with pytest.raises(ParseError, match="broken gzip"):
        read_bytes(data[:1000])


def test_an_empty_file_is_refused(tmp_path):
    path = tmp_path / "empty.xml"
    path.write_bytes(b"")
    with pytest.raises(ParseError, match="empty file"):
        read_path(path)
