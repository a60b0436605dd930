"""RIS and CSL-JSON of saved papers, read back with the parsers reference managers
use: rispy for RIS, citeproc-py (CSL-JSON into a rendered bibliography)."""

from __future__ import annotations

import json

import pytest
import rispy
from citeproc import Citation
from citeproc import CitationItem
from citeproc import CitationStylesBibliography
from citeproc import CitationStylesStyle
from citeproc import formatter
from citeproc.source.json import CiteProcJSON
from django.db import connection
from django.db.models import QuerySet
from django.test.utils import CaptureQueriesContext
from pybtex.database import parse_string as parse_bibtex

from papers.bibtex import bibtex_entry
from papers.export import csl_item
from papers.export import ris_entry
from papers.ingest.upsert import upsert_records
from papers.library import saved_papers
from papers.models import Author
from papers.models import Paper
from papers.models import SavedPaper
from papers.names import split_name
from tests.papers.factories import paper_record

TITLE = "\N{GREEK SMALL LETTER ALPHA}-Divergence Agents: a Study"
HARVARD = "harvard-cite-them-right"  # the style citeproc-py ships


@pytest.fixture
def saved(alice) -> list[Paper]:
    """alice's library: a paper with accents, TeX, a DOI and a journal reference,
    and a plain one with no DOI."""
    upsert_records(
        [
            paper_record(
                "2606.00001",
                version=2,
                title="$\\alpha$-Divergence Agents:\n  a \\emph{Study}",
                authors=(
                    "Béla Bollobás",
                    "Ludwig van der Waals",
                    "ATLAS Collaboration",
                ),
                abstract="We train agents.\nWith 50% less data.",
                doi="10.1000/xyz.123",
                journal_ref="Phys. Rev. D 99, 1 (2026)",
            ),
            paper_record(
                "2606.00002",
                title="Plain Agents",
                authors=("Martin Luther King Jr.", "Plato"),
                categories=("cs.AI",),
            ),
        ]
    )
    papers = list(Paper.objects.order_by("arxiv_id"))
    for paper in papers:
        SavedPaper.objects.create(user=alice, paper=paper)
    return papers


def body(response) -> str:
    """A download's text, streamed or not."""
    return response.getvalue().decode()


def by_number(records: list[dict], key: str) -> dict[str, dict]:
    return {record[key]: record for record in records}


# --- Names ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("Ada Lovelace", ("Lovelace", "Ada", "")),
        ("J. P. Hague", ("Hague", "J. P.", "")),
        ("Ludwig van der Waals", ("van der Waals", "Ludwig", "")),
        ("Martin Luther King Jr.", ("King", "Martin Luther", "Jr.")),
        ("Tenglong (Victor) Gu", ("Gu", "Tenglong (Victor)", "")),
        # Where BibTeX reads the family name to start: the first word in lower case.
        ("Herbert dos Santos Macedo", ("dos Santos Macedo", "Herbert", "")),
        ("Blaise Agüera y Arcas", ("y Arcas", "Blaise Agüera", "")),
        ("Cláudio Lúcio do Val Lopes", ("do Val Lopes", "Cláudio Lúcio", "")),
        ("Plato", None),
        ("The ATLAS Collaboration", None),
    ],
)
def test_names_split_into_family_and_given_when_they_can(name, parts):
    assert split_name(name) == parts


# --- RIS --------------------------------------------------------------------------


