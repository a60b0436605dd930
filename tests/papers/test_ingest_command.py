from __future__ import annotations

import gzip
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError
from django.core.management import call_command

from papers.models import IngestRun
from papers.models import Paper

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "arxiv"
TRUNCATED = (
    FIXTURES / "listing_atom_2024" / "zotero-arxiv-daily_cs.AI_2025-08-20.atom.xml"
)
EMPTY_LISTING = (
    FIXTURES / "listing_atom_2024" / "researcharr_cs_EMPTY_weekend_2025-11-23.atom.xml"
)
OAI_PAGE = (
    FIXTURES / "oai_arXiv" / "arxivXMLParser_ListRecords_arXiv_cs_2016-03_page103.xml"
)
SNAPSHOT = (
    FIXTURES
    / "kaggle_jsonl"
    / "arxivSpider_mnbvc_arxiv-metadata-oai-snapshot_head200.jsonl"
)


def ingest(*paths: Path) -> str:
    out = StringIO()
    call_command("ingest", *map(str, paths), stdout=out, stderr=out)
    return out.getvalue()


def test_ingests_every_wire_format_and_records_one_run_per_file():
    files = [
        SNAPSHOT,
        OAI_PAGE,
        FIXTURES
        / "api_atom"
        / "arxiv.py_id_astro-ph_0601001_s0_m100_3150dca9dc76.atom.xml",
        FIXTURES
        / "listing_rss2_2024"
        / "emanuelealiverti-arxiv_rss_stat_2024-03-26.rss.xml",
        FIXTURES / "oai_arXivRaw" / "litpuvn-arxiv-oai-harvester_GetRecord.xml",
        FIXTURES / "oai_dc" / "invenio-oaiharvester_GetRecord_oai_dc_1507.03011.xml",
    ]
    ingest(*files)

    runs = IngestRun.objects.order_by("pk")
    assert [run.format for run in runs] == [
        "snapshot_jsonl",
        "oai_pmh",
        "api_atom",
        "listing_rss",
        "oai_pmh",
        "oai_pmh",
    ]
    assert all(run.status == IngestRun.Status.SUCCEEDED for run in runs)
    assert runs[0].new_count == 200
    assert Paper.objects.filter(arxiv_id="0704.0001").exists()
    assert Paper.objects.filter(arxiv_id="astro-ph/0601001").exists()


def test_ingesting_the_same_files_twice_changes_nothing():
    ingest(SNAPSHOT, OAI_PAGE)
    before = list(Paper.objects.order_by("arxiv_id").values())

    ingest(SNAPSHOT, OAI_PAGE)

    second = IngestRun.objects.order_by("-pk")[:2]
    assert [run.new_count + run.updated_count for run in second] == [0, 0]
    after = list(Paper.objects.order_by("arxiv_id").values())
    assert [dict(row, modified_at=None) for row in after] == [
        dict(row, modified_at=None) for row in before
    ]


def test_truncated_xml_fails_the_run_names_the_file_and_keeps_no_rows():
    with pytest.raises(CommandError):
        ingest(TRUNCATED)

    run = IngestRun.objects.get()
    assert run.status == IngestRun.Status.FAILED
    assert TRUNCATED.name in run.message
    assert Paper.objects.count() == 0


def ingest_failing(*paths: Path) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    with pytest.raises(CommandError) as raised:
        call_command("ingest", *map(str, paths), stdout=out, stderr=err)
    return str(raised.value), err.getvalue()


def test_a_named_file_that_is_not_arxiv_metadata_is_refused_and_records_no_run(
    tmp_path,
):
    page = tmp_path / "error.html"
    page.write_text("<!DOCTYPE html><html><body>503 Service Unavailable</body></html>")

    error, err = ingest_failing(page)

    assert error == "1 file(s) given are not arXiv metadata"
    assert f"skipped {page}: unrecognised format (looks like an HTML page)" in err
    assert not IngestRun.objects.exists()


def test_a_directory_skips_files_that_are_not_arxiv_metadata(tmp_path):
    (tmp_path / "labels.json").write_text('{\n "topic": "x",\n "papers": []\n}')
    (tmp_path / "questions.json").write_text('[{"q": "why?"}]')
    (tmp_path / "rows.jsonl").write_text('{"name": "a"}\n{"name": "b"}\n')
    (tmp_path / "nested").mkdir()
    (tmp_path / "nested" / "feed.jsonl").write_text(SNAPSHOT.read_text())

    out = StringIO()
    call_command("ingest", str(tmp_path), stdout=out, stderr=out)

    run = IngestRun.objects.get()
    assert run.status == IngestRun.Status.SUCCEEDED
    assert run.source.endswith("nested/feed.jsonl")
    assert out.getvalue().count("unrecognised format") == 3
    assert Paper.objects.count() == 200


def test_a_snapshot_truncated_midway_keeps_no_partial_rows(tmp_path):
    data = gzip.compress(SNAPSHOT.read_bytes())
    broken = tmp_path / "snapshot.jsonl.gz"
    broken.write_bytes(data[: len(data) // 2])

    with pytest.raises(CommandError):
        ingest(broken)

    assert IngestRun.objects.get().status == IngestRun.Status.FAILED
    assert Paper.objects.count() == 0


def test_a_bad_file_does_not_stop_the_good_ones(tmp_path):
    empty = tmp_path / "empty.xml"
    empty.write_bytes(b"")

    with pytest.raises(CommandError):
        ingest(empty, SNAPSHOT)

    statuses = list(IngestRun.objects.order_by("pk").values_list("status", flat=True))
    assert statuses == [IngestRun.Status.FAILED, IngestRun.Status.SUCCEEDED]
    assert Paper.objects.count() == 200


def test_an_empty_feed_is_a_successful_run_with_zero_papers():
    out = ingest(EMPTY_LISTING)

    run = IngestRun.objects.get()
    assert run.status == IngestRun.Status.SUCCEEDED
    assert run.fetched_count == 0
    assert "No papers" in out


def test_a_malformed_line_is_rejected_and_the_rest_ingested(tmp_path):
    lines = SNAPSHOT.read_text().splitlines()
    path = tmp_path / "snapshot.jsonl"
    path.write_text("\n".join([lines[0], '{"id": "0704.9999", "title": ', *lines[1:5]]))

    out = ingest(path)

    run = IngestRun.objects.get()
    assert run.status == IngestRun.Status.PARTIAL
    assert (run.new_count, run.rejected_count) == (5, 1)
    assert run.errors[0]["entry"] == "line 2"
    assert "rejected line 2" in out


def test_a_missing_file_is_a_failed_run():
    with pytest.raises(CommandError):
        ingest(Path("/nonexistent/feed.xml"))
    assert "No such file" in IngestRun.objects.get().message
