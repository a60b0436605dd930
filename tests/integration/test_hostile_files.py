"""Hostile files through `manage.py ingest`, as a separate process on the test
database: each is refused with a clear reason, in bounded memory, keeping no rows."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

from papers.models import IngestRun
from papers.models import Paper
from tests.integration.celery_workers import BASE_DIR
from tests.integration.celery_workers import process_env

pytestmark = pytest.mark.django_db(transaction=True)

# A process that reads a file in pieces stays well under this; one that holds a
# bomb's inflated gigabytes does not.
MEMORY_LIMIT_MB = 400
CHUNK = 64 * 1024 * 1024
VALID_LINE = (
    b'{"id": "2607.00002", "title": "A fine paper", "abstract": "It is fine.", '
    b'"authors": "Ada Lovelace", "categories": "cs.AI", '
    b'"versions": [{"version": "v1", "created": "Mon, 6 Jul 2026 10:00:00 GMT"}]}\n'
)


def member(data: bytes) -> bytes:
    """One gzip member; gzip readers read members one after another."""
    return gzip.compress(data, compresslevel=9)


def bomb(path: Path, head: bytes, filler: bytes, tail: bytes, gigabytes: int) -> Path:
    """A file of about 2 MB per GB that inflates to `gigabytes` of `filler`
    between `head` and `tail` (the compressed filler is made once, then repeated)."""
    chunk = member(filler * (CHUNK // len(filler)))
    with path.open("wb") as out:
        out.write(member(head))
        for _ in range(gigabytes * 1024**3 // CHUNK):
            out.write(chunk)
        out.write(member(tail))
    return path


def ingest(path: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run the command in a child process; its output and its peak memory in MB."""
    measure = (
        "import resource, subprocess, sys;"
        "done = subprocess.run(sys.argv[1:]);"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss;"
        "print(peak, file=sys.stderr);"
        "sys.exit(done.returncode)"
    )
    result = subprocess.run(
        [sys.executable, "-c", measure, sys.executable, "manage.py", "ingest", path],
        cwd=BASE_DIR,
        env=process_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    peak_kb = int(result.stderr.strip().splitlines()[-1])
    return result, peak_kb / 1024


def test_a_gzip_bomb_of_xml_is_refused_without_inflating_it(tmp_path):
    path = bomb(
        tmp_path / "bomb.xml.gz",
        b'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"'
        b' xmlns:arxiv="http://arxiv.org/schemas/atom"><!--',
        b" ",
        b"--></feed>",
        gigabytes=2,
    )
    assert path.stat().st_size < 4 * 1024 * 1024

    result, peak_mb = ingest(path)

    assert result.returncode != 0
    assert "bomb.xml.gz is more than 64 MiB (decompressed)" in result.stderr
    assert peak_mb < MEMORY_LIMIT_MB
    assert IngestRun.objects.get().status == IngestRun.Status.FAILED


def test_a_one_line_json_lines_bomb_is_refused_in_bounded_memory(tmp_path):
    path = bomb(
        tmp_path / "bomb.jsonl.gz",
        b'{"id": "2607.00001", "title": "',
        b"a",
        b'"}\n' + VALID_LINE,
        gigabytes=2,
    )

    result, peak_mb = ingest(path)

    assert result.returncode != 0
    assert "once decompressed" in result.stderr
    assert peak_mb < MEMORY_LIMIT_MB
    assert IngestRun.objects.get().status == IngestRun.Status.FAILED
    assert not Paper.objects.exists()


def test_a_record_too_long_to_be_a_paper_is_rejected_and_the_rest_stored(tmp_path):
    path = tmp_path / "long.jsonl"
    huge = b'{"id": "2607.00001", "title": "' + b"a" * (3 * 1024 * 1024) + b'"}\n'
    path.write_bytes(huge + VALID_LINE)

    result, peak_mb = ingest(path)

    assert result.returncode == 0, result.stderr
    run = IngestRun.objects.get()
    assert run.status == IngestRun.Status.PARTIAL
    assert "more than a record may be" in run.errors[0]["message"]
    assert list(Paper.objects.values_list("arxiv_id", flat=True)) == ["2607.00002"]
    assert peak_mb < MEMORY_LIMIT_MB


def test_a_line_nested_too_deeply_to_parse_is_rejected_and_the_rest_stored(tmp_path):
    """json's parser recurses per level: such a line crashed the command with a
    RecursionError, failing the whole file for one line."""
    path = tmp_path / "deep.jsonl"
    deep = b'{"id": "2607.00001", "title": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    path.write_bytes(deep + VALID_LINE)

    result, _ = ingest(path)

    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    run = IngestRun.objects.get()
    assert run.status == IngestRun.Status.PARTIAL
    assert run.errors == [
        {"entry": "line 1", "message": "nested too deeply to be a paper"}
    ]
    assert list(Paper.objects.values_list("arxiv_id", flat=True)) == ["2607.00002"]


def test_a_compressed_file_may_not_inflate_past_its_ratio(tmp_path):
    """Also without the bomb's size: 10 MB of one repeated line is 1000 to 1."""
    path = tmp_path / "repeated.jsonl.gz"
    path.write_bytes(member(VALID_LINE * 60_000))

    result, _ = ingest(path)

    assert result.returncode != 0
    assert "MOMENTUM_INGEST_MAX_RATIO" in result.stderr