def test_ris_download_is_read_back_by_rispy(reader, saved):
    response = reader.get("/saved/ris/")

    assert response["Content-Type"] == (
        "application/x-research-info-systems; charset=utf-8"
    )
    assert response["Content-Disposition"] == (
        'attachment; filename="momentum-saved.ris"'
    )
    records = by_number(rispy.loads(body(response)), "issn")
    assert set(records) == {"arXiv:2606.00001", "arXiv:2606.00002"}
    first = records["arXiv:2606.00001"]
    assert first["type_of_reference"] == "RPRT"
    assert first["type_of_work"] == "Preprint"
    assert first["authors"] == [
        "Bollobás, Béla",
        "van der Waals, Ludwig",
        "ATLAS Collaboration",
    ]
    # One line each, TeX as text.
    assert first["title"] == TITLE
    assert first["abstract"] == "We train agents. With 50% less data."
    assert (first["year"], first["date"]) == ("2026", "2026/06/08")
    assert first["urls"] == ["https://arxiv.org/abs/2606.00001"]
    assert first["doi"] == "10.1000/xyz.123"
    assert first["notes"] == ["Journal reference: Phys. Rev. D 99, 1 (2026)"]
    assert first["publisher"] == "arXiv"
    assert first["keywords"] == ["cs.LG", "cs.AI"]


def test_ris_of_a_paper_without_doi_leaves_it_out(reader, saved):
    records = by_number(rispy.loads(body(reader.get("/saved/ris/"))), "issn")

    plain = records["arXiv:2606.00002"]
    assert "doi" not in plain
    assert "notes" not in plain
    assert plain["authors"] == ["King, Martin Luther, Jr.", "Plato"]
    assert plain["keywords"] == ["cs.AI"]


def test_several_dois_and_a_tex_journal_reference_are_read_as_the_page_shows_them(
    reader, anonymous, saved
):
    Paper.objects.filter(arxiv_id="2606.00002").update(
        doi="10.2514/6.2026-2042 10.2514/6.2026-2042.c1 10.2514/6.2026-2042",
        journal_ref=r"Antoni Casas-i-Mu\~noz, Glottometrics 60, pp. 69--103",
    )

    [ris] = [
        r
        for r in rispy.loads(body(reader.get("/saved/ris/")))
        if r["issn"] == "arXiv:2606.00002"
    ]
    csl = by_number(json.loads(body(reader.get("/saved/csl.json/"))), "id")
    page = anonymous.get("/papers/2606.00002/").text

    note = "Journal reference: Antoni Casas-i-Muñoz, Glottometrics 60, pp. 69\u2013103"
    assert ris["notes"] == [note]
    assert csl["arxiv:2606.00002"]["note"] == note
    assert note.removeprefix("Journal reference: ") + "</dd>" in page
    # Each DOI once: RIS has a DO per DOI, CSL-JSON (one DOI) the first.
    assert (
        "DO  - 10.2514/6.2026-2042\r\nDO  - 10.2514/6.2026-2042.c1\r\nN1  - "
    ) in body(reader.get("/saved/ris/"))
    assert csl["arxiv:2606.00002"]["DOI"] == "10.2514/6.2026-2042"
    assert (
        '<dt>DOIs</dt><dd><a href="https://doi.org/10.2514/6.2026-2042">'
        '10.2514/6.2026-2042</a>, <a href="https://doi.org/10.2514/6.2026-2042.c1">'
        "10.2514/6.2026-2042.c1</a></dd>"
    ) in page


def test_bibtex_names_split_as_bibtex_splits_them(reader, saved):
    """pybtex splits names by BibTeX's own rules: a group is one name, not a
    Mr Collaboration, and a suffix is not a family name."""
    entries = parse_bibtex(body(reader.get("/saved/bibtex/")), "bibtex").entries

    people = {
        key: [
            (
                " ".join(p.first_names + p.middle_names),
                " ".join(p.prelast_names),
                " ".join(p.last_names),
                *p.lineage_names,
            )
            for p in entry.persons["author"]
        ]
        for key, entry in entries.items()
    }
    assert people == {
        "arxiv:2606.00001": [
            ("Béla", "", "Bollobás"),
            ("Ludwig", "van der", "Waals"),
            ("", "", "{ATLAS Collaboration}"),
        ],
        "arxiv:2606.00002": [("Martin Luther", "", "King", "Jr."), ("", "", "Plato")],
    }


def test_ris_of_ticked_papers_only(reader, saved):
    text = body(reader.get("/saved/ris/?id=2606.00002"))

    assert [r["title"] for r in rispy.loads(text)] == ["Plain Agents"]


