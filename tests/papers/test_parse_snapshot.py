from __future__ import annotations

import json
from datetime import UTC
from datetime import datetime
from pathlib import Path

import pytest

from papers.ingest.records import AuthorRecord
from papers.ingest.records import PaperRecord
from papers.ingest.records import Rejected
from papers.ingest.records import VersionRecord
from papers.ingest.snapshot import iter_snapshot

KAGGLE = (
    Path(__file__).parents[1]
    / "fixtures"
    / "arxiv"
    / "kaggle_jsonl"
    / "arxivSpider_mnbvc_arxiv-metadata-oai-snapshot_head200.jsonl"
)


@pytest.fixture(scope="module")
def kaggle() -> dict[str, PaperRecord]:
    with KAGGLE.open("rb") as lines:
        records = list(iter_snapshot(lines))
    assert all(isinstance(r, PaperRecord) for r in records)
    return {r.arxiv_id: r for r in records}


def line(**fields: object) -> str:
    row = {
        "id": "2607.00001",
        "authors": "Ada Lovelace and Alan Turing",
        "title": "A title",
        "categories": "cs.LG cs.AI",
        "abstract": "An abstract.",
        "versions": [{"version": "v1", "created": "Mon, 08 Jun 2026 17:59:59 GMT"}],
    }
    return json.dumps(row | fields)


def test_reads_every_line_of_the_kaggle_head(kaggle):
    assert len(kaggle) == 200
    assert min(kaggle) == "0704.0001"
    assert max(kaggle) == "0704.0200"


def test_versions_give_published_updated_and_latest_version(kaggle):
    paper = kaggle["0704.0001"]
    assert paper.version == 2
    assert paper.versions == (
        VersionRecord(1, datetime(2007, 4, 2, 19, 18, 42, tzinfo=UTC)),
        VersionRecord(2, datetime(2007, 7, 24, 20, 10, 27, tzinfo=UTC)),
    )
    assert paper.published == datetime(2007, 4, 2, 19, 18, 42, tzinfo=UTC)
    assert paper.updated == datetime(2007, 7, 24, 20, 10, 27, tzinfo=UTC)


def test_reads_bibliographic_fields_and_latex_names(kaggle):
    paper = kaggle["0704.0001"]
    assert paper.title == (
        "Calculation of prompt diphoton production cross sections at Tevatron and "
        "LHC energies"
    )
    assert [a.name for a in paper.authors] == [
        "C. Balázs",
        "E. L. Berger",
        "P. M. Nadolsky",
        "C.-P. Yuan",
    ]
    assert paper.doi == "10.1103/PhysRevD.76.013009"
    assert paper.journal_ref == "Phys.Rev.D76:013009,2007"
    assert paper.comment == "37 pages, 15 figures; published version"
    assert kaggle["0704.0002"].license == (
        "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"
    )


def test_maps_numbered_affiliations_in_the_raw_author_string(kaggle):
    assert kaggle["0704.0025"].authors == (
        AuthorRecord(
            "A. S. Mishchenko",
            (
                "CREST, Japan Science and Technology Agency",
                "Russian Research Centre “Kurchatov Institute”",
            ),
        ),
        AuthorRecord(
            "N. Nagaosa",
            ("CREST, Japan Science and Technology Agency", "The University of Tokyo"),
        ),
    )


def test_flags_the_withdrawn_paper(kaggle):
    assert kaggle["0704.0156"].withdrawn
    assert [p.arxiv_id for p in kaggle.values() if p.withdrawn] == ["0704.0156"]


def test_primary_is_the_first_category_when_the_order_proves_it(kaggle):
    # "math.CO cs.CG" is not alphabetical, so it is arXiv's primary-first order.
    assert kaggle["0704.0002"].primary_category == "math.CO"
    assert kaggle["0704.0001"].primary_category == "hep-ph"


def test_primary_is_unknown_for_a_sorted_list_unless_the_caller_knows(kaggle):
    assert kaggle["0704.0005"].categories == ("math.CA", "math.FA")
    assert kaggle["0704.0005"].primary_category is None
    with KAGGLE.open("rb") as lines:
        trusted = {r.arxiv_id: r for r in iter_snapshot(lines, primary_first=True)}
    assert trusted["0704.0005"].primary_category == "math.CA"


def test_a_source_known_to_sort_categories_gives_no_primary():
    (paper,) = iter_snapshot([line(categories="cs.LG math.OC")], primary_first=False)
    assert paper.primary_category is None


def test_falls_back_to_authors_parsed_without_a_raw_string():
    (paper,) = iter_snapshot(
        [line(authors="", authors_parsed=[["Bal\u00e1zs", "C.", ""]])]
    )
    assert paper.authors == (AuthorRecord("C. Balázs"),)


def test_a_malformed_line_is_rejected_with_its_line_number():
    lines = [line(), '{"id": "2607.00002", "title": ', "", line(id="2607.00003")]
    records = list(iter_snapshot(lines))
    assert [type(r) for r in records] == [PaperRecord, Rejected, PaperRecord]
    assert records[1].entry == "line 2"
    assert records[1].reason.startswith("Expecting value")  # json's words, once


def test_a_line_without_versions_or_id_is_rejected():
    records = list(iter_snapshot([line(versions=[]), json.dumps({"title": "x"})]))
    assert records == [
        Rejected(entry="2607.00001", reason="line 1: 2607.00001 has no versions"),
        Rejected(entry="line 2", reason="no id"),
    ]


def test_a_line_of_the_wrong_shape_is_rejected_saying_what_is_wrong():
    """Python's own words ("'list' object has no attribute 'get'", "string
    indices must be integers") told a curator reading the run nothing."""
    lines = ["[1, 2]", "null", line(versions="v1"), line(versions=["v1"])]
    assert list(iter_snapshot(lines)) == [
        Rejected(entry="line 1", reason="list, not a JSON object"),
        Rejected(entry="line 2", reason="null, not a JSON object"),
        Rejected(entry="2607.00001", reason="line 3: versions is str, not a list"),
        Rejected(entry="2607.00001", reason="line 4: a version is str, not an object"),
    ]


def test_accepts_bytes_and_text_lines():
    (from_bytes,) = iter_snapshot([line().encode()])
    (from_text,) = iter_snapshot([line()])
    assert from_bytes == from_text
    assert from_text.published == datetime(2026, 6, 8, 17, 59, 59, tzinfo=UTC)


def test_text_read_in_a_wrong_encoding_is_repaired():
    """A snapshot line whose UTF-8 was decoded as Windows-1252 twice on its way."""
    line = json.dumps(
        {
            "id": "2607.00001",
            "title": "Ã\x8e±-Divergence",
            "abstract": "We study Ã\x83Â©tudes of \u03b1.",
            "authors": "ClÃ©ment Lévy",
            "categories": "cs.LG",
            "versions": [{"version": "v1", "created": "Mon, 6 Jul 2026 10:00:00 GMT"}],
        }
    )

    (record,) = iter_snapshot([line])

    assert record.title == "\u03b1-Divergence"
    assert record.abstract == "We study études of \u03b1."
    assert record.authors[0].name == "Clément Lévy"
