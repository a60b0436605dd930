from __future__ import annotations

from datetime import UTC
from datetime import date
from datetime import datetime
from pathlib import Path

import pytest

from papers.ingest.oai import OaiError
from papers.ingest.oai import OaiPage
from papers.ingest.oai import parse_oai_response
from papers.ingest.records import AuthorRecord
from papers.ingest.records import PaperRecord
from papers.ingest.records import ParseError
from papers.ingest.records import Rejected
from papers.ingest.records import VersionRecord
from papers.ingest.records import is_withdrawn
from papers.taxonomy import CATEGORY_NAMES
from papers.taxonomy import OAI_SUBJECT_CODES

FIXTURES = Path(__file__).parents[1] / "fixtures" / "arxiv"
PAGE_1 = "oai_arXiv/arxivXMLParser_ListRecords_arXiv_cs_2016-03_page001.xml"
PAGE_103 = "oai_arXiv/arxivXMLParser_ListRecords_arXiv_cs_2016-03_page103.xml"
RAW_LIST = (
    "oai_arXivRaw/litpuvn-arxiv-oai-harvester_ListRecords_arXivRaw_2016-10-20.xml"
)
DC_1207 = "oai_dc/invenio-oaiharvester_GetRecord_oai_dc_1207.1019_utf8.xml"


def parse(name: str) -> OaiPage:
    return parse_oai_response((FIXTURES / name).read_bytes())


def by_id(page: OaiPage) -> dict[str, PaperRecord]:
    return {r.arxiv_id: r for r in page.records if isinstance(r, PaperRecord)}


def oai_envelope(body: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/">'
        "<responseDate>2016-03-09T00:35:38Z</responseDate>"
        f"{body}</OAI-PMH>"
    ).encode()


@pytest.fixture(scope="module")
def page_1() -> OaiPage:
    return parse(PAGE_1)


@pytest.fixture(scope="module")
def raw_page() -> OaiPage:
    return parse(RAW_LIST)


def test_reads_a_full_list_records_page_with_its_resumption_token(page_1):
    assert len(page_1.records) == 1000
    assert page_1.resumption_token == "1122234|1001"
    assert (page_1.cursor, page_1.complete_list_size) == (0, 102538)
    assert page_1.latest_datestamp == date(2016, 3, 2)
    assert page_1.records[0].arxiv_id == "0704.0002"
    assert page_1.records[-1].arxiv_id == "0708.2571"


def test_arxiv_format_gives_dates_but_no_version(page_1):
    paper = by_id(page_1)["0704.0002"]
    assert paper.version is None
    assert paper.published == datetime(2007, 3, 30, tzinfo=UTC)
    assert paper.updated == datetime(2008, 12, 13, tzinfo=UTC)
    assert paper.authors == (
        AuthorRecord("Ileana Streinu"),
        AuthorRecord("Louis Theran"),
    )
    assert paper.categories == ("math.CO", "cs.CG")
    assert paper.primary_category == "math.CO"
    assert paper.comment == "To appear in Graphs and Combinatorics"


def test_arxiv_format_without_updated_is_version_one(page_1):
    paper = by_id(page_1)["0704.0046"]
    assert paper.version == 1
    assert paper.updated == paper.published == datetime(2007, 4, 1, tzinfo=UTC)
    assert paper.doi == "10.1063/1.2779138"
    assert paper.journal_ref == "J. Math. Phys. 48(2007), 092102."


def test_reads_suffixes_and_affiliations_of_arxiv_authors(page_1):
    found = by_id(page_1)
    assert found["0704.0802"].authors[1] == AuthorRecord("Robert W. Heath Jr.")
    assert AuthorRecord("Mohamed Kaâniche", ("LAAS",)) in found["0704.0858"].authors


def test_flags_withdrawn_papers(page_1):
    found = by_id(page_1)
    assert found["0704.0213"].withdrawn
    assert found["0704.1409"].withdrawn
    assert not found["0704.0002"].withdrawn
    assert sum(r.withdrawn for r in found.values()) == 6


def test_keeps_arxivs_own_author_glitch(page_1):
    # arXiv merged two people into one <author> for 0704.0213.
    assert by_id(page_1)["0704.0213"].authors == (
        AuthorRecord("Ketan D. Mulmuley Hariharan Narayanan"),
    )


def test_keeps_latex_in_titles(page_1):
    assert by_id(page_1)["0704.2811"].title == (
        "On Algebraic Decoding of $q$-ary Reed-Muller and Product-Reed-Solomon Codes"
    )


def test_an_empty_resumption_token_marks_the_last_page():
    page = parse(PAGE_103)
    assert len(page.records) == 538
    assert page.resumption_token is None
    assert (page.cursor, page.complete_list_size) == (102000, 102538)