def test_the_ticked_papers_form_sends_only_those(reader, saved):
    text = body(reader.get("/saved/ris/?ticked=1&id=2606.00002"))

    assert [r["title"] for r in rispy.loads(text)] == ["Plain Agents"]


def test_the_ticked_papers_form_with_none_ticked_says_so_and_exports_nothing(
    reader, saved
):
    """Not all of them: that is what the links for all are for."""
    response = reader.get("/saved/bibtex/?ticked=1", follow=True)

    assert response.redirect_chain == [("/saved/", 302)]
    assert "No paper is ticked: tick those you want" in response.text
    assert "Content-Disposition" not in response


def test_ticked_papers_unsaved_since_the_page_showed_them_are_said_not_an_empty_file(
    reader, saved, alice
):
    """Unsaved in place (S on the Saved page), a row keeps its tick box: its
    export was a file of nothing, without a word."""
    alice.saved_papers.filter(paper__arxiv_id="2606.00002").delete()

    response = reader.get("/saved/bibtex/?ticked=1&id=2606.00002", follow=True)

    assert response.redirect_chain == [("/saved/", 302)]
    assert "None of the ticked papers is saved now" in response.text
    assert "Content-Disposition" not in response


def test_exports_hold_only_the_readers_own_papers(saved, bob):
    from tests.clients import signed_in

    as_bob = signed_in(bob)
    assert rispy.loads(body(as_bob.get("/saved/ris/"))) == []
    assert json.loads(body(as_bob.get("/saved/csl.json/?id=2606.00001"))) == []


@pytest.mark.parametrize("path", ["/saved/ris/", "/saved/csl.json/"])
def test_exports_need_signing_in(client, db, path):
    response = client.get(path)

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def export_queries(reader, path: str) -> int:
    """Those of reading the whole download: a streamed one reads as it is sent."""
    with CaptureQueriesContext(connection) as queries:
        response = reader.get(path)
        assert response.status_code == 200
        body(response)
    return len(queries)


@pytest.mark.parametrize("path", ["/saved/bibtex/", "/saved/ris/", "/saved/csl.json/"])
def test_an_export_costs_as_many_queries_for_30_papers_as_for_2(
    alice, reader, saved, path
):
    """Measured with two papers, a query per paper (its categories) went
    unnoticed, and BibTeX and RIS had no guard at all."""
    reader.get(path)  # the session and user, read once and kept
    two = export_queries(reader, path)
    more = upsert_records(
        [paper_record(f"2606.{n:05d}", title=f"Agent {n}") for n in range(100, 128)]
    )
    for paper in Paper.objects.filter(pk__in=more.changed_ids):
        SavedPaper.objects.create(user=alice, paper=paper)

    assert export_queries(reader, path) == two <= 6


# --- CSL-JSON ---------------------------------------------------------------------


def test_csl_json_download_has_the_items(reader, saved, django_assert_max_num_queries):
    with django_assert_max_num_queries(6):
        response = reader.get("/saved/csl.json/")
        text = body(response)

    assert response["Content-Type"] == (
        "application/vnd.citationstyles.csl+json; charset=utf-8"
    )
    assert response["Content-Disposition"] == (
        'attachment; filename="momentum-saved.json"'
    )
    items = by_number(json.loads(text), "number")
    first = items["arXiv:2606.00001"]
    assert first == {
        "id": "arxiv:2606.00001",
        "type": "article",
        "title": TITLE,
        "author": [
            {"family": "Bollobás", "given": "Béla"},
            {"family": "van der Waals", "given": "Ludwig"},
            {"literal": "ATLAS Collaboration"},
        ],
        "issued": {"date-parts": [[2026, 6, 8]]},
        "abstract": "We train agents. With 50% less data.",
        "publisher": "arXiv",
        "genre": "Preprint",
        "number": "arXiv:2606.00001",
        "version": "2",
        "URL": "https://arxiv.org/abs/2606.00001",
        "DOI": "10.1000/xyz.123",
        "note": "Journal reference: Phys. Rev. D 99, 1 (2026)",
        "keyword": "cs.LG, cs.AI",
    }
    plain = items["arXiv:2606.00002"]
    assert "DOI" not in plain
    assert plain["author"][0] == {
        "family": "King",
        "given": "Martin Luther",
        "suffix": "Jr.",
    }


