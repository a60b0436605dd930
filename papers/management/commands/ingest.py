from __future__ import annotations

import os
import socket
from datetime import date
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand
from django.core.management.base import CommandError
from django.core.management.base import CommandParser
from django.utils import timezone

from papers.ingest.formats import UnrecognisedFormat
from papers.ingest.harvest import COMMAND_OWNER
from papers.ingest.harvest import Page
from papers.ingest.harvest import backfill_refusal
from papers.ingest.harvest import run_source
from papers.ingest.runs import Tagger
from papers.ingest.runs import ingest_path
from papers.ingest.runs import ingest_tagger
from papers.models import FeedSource
from papers.models import IngestRun
from papers.pagecache import PAGE_TIMEOUT
from papers.pagecache import cache_is_process_local

FEED_SUFFIXES = {".xml", ".atom", ".rss", ".json", ".jsonl", ".gz"}


class Command(BaseCommand):
    help = (
        "Ingest arXiv metadata files (query API Atom, listing RSS/Atom, OAI-PMH, "
        "snapshot JSON lines, optionally gzipped), detecting each file's format, or "
        "run feed sources now (--source); then tag the new and changed papers."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="*", type=Path, help="files or directories")
        parser.add_argument(
            "--source",
            action="append",
            default=[],
            metavar="NAME",
            help="run this feed source (by name) now, in this process; repeatable",
        )
        parser.add_argument(
            "--from",
            dest="since",
            type=date.fromisoformat,
            help="backfill from YYYY-MM-DD",
        )
        parser.add_argument(
            "--until", type=date.fromisoformat, help="backfill until YYYY-MM-DD"
        )

    def handle(self, *args: object, **options: Any) -> None:
        paths: list[Path] = options["paths"]
        names: list[str] = options["source"]
        since: date | None = options["since"]
        until: date | None = options["until"]
        if not paths and not names:
            raise CommandError("give files to ingest, or --source NAME")
        # Everything is checked before anything is ingested: a refusal halfway
        # would leave files stored without what follows a run (after_runs).
        sources = [find_source(name) for name in names]
        if since or until:
            check_backfill(sources, since, until)
        runs, unread, busy = [], 0, 0
        for path, given in self.expand(paths):
            try:
                runs.append(self.ingest_file(path))
            except UnrecognisedFormat as exc:
                self.stderr.write(f"skipped {path}: unrecognised format ({exc})")
                # A file asked for by name must be read; one found in a folder
                # beside the feeds may be anything.
                unread += given
        for source in sources:
            run = self.run_source(source, since, until)
            if run is None:
                busy += 1
            else:
                runs.append(run)
        if any(run.new_count or run.updated_count for run in runs):
            self.tagger().after_runs()
            if cache_is_process_local():
                self.stdout.write(
                    "The cache is each process's own (no CACHE_URL): a server "
                    "running beside this command (make run) shows these papers as "
                    f"its cached pages expire, within {PAGE_TIMEOUT // 60} minutes, "
                    "or at once when restarted."
                )
        failed = [run for run in runs if run.status == IngestRun.Status.FAILED]
        if failed:
            raise CommandError(f"{len(failed)} of {len(runs)} runs failed")
        if unread:
            raise CommandError(f"{unread} file(s) given are not arXiv metadata")
        if busy:
            raise CommandError(f"{busy} source(s) not run: another worker has them")

    def tagger(self) -> Tagger:
        # Each run tags with the rules and models as they are when it begins.
        return ingest_tagger()

    def ingest_file(self, path: Path) -> IngestRun:
        run = ingest_path(path, tagger=self.tagger(), progress=self.show_progress)
        self.report(run)
        return run

    def run_source(
        self, source: FeedSource, since: date | None, until: date | None
    ) -> IngestRun | None:
        run = run_source(
            source,
            owner=f"{socket.gethostname()}:{os.getpid()}{COMMAND_OWNER}",
            tagger=self.tagger(),
            since=since,
            until=until,
            progress=self.show_page,
        )
        if run is None:
            self.stderr.write(f"{source.name} is being run by another worker right now")
        else:
            self.report(run)
        return run

    def show_progress(self, run: IngestRun) -> None:
        self.stdout.write(f"  {run.fetched_count:,} entries read...")

    def show_page(self, run: IngestRun, page: Page) -> None:
        self.stdout.write(
            f"  page of {len(page.entries):,}: {run.fetched_count:,} entries so far, "
            f"{run.new_count:,} new, {run.updated_count:,} updated"
        )

    def report(self, run: IngestRun) -> None:
        if run.status == IngestRun.Status.FAILED:
            self.stderr.write(self.style.ERROR(f"FAILED {run.source}: {run.message}"))
            return
        self.stdout.write(f"{run.source}: {run.message}")
        for error in run.errors[:10]:
            entry, message = error["entry"], error["message"]
            self.stdout.write(f"  rejected {entry}: {message}")

    def expand(self, paths: list[Path]) -> list[tuple[Path, bool]]:
        """(file, whether it was named) for files as given and, for directories,
        the files with a feed's suffix in them, sorted, recursively."""
        files: list[tuple[Path, bool]] = []
        for path in paths:
            if not path.is_dir():
                files.append((path, True))
                continue
            found = [
                (file, False)
                for file in sorted(path.rglob("*"))
                if file.suffix in FEED_SUFFIXES and file.is_file()
            ]
            if not found:
                # Not an error (a drop folder may be empty today), but not silent.
                suffixes = " ".join(sorted(FEED_SUFFIXES))
                self.stderr.write(
                    f"nothing to ingest in {path}: no file ending in {suffixes}"
                )
            files.extend(found)
        return files


def find_source(name: str) -> FeedSource:
    source = FeedSource.objects.filter(name=name).first()
    if source is None:
        # Quoted: a name may hold ", " itself.
        names = FeedSource.objects.values_list("name", flat=True)
        known = ", ".join(repr(known) for known in names) or "none"
        raise CommandError(f"no feed source named {name!r} (known: {known})")
    return source


def check_backfill(
    sources: list[FeedSource], since: date | None, until: date | None
) -> None:
    """Refuse a date range that cannot be what the operator meant."""
    if not sources:
        raise CommandError("--from and --until apply to --source runs")
    today = timezone.now().date()
    for option, day in (("--from", since), ("--until", until)):
        if day and day > today:
            raise CommandError(f"{option} {day} is in the future")
    if since and until and since > until:
        raise CommandError(f"--from {since} is after --until {until}")
    for source in sources:
        if refusal := backfill_refusal(source):
            raise CommandError(f"{source.name} cannot backfill a date range: {refusal}")
