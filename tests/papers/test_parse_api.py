from __future__ import annotations

from datetime import UTC
from datetime import datetime
from pathlib import Path

import pytest

from papers.ingest.arxiv_api import ApiPage
from papers.ingest.arxiv_api import parse_api_response
from papers.ingest.records import AuthorRecord
from papers.ingest.records import PaperRecord
from papers.ingest.records import ParseError
from papers.ingest.records import Rejected
from papers.ingest.records import clean_text

API = Path(__file__).parents[1] / "fixtures" / "arxiv" / "api_atom"


def parse(name: str) -> ApiPage:
    return parse_api_response((API / name).read_bytes())


def papers(page: ApiPage) -> dict[str, PaperRecord]:
    return {r.arxiv_id: r for r in page.records if isinstance(r, PaperRecord)}


@pytest.fixture(scope="module")
def stringology() -> ApiPage:
    return parse("StringologyTimes_arxiv_entries_cs.DS_1996-2024.xml")


def test_reads_a_classic_api_entry_with_doi_and_journal_ref():
    page = parse("arxiv.py_id_list=1111.2011v2.xml")
    (paper,) = page.records
    assert paper == PaperRecord(
        arxiv_id="1111.2011",
        version=2,
        title=(
            "Quantum Criticality for Extended Nodes on a Bethe Lattice in the Large "
            "Connectivity Limit"
        ),
        abstract=paper.abstract,
        authors=(
            AuthorRecord("James M. Murray"),
            AuthorRecord("Adrian Del Maestro"),
            AuthorRecord("Zlatko Tesanovic"),
        ),
        categories=("cond-mat.str-el", "cond-mat.stat-mech"),
        primary_category="cond-mat.str-el",
        published=datetime(2011, 11, 8, 18, 48, 36, tzinfo=UTC),
        updated=datetime(2012, 4, 2, 12, 38, 54, tzinfo=UTC),
        comment="8 pages, 3 figures. Published version",
        journal_ref="Phys. Rev. B 85, 115117 (2012)",
        doi="10.1103/PhysRevB.85.115117",
    )
    assert paper.abstract.startswith("Theoretical description of anisotropic systems")
    assert (page.total_results, page.start_index, page.items_per_page) == (1, 0, 10)


def test_reads_per_author_affiliations_and_an_old_style_id():
    (paper,) = parse(
        "arxiv.py_id_astro-ph_0601001_s0_m100_3150dca9dc76.atom.xml"
    ).records
    assert (paper.arxiv_id, paper.version) == ("astro-ph/0601001", 1)
    assert paper.authors == (
        AuthorRecord("Andrew Gould", ("Ohio State",)),
        AuthorRecord("Susan Dorsher", ("Ohio State",)),
        AuthorRecord("B. Scott Gaudi", ("CfA",)),
        AuthorRecord("Andrzej Udalski", ("Warsaw University Observatory",)),
    )
    assert paper.journal_ref == "ActaAstron.56:1-50,2006"
    assert paper.primary_category == "astro-ph"
    assert paper.published == datetime(2006, 1, 2, 14, 57, 58, tzinfo=UTC)


def test_reads_the_2026_backend_with_several_affiliations_per_author():
    page = parse("ReadArxiV4mENow_cat_astro-ph_2026-04-25.atom.xml")
    assert len(page.records) == 63
    assert (page.total_results, page.items_per_page) == (382624, 63)
    paper = papers(page)["2604.21196"]
    assert paper.authors[1] == AuthorRecord(
        "Chuanfei Dong",
        (
            "Center for Space Physics and Department of Astronomy, Boston University, "
            "Boston, MA 02215, USA",
            "School of Natural Sciences, Institute for Advanced Study, Princeton, "
            "NJ 08540, USA",
        ),
    )
    assert paper.primary_category == "physics.space-ph"
    assert paper.categories == ("physics.space-ph", "astro-ph.EP", "astro-ph.SR")
    assert paper.published == datetime(2026, 4, 23, 1, 43, 36, tzinfo=UTC)
    assert papers(page)["2604.21892"].doi == "10.3847/1538-4357/ae632c"