def test_csl_json_renders_a_bibliography_with_citeproc(reader, saved):
    items = json.loads(body(reader.get("/saved/csl.json/")))
    source = CiteProcJSON(items)
    style = CitationStylesStyle(HARVARD, validate=False)
    bibliography = CitationStylesBibliography(style, source, formatter.plain)
    bibliography.register(Citation([CitationItem("arxiv:2606.00001")]))

    entry = str(bibliography.bibliography()[0])

    assert "Bollobás, B." in entry
    assert "2026" in entry
    assert TITLE in entry


def test_api_detail_carries_ris_and_csl(anonymous, saved):
    paper = anonymous.get("/api/v1/papers/2606.00001/").json()

    [record] = rispy.loads(paper["ris"])
    assert record["authors"][0] == "Bollobás, Béla"
    assert paper["csl"] == csl_item(saved[0])
    assert paper["csl"]["author"][1] == {"family": "van der Waals", "given": "Ludwig"}


def test_every_citation_names_the_authors_as_the_paper_prints_them(
    reader, anonymous, saved
):
    """An author's page shows the name as first seen on any paper; a citation
    of this paper is as it prints them, the same on its page, in the API and
    in the library's exports."""
    Author.objects.filter(name="Ludwig van der Waals").update(
        name="Ludwig Van Der Waals"
    )
    api = anonymous.get("/api/v1/papers/2606.00001/").json()
    page = anonymous.get("/papers/2606.00001/").text
    library = body(reader.get("/saved/bibtex/"))

    assert "Ludwig Van Der Waals" in page  # the author's link
    assert "Ludwig van der Waals" in page  # its BibTeX
    for bibtex in (api["bibtex"], library):
        assert "Ludwig van der Waals" in bibtex
        assert "Van Der" not in bibtex
    assert api["csl"]["author"][1] == {"family": "van der Waals", "given": "Ludwig"}
    assert rispy.loads(api["ris"])[0]["authors"][1] == "van der Waals, Ludwig"


def test_a_library_is_exported_whole_across_its_read_chunks(reader, saved, monkeypatch):
    """Read a chunk at a time (papers.views.EXPORT_CHUNK), each paper whole
    with its categories, newest saved first."""
    monkeypatch.setattr("papers.views.EXPORT_CHUNK", 1)
    chunks = []
    iterator = QuerySet.iterator

    def read(queryset, chunk_size=None):
        chunks.append(chunk_size)
        return iterator(queryset, chunk_size=chunk_size)

    monkeypatch.setattr(QuerySet, "iterator", read)

    records = rispy.loads(body(reader.get("/saved/ris/")))
    items = json.loads(body(reader.get("/saved/csl.json/")))
    entries = parse_bibtex(body(reader.get("/saved/bibtex/")), "bibtex").entries

    assert [r["issn"] for r in records] == ["arXiv:2606.00002", "arXiv:2606.00001"]
    assert [r["keywords"] for r in records] == [["cs.AI"], ["cs.LG", "cs.AI"]]
    assert [item["id"] for item in items] == ["arxiv:2606.00002", "arxiv:2606.00001"]
    assert list(entries) == ["arxiv:2606.00002", "arxiv:2606.00001"]
    assert chunks == [1, 1, 1]  # each format read its papers a chunk at a time


# A library's file as the exports wrote it whole, in one string, before they
# streamed: the streamed file must be the same, byte for byte.
WHOLE = {
    "/saved/bibtex/": lambda papers: "\n".join(bibtex_entry(p) for p in papers),
    "/saved/ris/": lambda papers: "\r\n".join(ris_entry(p) for p in papers),
    "/saved/csl.json/": lambda papers: (
        json.dumps([csl_item(p) for p in papers], ensure_ascii=False, indent=2) + "\n"
    ),
}


