from __future__ import annotations

import os
import socket
from datetime import date
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand
from django.core.management.base import CommandError
from django.core.management.base import CommandParser

from papers.ingest.formats import UnrecognisedFormat
from papers.ingest.harvest import Page
from papers.ingest.harvest import run_source
from papers.ingest.runs import Tagger
from papers.ingest.runs import ingest_path
from papers.ingest.runs import ingest_tagger
from papers.models import FeedSource
from papers.models import IngestRun

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
        if not paths and not names:
            raise CommandError("give files to ingest, or --source NAME")
        if (options["since"] or options["until"]) and not names:
            raise CommandError("--from and --until apply to --source runs")
        runs, unread = [], 0
        for path, given in expand(paths):
            try:
                runs.append(self.ingest_file(path))
            except UnrecognisedFormat as exc:
                self.stderr.write(f"skipped {path}: unrecognised format ({exc})")
                # A file asked for by name must be read; one found in a folder
                # beside the feeds may be anything.
                unread += given
        for name in names:
            runs.append(self.run_source(name, options["since"], options["until"]))
        if any(run.new_count or run.updated_count for run in runs):
            self.tagger().after_runs()
        failed = [run for run in runs if run.status == IngestRun.Status.FAILED]
        if failed:
            raise CommandError(f"{len(failed)} of {len(runs)} runs failed")
        if unread:
            raise CommandError(f"{unread} file(s) given are not arXiv metadata")

    def tagger(self) -> Tagger:
        # Each run tags with the rules and models as they are when it begins.
        return ingest_tagger()

    def ingest_file(self, path: Path) -> IngestRun:
        run = ingest_path(path, tagger=self.tagger(), progress=self.show_progress)
        self.report(run)
        return run

    def run_source(
        self, name: str, since: date | None, until: date | None
    ) -> IngestRun:
        source = FeedSource.objects.filter(name=name).first()
        if source is None:
            known = (
                ", ".join(FeedSource.objects.values_list("name", flat=True)) or "none"
            )
            raise CommandError(f"no feed source named {name!r} (known: {known})")
        run = run_source(
            source,
            owner=f"{socket.gethostname()}:{os.getpid()}:manage.py",
            tagger=self.tagger(),
            since=since,
            until=until,
            progress=self.show_page,
        )
        if run is None:
            raise CommandError(f"{name} is being run by another worker right now")
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
            self.stderr.write(self.style.ERROR(f"FAILED {run.message}"))
            return
        self.stdout.write(f"{run.source}: {run.message}")
        for error in run.errors[:10]:
            entry, message = error["entry"], error["message"]
            self.stdout.write(f"  rejected {entry}: {message}")


def expand(paths: list[Path]) -> list[tuple[Path, bool]]:
    """(file, whether it was named) for files as given and, for directories, the
    files with a feed's suffix in them, sorted, recursively."""
    files: list[tuple[Path, bool]] = []
    for path in paths:
        if path.is_dir():
            files.extend(
                (found, False)
                for found in sorted(path.rglob("*"))
                if found.suffix in FEED_SUFFIXES and found.is_file()
            )
        else:
            files.append((path, True))
    return files
