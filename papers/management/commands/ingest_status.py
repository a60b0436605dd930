from __future__ import annotations

import argparse
from datetime import datetime

from django.core.management.base import BaseCommand
from django.core.management.base import CommandParser

from papers.models import FeedSource
from papers.models import IngestRun


class Command(BaseCommand):
    help = "Print the feed sources' health and the latest ingest runs."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--limit", type=at_least_one, default=20, help="runs to show"
        )

    def handle(self, *args: object, limit: int, **options: object) -> None:
        sources = list(FeedSource.objects.all())
        if sources:
            self.stdout.write("Sources:")
        for source in sources:
            state = "enabled" if source.enabled else "disabled"
            # A disabled source keeps its next_run_at, but beat never takes it.
            next_run = (
                when(source.next_run_at, "now") if source.enabled else "none (disabled)"
            )
            self.stdout.write(
                f"  {source.name} [{source.kind}, {state}] "
                f"last success {when(source.last_success_at, 'never')}, "
                f"next {next_run}"
            )
            if source.last_error:
                self.stdout.write(
                    self.style.ERROR(f"    last error: {source.last_error}")
                )
        self.stdout.write("Latest runs:")
        for run in IngestRun.objects.defer("errors")[:limit]:
            duration = (
                f"{run.duration.total_seconds():.1f}s" if run.duration else "running"
            )
            line = (
                f"  {run.started_at:%Y-%m-%d %H:%M} {run.status:<9} {duration:>8} "
                f"{run.source}: {run.message}"
            )
            style = self.style.ERROR if run.status == IngestRun.Status.FAILED else str
            self.stdout.write(style(line))


def at_least_one(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {text!r}")
    return int(text)


def when(moment: datetime | None, default: str) -> str:
    return moment.isoformat(timespec="minutes") if moment else default