@pytest.fixture
def awkward(alice, saved) -> None:
    """Besides alice's two papers: one of 60 authors with TeX and accents in
    its title and abstract, and one with no date."""
    upsert_records(
        [
            paper_record(
                "2606.00003",
                title="Müller's $O(n^2)$ \\textit{Über}-Agents {with} 100% & #1",
                authors=tuple(f"Zoë Ångström{n} de la Peña" for n in range(60)),
                abstract='Quotes "and" \\\\ backslashes,\ttabs\nand $\\mathcal{O}$.',
                categories=("stat.ML",),
            ),
            paper_record("2606.00004", title="Undated Agents", categories=()),
        ]
    )
    Paper.objects.filter(arxiv_id="2606.00004").update(published=None)
    for paper in Paper.objects.filter(arxiv_id__in=["2606.00003", "2606.00004"]):
        SavedPaper.objects.create(user=alice, paper=paper)


@pytest.mark.parametrize("path", list(WHOLE))
def test_a_streamed_export_is_the_file_written_whole(
    alice, reader, awkward, path, monkeypatch
):
    """For all four papers across chunks of three, for one, and for none."""
    monkeypatch.setattr("papers.views.EXPORT_CHUNK", 3)
    papers = list(saved_papers(alice).prefetch_related("categories"))
    write = WHOLE[path]

    assert reader.get(path).getvalue() == write(papers).encode()
    assert reader.get(f"{path}?id=2606.00003").getvalue() == (
        write([p for p in papers if p.arxiv_id == "2606.00003"]).encode()
    )
    SavedPaper.objects.filter(user=alice).delete()
    assert reader.get(path).getvalue() == write([]).encode()


@pytest.mark.parametrize("path", list(WHOLE))
def test_an_export_streams_reading_its_papers_as_it_is_sent(reader, saved, path):
    """A library of thousands is neither read nor written whole before its
    first bytes go out."""
    response = reader.get(path)

    assert response.streaming
    assert response["Content-Disposition"].startswith("attachment; filename=")
    with CaptureQueriesContext(connection) as queries:
        body(response)
    assert any('"papers_paper"' in query["sql"] for query in queries)


@pytest.mark.parametrize("path", list(WHOLE))
def test_an_exports_queries_grow_by_the_chunk_not_by_the_paper(
    alice, reader, path, monkeypatch
):
    """One paper and 120 in chunks of 50: two chunks more, each its papers'
    categories read at once."""
    monkeypatch.setattr("papers.views.EXPORT_CHUNK", 50)
    records = [paper_record(f"2606.{n:05d}", title=f"Agent {n}") for n in range(120)]
    papers = Paper.objects.filter(pk__in=upsert_records(records).changed_ids)
    SavedPaper.objects.create(user=alice, paper=papers.order_by("arxiv_id").first())
    reader.get(path)  # the session and user, read once and kept
    one = export_queries(reader, path)
    SavedPaper.objects.bulk_create(
        SavedPaper(user=alice, paper=paper) for paper in papers.order_by("arxiv_id")[1:]
    )

    assert export_queries(reader, path) == one + 2


def test_saved_page_offers_each_format_for_all_and_for_the_ticked(reader, saved):
    page = reader.get("/saved/").text

    for path in ("/saved/bibtex/", "/saved/ris/", "/saved/csl.json/"):
        assert f'href="{path}"' in page
    # The ticked papers' one form (GET, so it works without JavaScript).
    assert '<input type="hidden" name="ticked" value="1">' in page
    assert 'formaction="/saved/ris/"' in page
    assert 'formaction="/saved/csl.json/"' in page
    # Each row says once what it exports; each button names its format.
    assert "Export the ticked papers:" in page
    assert f"Export all <span data-saved-count>{len(saved)}</span>:" in page
    assert 'aria-label="RIS of the ticked papers"' in page
    # Each tick box names its paper as its row shows it: TeX rendered.
    assert 'aria-label="Tick for export: \u03b1-Divergence Agents: a Study"' in page