def test_keeps_latex_in_titles_and_repairs_double_encoded_utf8():
    # These bodies were recorded as Latin-1 text: "ω" arrived as "Ï\x89".
    found = papers(parse("arxiv.py_q_testing_s20_m10_348a237fecab.atom.xml"))
    assert found["2306.03845"].title == (
        "$ω$Test: WebView-Oriented Testing for Android Applications"
    )
    assert found["2106.13414"].authors[0].name == "Clément L. Canonne"
    assert found["2104.11069"].authors[2].name == "Sébastien Lafond"
    assert (found["2409.05654"].version, found["2409.05654"].updated) == (
        9,
        datetime(2025, 5, 8, 20, 52, 40, tzinfo=UTC),
    )


def test_text_is_cleaned_of_what_no_page_feed_or_mail_can_show():
    # A NUL, an escape and an override that would reverse the rest of a line.
    assert clean_text(" Safe\n  \u202egnp.exe\x00 title\x1b ") == "Safe gnp.exe title"


def test_reads_entries_that_do_not_declare_the_atom_namespace(stringology):
    # Only the first <entry> of this collection declares xmlns; 2,060 in all.
    assert len(stringology.records) == 2060
    assert all(isinstance(r, PaperRecord) for r in stringology.records)
    found = papers(stringology)
    assert len(found) == 2060
    assert found["2002.12662"].authors == (
        AuthorRecord("Manuel Cáceres", ("University of Chile",)),
        AuthorRecord("Simon J. Puglisi", ("University of Helsinki",)),
        AuthorRecord("Bella Zhukova", ("University of Helsinki",)),
    )
    assert found["1907.09415"].primary_category == "quant-ph"
    assert found["2406.16475"].authors[2].name == "Dominik Köppl"
    assert stringology.total_results is None


def test_drops_acm_classes_and_null_terms_from_categories(stringology):
    found = papers(stringology)
    # 1910.06169 also lists term="E.1; E.4; I.2.6"; 1911.01763 lists term="null".
    assert found["1910.06169"].categories == ("cs.DS", "cs.DB", "cs.IR", "cs.LG")
    assert found["1911.01763"].categories == ("cs.DS",)


def test_flags_withdrawn_papers_from_their_comment(stringology):
    found = papers(stringology)
    assert found["1011.0597"].withdrawn
    assert not found["1910.06169"].withdrawn


def test_raises_the_api_error_message():
    with pytest.raises(ParseError, match="incorrect id format for abc"):
        parse("arxiv.py_id_abc_s0_m100_b79c8dcf6bc3.atom.xml")


def test_treats_zero_results_as_an_empty_page():
    page = parse("arxiv.py_id_0000.0000_s0_m100_8b51d9633a68.atom.xml")
    assert page == ApiPage(
        records=[], total_results=0, start_index=0, items_per_page=100
    )


def test_rejects_an_entry_without_an_id_and_keeps_the_rest():
    data = (API / "arxiv.py_id_list=1111.2011v2.xml").read_bytes()
    broken = data.replace(b"<entry>", b"<entry><title>no id</title></entry><entry>")
    first, second = parse_api_response(broken).records
    assert first == Rejected(entry="entry 1", reason="entry has no arXiv id")
    assert isinstance(second, PaperRecord)
    assert second.arxiv_id == "1111.2011"


def test_refuses_an_entity_expansion_bomb():
    bomb = b"""<?xml version="1.0"?>
<!DOCTYPE feed [<!ENTITY a "aaaaaaaaaa">
<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
<!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>
<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>http://arxiv.org/abs/1111.2011v2</id>
<title>&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;</title></entry></feed>"""
    with pytest.raises(ParseError, match="unsafe"):
        parse_api_response(bomb)


def test_raises_on_a_truncated_response():
    data = (API / "arxiv.py_id_list=1111.2011v2.xml").read_bytes()
    with pytest.raises(ParseError):
        parse_api_response(data[: len(data) // 2])
