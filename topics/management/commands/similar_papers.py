from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand
from django.core.management.base import CommandParser

from topics.similar import build_all
from topics.similar import build_if_changed
from topics.similar import update_after_ingest


class Command(BaseCommand):
    help = (
        "(Re)build every paper's similar papers (tf-idf of title and abstract), "
        "in this process."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        what = parser.add_mutually_exclusive_group()
        what.add_argument(
            "--if-changed",
            action="store_true",
            help="skip when the papers are those of the last build",
        )
        what.add_argument(
            "--update",
            action="store_true",
            help="only the papers changed since the last pass, with the last "
            "build's vocabulary, scored for every reader's For you (what runs "
            "after ingest)",
        )

    def handle(self, *args: object, **options: Any) -> None:
        if options["update"]:
            result = update_after_ingest()
        elif options["if_changed"]:
            if (built := build_if_changed()) is None:
                self.stdout.write("Similar papers: up to date.")
                return
            result = built
        else:
            result = build_all()
        self.stdout.write(f"Similar papers: {result}")