def test_reads_old_style_ids():
    found = by_id(parse(PAGE_103))
    paper = found["math/0611918"]
    assert paper.categories == ("math.GR", "cs.CR", "math.AG")
    assert paper.authors == (AuthorRecord("Martin Hock"), AuthorRecord("Boaz Tsaban"))
    assert found["quant-ph/0001077"].primary_category == "quant-ph"
    assert found["nlin/0001057"].version == 1
    assert found["physics/0607116"].title.startswith(
        r"Utilisation de la substitution sensorielle par \'{e}lectro-stimulation"
    )


def test_reads_a_pretty_printed_get_record():
    (paper,) = parse(
        "oai_arXiv/invenio-oaiharvester_GetRecord_arXiv_0804.2273.xml"
    ).records
    assert paper.arxiv_id == "0804.2273"
    assert paper.authors[1] == AuthorRecord("Herbert Van de Sompel")
    assert paper.license == "http://creativecommons.org/licenses/by/3.0/"


@pytest.mark.parametrize(
    "name",
    [
        "inspire-next_GetRecord_error_idDoesNotExist_1305.9999.xml",
        "inspire-next_GetRecord_error_idDoesNotExist_versioned.xml",
        "inspire-next_GetRecord_error_malformed_identifier.xml",
    ],
)
def test_raises_oai_errors_with_their_code(name):
    with pytest.raises(OaiError) as raised:
        parse(f"oai_arXiv/{name}")
    assert raised.value.code == "idDoesNotExist"


def test_the_oai_error_keeps_arxivs_message():
    with pytest.raises(OaiError, match="must not include the 'v1'"):
        parse("oai_arXiv/inspire-next_GetRecord_error_idDoesNotExist_versioned.xml")


def test_bad_resumption_token_is_an_error():
    data = oai_envelope('<error code="badResumptionToken">expired</error>')
    with pytest.raises(OaiError) as raised:
        parse_oai_response(data)
    assert raised.value.code == "badResumptionToken"


def test_no_records_match_is_an_empty_page():
    data = oai_envelope('<error code="noRecordsMatch">no records</error>')
    assert parse_oai_response(data) == OaiPage(
        records=[],
        resumption_token=None,
        cursor=None,
        complete_list_size=None,
        latest_datestamp=None,
    )


def test_deleted_records_are_rejected():
    data = oai_envelope(
        '<ListRecords><record><header status="deleted">'
        "<identifier>oai:arXiv.org:0704.0001</identifier>"
        "<datestamp>2016-03-01</datestamp></header></record></ListRecords>"
    )
    page = parse_oai_response(data)
    assert page.records == [Rejected(entry="0704.0001", reason="deleted at source")]
    assert page.latest_datestamp == date(2016, 3, 1)


def test_a_record_without_an_id_is_rejected_and_the_rest_parsed():
    data = (FIXTURES / PAGE_1).read_bytes().replace(b"<id>0704.0002</id>", b"", 1)
    page = parse_oai_response(data)
    assert isinstance(page.records[0], Rejected)
    assert page.records[0].entry == "0704.0002"
    assert sum(isinstance(r, PaperRecord) for r in page.records) == 999


def test_refuses_an_entity_expansion_bomb():
    bomb = b"""<?xml version="1.0"?>
<!DOCTYPE OAI-PMH [<!ENTITY a "aaaaaaaaaa">
<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
<!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;"><!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;">
<!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">]>
<OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><error code="x">&f;&f;&f;</error>
</OAI-PMH>"""
    with pytest.raises(ParseError, match="unsafe"):
        parse_oai_response(bomb)


def test_refuses_any_dtd():
    data = b'<?xml version="1.0"?><!DOCTYPE OAI-PMH SYSTEM "x.dtd"><OAI-PMH/>'
    with pytest.raises(ParseError):
        parse_oai_response(data)


def test_raises_on_truncated_xml():
    data = (FIXTURES / PAGE_103).read_bytes()
    with pytest.raises(ParseError, match="not well-formed"):
        parse_oai_response(data[:5000])


def test_arxiv_raw_gives_versions_with_dates_and_sizes(raw_page):
    assert len(raw_page.records) == 387
    assert raw_page.resumption_token == "1403493|1001"
    assert raw_page.complete_list_size == 1440
    paper = by_id(raw_page)["0803.4354"]
    assert paper.version == 6
    assert paper.versions[0] == VersionRecord(
        1, datetime(2008, 3, 30, 23, 26, 50, tzinfo=UTC), "69kb"
    )
    assert paper.published == datetime(2008, 3, 30, 23, 26, 50, tzinfo=UTC)
    assert paper.updated == datetime(2016, 10, 20, 16, 58, 38, tzinfo=UTC)


