from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand
from django.core.management.base import CommandError
from django.core.management.base import CommandParser

from papers.ingest.runs import ingest_path
from papers.models import IngestRun
from topics.tagging import tag_papers


class Command(BaseCommand):
    help = (
        "Ingest arXiv metadata files (query API Atom, listing RSS/Atom, OAI-PMH, "
        "snapshot JSON lines, optionally gzipped), detecting each file's format, "
        "and tag the new and changed papers."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("paths", nargs="+", type=Path, help="files or directories")

    def handle(self, *args: object, paths: list[Path], **options: object) -> None:
        failed = []
        for path in expand(paths):
            run = ingest_path(path, on_changed=tag_papers)
            if run.status == IngestRun.Status.FAILED:
                failed.append(path)
                self.stderr.write(self.style.ERROR(f"FAILED {run.message}"))
            else:
                self.stdout.write(f"{path}: {run.message}")
                for error in run.errors[:10]:
                    entry, message = error["entry"], error["message"]
                    self.stdout.write(f"  rejected {entry}: {message}")
        if failed:
            raise CommandError(f"{len(failed)} of the files could not be ingested")


FEED_SUFFIXES = {".xml", ".atom", ".rss", ".json", ".jsonl", ".gz"}


def expand(paths: list[Path]) -> list[Path]:
    """Files as given; directories as the feed files in them, sorted, recursively."""
    files = []
    for path in paths:
        if path.is_dir():
            files.extend(
                sorted(p for p in path.rglob("*") if p.suffix in FEED_SUFFIXES)
            )
        else:
            files.append(path)
    return files
