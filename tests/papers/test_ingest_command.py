from __future__ import annotations

import gzip
import json
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError
from django.core.management import call_command
from django.utils import timezone
from werkzeug import Response

from papers.models import Affiliation
from papers.models import FeedSource
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


def snapshot_rows(count: int) -> list[dict]:
    """The snapshot's first lines, read as JSON to be edited."""
    return [json.loads(line) for line in SNAPSHOT.read_text().splitlines()[:count]]


def ingest_rows(tmp_path: Path, rows: list[dict]) -> IngestRun:
    """Ingest these rows as one snapshot file; the run it recorded."""
    path = tmp_path / "snapshot.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in rows))
    ingest(path)
    return IngestRun.objects.get()


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


def test_with_a_cache_of_its_own_it_says_when_a_running_server_shows_the_papers(
    settings,
):
    """The embedded default: the server's cache is its own, and this command's
    changes reach its pages only as they expire."""
    said = "a server running beside this command (make run) shows these papers"

    assert said in ingest(OAI_PAGE)  # the tests' cache is local memory
    assert said not in ingest(OAI_PAGE)  # nothing new

    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}
    }
    Paper.objects.all().delete()
    assert said not in ingest(OAI_PAGE)


def test_truncated_xml_fails_the_run_names_the_file_and_keeps_no_rows():
    _, err = ingest_failing(TRUNCATED)

    run = IngestRun.objects.get()
    assert run.status == IngestRun.Status.FAILED
    assert run.source == str(TRUNCATED)
    assert err.startswith(f"FAILED {TRUNCATED}: ")
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


def test_dates_out_of_range_and_values_no_column_holds_reject_their_line(
    tmp_path,
):
    """Each failed its whole file: a date past the year 9999 in UTC raised
    OverflowError, which no line's handler caught, and a value wider than its
    column failed the batch's COPY; the good lines were lost with it. A list
    or a number where text belongs was stored as its Python spelling."""
    rows = snapshot_rows(15)
    good, bad = rows[:6], rows[6:]
    bad[0]["versions"].append(
        {"version": "v9", "created": "Fri, 31 Dec 9999 23:30:00 -0500"}
    )
    bad[1]["versions"][0]["created"] = "Mon, 1 Jan 1900 00:00:00 GMT"
    bad[2]["doi"] = "10.1/" + "d" * 300
    bad[3]["license"] = "l" * 300
    bad[4]["categories"] = "hep-ph " + "x" * 40
    bad[5]["versions"][-1]["version"] = "v40000"
    bad[6]["categories"] = ["cs.AI"]  # read as the category "['cs.AI']"
    bad[7]["authors"] = 5  # read as an author named 5
    bad[8]["title"] = ["A", "list"]  # said "'list' object has no attribute"

    run = ingest_rows(tmp_path, good + bad)

    reasons = " | ".join(error["message"] for error in run.errors)
    assert (run.new_count, run.rejected_count) == (6, 9), reasons
    assert "date out of range: 9999-12-31T23:30:00-05:00" in reasons
    assert "date before arXiv began: 1900-01-01" in reasons
    assert "doi is 305 characters long (limit 255)" in reasons
    assert "license is 300 characters long (limit 255)" in reasons
    assert "not an arXiv category: 'xxxxxxxx" in reasons
    assert "version 40000" in reasons
    assert "categories is list, not text" in reasons
    assert "authors is int, not text" in reasons
    assert "title is list, not text" in reasons
    assert Paper.objects.count() == 6


def test_a_missing_file_is_a_failed_run():
    with pytest.raises(CommandError):
        ingest(Path("/nonexistent/feed.xml"))
    assert "No such file" in IngestRun.objects.get().message


def test_a_snapshot_whose_first_line_has_no_id_rejects_that_line(tmp_path):
    lines = SNAPSHOT.read_text().splitlines()
    path = tmp_path / "snapshot.jsonl"
    no_id = {key: value for key, value in json.loads(lines[0]).items() if key != "id"}
    path.write_text("\n".join([json.dumps(no_id), *lines[1:4]]))

    out = ingest(path)

    run = IngestRun.objects.get()
    assert run.status == IngestRun.Status.PARTIAL
    assert (run.new_count, run.rejected_count) == (3, 1)
    assert run.errors == [{"entry": "line 1", "message": "no id"}]
    assert "rejected line 1: no id\n" in out


def test_a_directory_with_nothing_to_ingest_says_so(tmp_path):
    (tmp_path / "notes.txt").write_text("not a feed")

    out = ingest(tmp_path)

    assert f"nothing to ingest in {tmp_path}" in out
    assert not IngestRun.objects.exists()


