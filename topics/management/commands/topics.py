from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand
from django.core.management.base import CommandError
from django.core.management.base import CommandParser

from topics.models import Topic
from topics.prefilter import refresh_rule_documents
from topics.preview import preview_rule
from topics.retagging import run_retag
from topics.saved_searches import refill_word_searches
from topics.tasks import train_topic_model


class Command(BaseCommand):
    help = (
        "Preview a rule against the stored papers, re-tag topics, derive terms, "
        "find saved searches' matches again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        commands = parser.add_subparsers(dest="command", required=True)
        preview = commands.add_parser(
            "preview",
            help="print the arXiv ids a rule matches, one per line, newest first",
        )
        preview.add_argument("rule", help='e.g. abs:"tool use" AND ti:agent*')
        preview.add_argument(
            "--category", action="append", default=[], dest="categories"
        )
        retag = commands.add_parser(
            "retag",
            help="re-tag the topics now, in this process, as the worker's task "
            "does (after a re-tag under way, marked done)",
        )
        retag.add_argument(
            "slugs", nargs="*", metavar="SLUG", help="default: every active topic"
        )
        commands.add_parser(
            "terms",
            help="derive the index terms rule previews search by, for every paper "
            "whose terms are missing or older than this release's (after an "
            "upgrade that changes them, before the first preview must)",
        )
        commands.add_parser(
            "searches",
            help="find the matches of every saved search in words again, as "
            "saving it does (after an upgrade that changes the search index)",
        )

    def handle(self, *args: object, command: str, **options: Any) -> None:
        if command == "preview":
            self.preview(options["rule"], options["categories"])
        elif command == "terms":
            derived = refresh_rule_documents()
            self.stdout.write(f"Derived the index terms of {derived} paper(s).")
        elif command == "searches":
            refilled = refill_word_searches()
            self.stdout.write(
                f"Found the matches of {refilled} saved search(es) again."
            )
        else:
            self.retag(options["slugs"])

    def preview(self, rule: str, categories: list[str]) -> None:
        result = preview_rule(rule, categories=categories, limit=None)
        if result.error:
            pointer = " " * (result.position or 0) + "^"
            raise CommandError(f"invalid rule: {result.error}\n  {rule}\n  {pointer}")
        for paper in result.latest:
            self.stdout.write(paper.arxiv_id)
        self.stderr.write(f"{result.count} of {result.scanned} papers match")

    def retag(self, slugs: list[str]) -> None:
        topics = Topic.objects.filter(is_active=True).prefetch_related("categories")
        if slugs:
            topics = Topic.objects.filter(slug__in=slugs).prefetch_related("categories")
            missing = set(slugs) - {topic.slug for topic in topics}
            if missing:
                raise CommandError(f"no topic with slug {', '.join(sorted(missing))}")
        # As the worker's task does (topics.tasks.retag_topic): after a re-tag
        # under way, marked done, then each topic's model trained on the
        # rule's new matches.
        result = run_retag(*(topic.pk for topic in topics))
        for topic in topics:
            train_topic_model(topic.pk)
        self.stdout.write(f"Re-tagged {len(topics)} topic(s): {result}")