def test_arxiv_raw_latest_version_of_zero_kb_is_withdrawn(raw_page):
    paper = by_id(raw_page)["0803.4354"]
    assert paper.versions[-1].size == "0kb"
    assert paper.withdrawn


def test_arxiv_raw_splits_the_434_author_string(raw_page):
    paper = by_id(raw_page)["1605.03256"]
    assert len(paper.authors) == 434
    assert paper.authors[0] == AuthorRecord("M. Ablikim")
    assert paper.authors[-1] == AuthorRecord("J. H. Zou")
    assert paper.categories == ("hep-ex",)


def test_arxiv_and_arxiv_raw_give_the_same_authors():
    in_arxiv = parse("oai_arXiv/invenio-oaiharvester_GetRecord_arXiv_0804.2273.xml")
    in_raw = parse("oai_arXivRaw/litpuvn-arxiv-oai-harvester_GetRecord.xml")
    (paper,) = in_raw.records
    assert paper.authors == in_arxiv.records[0].authors
    assert paper.versions == (
        VersionRecord(1, datetime(2008, 4, 14, 21, 2, tzinfo=UTC), "395kb"),
    )
    assert paper.title == "Object Re-Use & Exchange: A Resource-Centric Approach"


def test_oai_dc_maps_subject_names_to_codes_primary_first():
    (paper,) = parse(DC_1207).records
    assert paper.categories == ("stat.ML", "cs.CV", "cs.LG", "cs.MM")
    assert paper.primary_category == "stat.ML"


def test_oai_dc_reads_creators_comment_and_dates():
    (paper,) = parse(DC_1207).records
    assert paper.arxiv_id == "1207.1019"
    assert paper.authors == (
        AuthorRecord("Emilie Morvant"),
        AuthorRecord("Amaury Habrard"),
        AuthorRecord("Stéphane Ayache"),
    )
    assert paper.comment == "7 pages, Research report"
    assert paper.abstract.startswith("A lot of attention has been devoted")
    assert paper.version == 1
    assert paper.published == paper.updated == datetime(2012, 7, 4, tzinfo=UTC)


def test_oai_dc_falls_back_to_set_specs_for_an_unknown_subject():
    data = (
        (FIXTURES / DC_1207)
        .read_bytes()
        .replace(b"Computer Science - Multimedia", b"Computer Science - Something New")
    )
    (paper,) = parse_oai_response(data).records
    assert paper.categories == ("cs", "stat")
    assert paper.primary_category is None


def test_oai_dc_reads_astrophysics_subjects():
    (paper,) = parse(
        "oai_dc/invenio-oaiharvester_GetRecord_oai_dc_1507.03011.xml"
    ).records
    assert paper.categories == ("astro-ph.GA",)
    assert paper.authors[1] == AuthorRecord("Rachel Kuzio de Naray")


def test_every_category_has_one_oai_subject_label():
    assert OAI_SUBJECT_CODES["Computer Science - Machine Learning"] == "cs.LG"
    assert OAI_SUBJECT_CODES["Computer Science - Learning"] == "cs.LG"
    assert OAI_SUBJECT_CODES["Mathematics - Optimization and Control"] == "math.OC"
    assert OAI_SUBJECT_CODES["Computation and Language"] == "cmp-lg"
    assert set(OAI_SUBJECT_CODES.values()) == set(CATEGORY_NAMES)


def test_taxonomy_names_current_and_retired_categories():
    assert CATEGORY_NAMES["cs.AI"] == "Artificial Intelligence"
    assert CATEGORY_NAMES["eess.SY"] == "Systems and Control"
    assert CATEGORY_NAMES["astro-ph"] == "Astrophysics"
    assert CATEGORY_NAMES["alg-geom"] == "Algebraic Geometry"
    assert CATEGORY_NAMES["adap-org"].startswith("Adaptation")


@pytest.mark.parametrize(
    ("comment", "abstract", "size", "expected"),
    [
        ("This paper has been withdrawn by the authors.", "", "", True),
        ("arXiv admin note: This submission has been withdrawn by arXiv", "", "", True),
        ("Withdrawn by the authors due to an error", "", "", True),
        ("We are withdrawing this version to avoid confusion", "", "", True),
        ("", "This paper has been withdrawn.", "", True),
        ("", "", "0kb", True),
        ("Major revision; withdraws the earlier claims", "", "", False),
        ("v2: we withdraw the claim of Theorem 3", "", "", False),
        ("", "The drug was withdrawn from the market in 2004.", "", False),
        ("12 pages", "We study ...", "395kb", False),
    ],
)
def test_detects_withdrawal_notices(comment, abstract, size, expected):
    assert is_withdrawn(comment=comment, abstract=abstract, last_size=size) is expected
