"""Run one source through parse and upsert, recorded as an IngestRun.

A file is all-or-nothing: its rows are written in one transaction, so a file
that turns out to be truncated halfway leaves no rows behind, only a failed run.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any
from typing import Protocol
from typing import TypeVar
from typing import cast

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.module_loading import import_string

from papers.ingest.formats import check_path
from papers.ingest.formats import read_path
from papers.ingest.records import PaperRecord
from papers.ingest.records import ParseError
from papers.ingest.records import Rejected
from papers.ingest.records import validation_error
from papers.ingest.upsert import UpsertResult
from papers.ingest.upsert import upsert_records
from papers.models import IngestRun
from papers.versions import HARVEST
from papers.versions import LATEST
from papers.versions import content_changed

logger = logging.getLogger(__name__)

BATCH_SIZE = 1000
# A run keeps the first errors in full; the count says how many there were.
MAX_STORED_ERRORS = 200


class Tagger(Protocol):
    """Tags the papers an ingest batch changed (topics.tagging.IngestTagger).

    `match` reads nothing but the records, so it runs in a thread while the
    database stores them (on two cores, tagging then costs little wall time);
    `store` writes the tags once the papers have ids.
    """

    def match(self, records: Sequence[PaperRecord]) -> Any: ...

    def store(self, result: UpsertResult, matched: Any) -> object: ...

    def after_runs(self) -> None:
        """Once runs stored new or changed papers: what counts them all (momentum)."""


def ingest_tagger() -> Tagger:
    """The tagging step every ingest runs (MOMENTUM_INGEST_TAGGER, topics' tagger):
    named in the settings, so that papers, below topics, does not import it."""
    tagger: Tagger = import_string(settings.MOMENTUM_INGEST_TAGGER)()
    return tagger


ProgressCallback = Callable[[IngestRun], object]
T = TypeVar("T")


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def file_checksum(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def ingest_path(
    path: Path,
    *,
    tagger: Tagger | None = None,
    progress: ProgressCallback | None = None,
) -> IngestRun:
    """Parse, upsert and tag one file as a recorded run.

    A broken file fails its run with the reason; a file that is not arXiv
    metadata at all raises UnrecognisedFormat and records no run.
    """
    check_path(path)
    run = IngestRun.objects.create(source=str(path))
    try:
        run.checksum = file_checksum(path)
        run.format, entries = read_path(path)
        with transaction.atomic():
            ingest_entries(run, entries, tagger=tagger, progress=progress)
    except (ParseError, OSError) as exc:
        fail_run(run, str(exc))
    except Exception as exc:
        fail_run(run, f"unexpected error: {exc!r}")
        raise
    else:
        finish_run(run)
    return run


def ingest_entries(
    run: IngestRun,
    entries: Iterable[PaperRecord | Rejected],
    *,
    tagger: Tagger | None = None,
    progress: ProgressCallback | None = None,
) -> UpsertResult:
    """Upsert and tag entries in batches, counting them on `run` (the caller
    saves it)."""
    total = UpsertResult()
    now = timezone.now()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ingest-match") as pool:
        for batch in batched(entries, BATCH_SIZE):
            records: list[PaperRecord] = []
            for entry in batch:
                problem = _problem(entry, now)
                if problem is None:
                    records.append(cast(PaperRecord, entry))  # not Rejected
                else:
                    record_error(run, *problem)
            run.fetched_count += len(batch)
            matching = pool.submit(tagger.match, records) if tagger else None
            try:
                result = upsert_records(records)
            finally:
                matched = matching.result() if matching else None
            total.add(result)
            if result.changed_ids:
                # A paper stored with no day was listed first (PostgreSQL sorts
                # it newest); given its day, it may have left the newest.
                latest = [LATEST] if result.dated_ids else []
                content_changed(papers=result.changed_ids, lists=latest)
                if tagger:
                    tagger.store(result, matched)
            if progress:
                progress(run)
    run.new_count += len(total.new_ids)
    run.updated_count += len(total.updated_ids)
    run.unchanged_count += total.unchanged
    return total


def _problem(entry: PaperRecord | Rejected, now: datetime) -> tuple[str, str] | None:
    """(entry, reason) if the entry must not be stored, else None."""
    if isinstance(entry, Rejected):
        return entry.entry, entry.reason
    reason = validation_error(entry, now=now)
    return None if reason is None else (entry.arxiv_id, reason)


def record_error(run: IngestRun, entry: str, message: str) -> None:
    run.rejected_count += 1
    if len(run.errors) < MAX_STORED_ERRORS:
        run.errors.append({"entry": entry, "message": message})


def finish_run(run: IngestRun) -> None:
    run.status = (
        IngestRun.Status.PARTIAL if run.rejected_count else IngestRun.Status.SUCCEEDED
    )
    run.message = run.message or describe(run)
    run.finished_at = timezone.now()
    run.save()
    content_changed(lists=[HARVEST])  # pages say when the last harvest was
    logger.info("ingest %s: %s", run.source, run.message)


def fail_run(run: IngestRun, reason: str, *, keep_counts: bool = False) -> None:
    """Mark the run failed; without `keep_counts` its writes were rolled back.
    The reason does not repeat the run's source: whatever shows it shows both."""
    run.status = IngestRun.Status.FAILED
    if not keep_counts:
        run.new_count = run.updated_count = run.unchanged_count = 0
    run.message = reason
    run.finished_at = timezone.now()
    run.save()
    logger.warning("ingest %s failed: %s", run.source, reason)


def describe(run: IngestRun) -> str:
    if run.fetched_count == 0:
        return "No papers in this source (an empty feed is not an error)."
    return (
        f"{run.fetched_count} entries: {run.new_count} new, "
        f"{run.updated_count} updated, {run.unchanged_count} unchanged, "
        f"{run.rejected_count} rejected."
    )