def test_an_unknown_source_name_is_refused_before_any_file_is_ingested():
    FeedSource.objects.create(name="Agentic RL, hourly", kind="api_query", query="x")
    FeedSource.objects.create(name="cs.AI daily", kind="listing", category="cs.AI")

    error, _ = ingest_failing(SNAPSHOT, "--source", "nope")

    assert error == (
        "no feed source named 'nope' (known: 'Agentic RL, hourly', 'cs.AI daily')"
    )
    assert not IngestRun.objects.exists()
    assert not Paper.objects.exists()


@pytest.fixture
def oai_source(db) -> FeedSource:
    return FeedSource.objects.create(name="cs harvest", kind="oai", category="cs")


def backfill(name: str, *dates: str) -> str:
    with pytest.raises(CommandError) as refused:
        call_command("ingest", "--source", name, *dates, stdout=StringIO())
    assert not IngestRun.objects.exists()
    return str(refused.value)


def test_a_backfill_from_after_until_is_refused(oai_source, fake_arxiv):
    error = backfill("cs harvest", "--from", "2026-07-01", "--until", "2026-06-01")

    assert error == "--from 2026-07-01 is after --until 2026-06-01"
    assert fake_arxiv.requests == []


@pytest.mark.parametrize("option", ["--from", "--until"])
def test_a_backfill_into_the_future_is_refused(oai_source, fake_arxiv, option):
    tomorrow = (timezone.now() + timedelta(days=1)).date().isoformat()

    error = backfill("cs harvest", option, tomorrow)

    assert error == f"{option} {tomorrow} is in the future"
    assert fake_arxiv.requests == []


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        (
            {"kind": "listing", "category": "cs.AI"},
            "a daily listing holds only the latest announcement",
        ),
        (
            {"kind": "api_query", "query": "2401.00001 2401.00002"},
            "its query is a list of ids, not a search",
        ),
    ],
)
def test_a_source_that_cannot_backfill_refuses_a_date_range(fake_arxiv, fields, why):
    FeedSource.objects.create(name="fixed", **fields)

    error = backfill("fixed", "--from", "2024-01-01")

    assert error == f"fixed cannot backfill a date range: {why}"
    assert fake_arxiv.requests == []


def status(*args: str) -> str:
    out = StringIO()
    call_command("ingest_status", *args, stdout=out)
    return out.getvalue()


def test_status_names_the_source_of_a_failed_run_once(fake_arxiv, settings):
    settings.MOMENTUM_HTTP_MAX_ATTEMPTS = 1
    fake_arxiv.on("/atom/cs.AI", Response("down", status=503))
    FeedSource.objects.create(name="cs.AI daily", kind="listing", category="cs.AI")
    with pytest.raises(CommandError):
        call_command("ingest", "--source", "cs.AI daily", stdout=StringIO())

    runs = status().split("Latest runs:")[1]

    assert runs.count("cs.AI daily") == 1
    assert "HTTP 503" in runs


def test_status_shows_a_disabled_source_as_not_scheduled():
    FeedSource.objects.create(
        name="cs.AI daily", kind="listing", category="cs.AI", enabled=False
    )

    assert "next none (disabled)" in status()


def test_status_refuses_a_limit_below_one():
    with pytest.raises(CommandError, match="--limit: must be 1 or more, not '-1'"):
        status("--limit", "-1")


def test_control_characters_in_author_names_are_dropped_as_in_titles(tmp_path):
    """A snapshot's author string went in as it was: a NUL failed the whole
    file (PostgreSQL holds no NUL in text), an escape was stored in the
    author's name, and an override reversed the rest of every line naming them."""
    rows = snapshot_rows(3)
    rows[0]["authors"] = "Ada Love\u0000lace and Alan Tu\u001bring"
    rows[1]["authors"] = "Jos\u202e\u00e9 Garc\u00eda (Universi\u202edad de Chile)"

    run = ingest_rows(tmp_path, rows)

    assert (run.new_count, run.rejected_count) == (3, 0), run.errors
    first = Paper.objects.get(arxiv_id=rows[0]["id"])
    assert set(first.authors.values_list("name", flat=True)) == {
        "Ada Lovelace",
        "Alan Turing",
    }
    assert Paper.objects.get(arxiv_id=rows[1]["id"]).author_names == "José García"
    assert set(Affiliation.objects.values_list("name", flat=True)) == {
        "Universidad de Chile"
    }


def test_a_lone_surrogate_is_stored_as_a_character_that_could_not_be_read(tmp_path):
    """JSON can spell half of a character ("\\ud83d" without its partner),
    which no UTF-8 column can hold: the whole file failed. It is shown as a
    character that could not be read."""
    rows = snapshot_rows(3)
    rows[1]["title"] = "Rockets \ud83d and stars"
    rows[1]["authors"] = "Ada Lovelace \ude80"

    run = ingest_rows(tmp_path, rows)

    assert (run.new_count, run.rejected_count) == (3, 0), run.errors
    paper = Paper.objects.get(arxiv_id=rows[1]["id"])
    assert (paper.title, paper.author_names) == (
        "Rockets \ufffd and stars",
        "Ada Lovelace \ufffd",
    )
