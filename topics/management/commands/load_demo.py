from __future__ import annotations

import json
import os
import shlex
import sys
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.core.management.base import BaseCommand
from django.core.management.base import CommandError
from django.db import transaction
from django.db.models import Count
from django.urls import reverse

from accounts.models import User
from papers.authors import set_following_author
from papers.ingest.runs import file_checksum
from papers.ingest.runs import ingest_path
from papers.library import set_rating
from papers.library import set_saved
from papers.models import FeedSource
from papers.models import IngestRun
from papers.models import Paper
from papers.models import Rating
from topics import recommend
from topics import relevance
from topics.curation import exclude_paper
from topics.curation import pin_paper
from topics.editing import save_topic
from topics.following import set_following
from topics.models import Topic
from topics.models import TopicModel
from topics.momentum import latest_announcement_day
from topics.momentum import refresh_momentum
from topics.prefilter import refresh_rule_documents
from topics.query import topic_papers
from topics.queue import awaiting_counts
from topics.queue import model_summary
from topics.seed import load_topics
from topics.similar import build_if_changed
from topics.tagging import retag_changed_topics

DEMO_CORPUS = (
    Path(settings.BASE_DIR) / "data" / "demo" / "arxiv-2026-06-07.snapshot.jsonl.gz"
)
# Hand-labeled papers (bench.relevance's sets), loaded as curators' decisions.
LABELED_SETS = Path(settings.BASE_DIR) / "data" / "relevance"
DEMO_ADMIN = ("admin@momentum.localhost", "momentum-admin")
DEMO_READER = ("reader@momentum.localhost", "momentum-reader")
DEMO_FOLLOWS = ["rl-for-llm-agents", "llm-agent-training", "agent-benchmarks"]
DEMO_JOINED = datetime(2026, 6, 1, tzinfo=UTC)
# The demo reader's library: saves and thumbs up from a topic they follow,
# thumbs down from one they don't.
DEMO_SAVES, DEMO_UPS, DEMO_DOWNS = 6, 3, 2
# What a fresh site harvests once workers and beat run (make worker, make beat).
DEFAULT_SOURCES: list[dict[str, Any]] = [
    *(
        {"name": f"{code} daily listing", "kind": "listing", "category": code}
        for code in ["cs.AI", "cs.CL", "cs.LG", "cs.MA"]
    ),
    {
        "name": "Agentic RL, hourly",
        "kind": "api_query",
        "query": 'abs:"reinforcement learning" AND abs:agent AND cat:cs.*',
    },
    {
        "name": "cs backfill (OAI-PMH)",
        "kind": "oai",
        "category": "cs",
        "enabled": False,
    },
]


def manage_command() -> str:
    """How to run manage.py from here as this process was run: this Python
    (.venv/bin/python), and the site address and data folder when they are not
    the defaults, so that the command reads this demo's database and its links
    point at the same server."""
    python = os.path.relpath(sys.executable)
    manage = os.path.relpath(Path(settings.BASE_DIR) / "manage.py")
    given = [
        f"{name}={shlex.quote(value)} "
        for name in ("MOMENTUM_SITE_URL", "MOMENTUM_VAR_DIR")
        if (value := os.environ.get(name))
    ]
    return f"{''.join(given)}{python} {manage}"


class Command(BaseCommand):
    help = "Load the demo corpus and seed topics, tag papers, create demo users."

    def handle(self, *args: object, **options: object) -> None:
        if not settings.DEBUG:
            raise CommandError(
                "load_demo creates users with known passwords: DEBUG only."
            )
        self.load_corpus()
        # Tagged below, in one pass, rather than a background re-tag per topic.
        topics = load_topics(retag=False)
        self.stdout.write(f"Seed topics: {len(topics)}")
        # Only topics whose rule, categories or corpus changed since their last
        # re-tag: a second run tags nothing.
        retagged, result = retag_changed_topics()
        if retagged:
            self.stdout.write(f"Tagging {len(retagged)} topic(s): {result}")
        else:
            self.stdout.write("Tagging: every topic is up to date.")
        # Tagging derives what it reads; a release whose terms changed, the rest.
        if derived := refresh_rule_documents():
            self.stdout.write(f"Rule previews' index terms: {derived} papers.")
        self.load_decisions()
        refresh_momentum()
        self.find_similar()
        for source in DEFAULT_SOURCES:
            FeedSource.objects.get_or_create(name=source["name"], defaults=source)
        self.create_users()

    def load_corpus(self) -> None:
        checksum = file_checksum(DEMO_CORPUS)
        done = IngestRun.objects.filter(
            checksum=checksum,
            status__in=[IngestRun.Status.SUCCEEDED, IngestRun.Status.PARTIAL],
        ).exists()
        if done:
            self.stdout.write("Demo corpus already loaded.")
            return
        self.stdout.write("Loading the demo corpus (25,002 papers, about a minute)...")
        run = ingest_path(DEMO_CORPUS)
        if run.status == IngestRun.Status.FAILED:
            raise CommandError(f"{run.source}: {run.message}")
        self.stdout.write(f"Demo corpus: {run.message}")

    def find_similar(self) -> None:
        """Every paper's similar papers, unless built for these papers already."""
        self.stdout.write("Similar papers (a minute or two if the papers changed)...")
        result = build_if_changed()
        self.stdout.write(
            f"Similar papers: {result}" if result else "Similar papers: up to date."
        )

    def load_decisions(self) -> None:
        """The labeled sets' judgments as curator decisions (relevant: pin, not:
        exclusion) on topics that have no model yet; their topics then decide the
        sure papers automatically, so the admin's review queue shows the band's
        papers awaiting review, most uncertain first. Trained here
        too, so the summary is printed whether tasks run in process or not."""
        for path in sorted(LABELED_SETS.glob("*.json")):
            labeled = json.loads(path.read_text())
            topic = Topic.objects.filter(slug=labeled["topic"]).first()
            if topic is None or TopicModel.objects.filter(topic=topic).exists():
                continue
            relevant = {
                paper["arxiv_id"]: paper["relevant"] for paper in labeled["papers"]
            }
            papers = Paper.objects.in_bulk(relevant, field_name="arxiv_id")
            # Decisions ask for a training once their burst is over: with
            # in-process tasks, on a timer of this process, which would fire
            # during the similar papers' build below and wait on its lock.
            # Marked due already, they ask for none: theirs is the one here.
            cache.set(relevance.training_due_key(topic.pk), 1)
            with transaction.atomic():
                for arxiv_id, paper in papers.items():
                    if relevant[arxiv_id]:
                        pin_paper(topic, paper)
                    else:
                        exclude_paper(topic, paper, reason=f"labeled set {path.name}")
                save_topic(topic, fields={"membership": Topic.Membership.AUTO})
            trained = relevance.retrain(topic.pk)  # and the mark cleared
            if trained is None:  # a seed topic that is not active
                continue
            model = trained[1]
            awaiting = awaiting_counts([topic.pk]).get(topic.pk, 0)
            pins = sum(relevant[arxiv_id] for arxiv_id in papers)
            self.stdout.write(
                f"{topic.name}: {pins} pins and {len(papers) - pins} exclusions from"
                f" {path.name}; model {model_summary(model, awaiting=awaiting)}"
            )

    def create_users(self) -> None:
        admin = self.ensure_user(*DEMO_ADMIN, is_staff=True, is_superuser=True)
        reader = self.ensure_user(*DEMO_READER)
        for topic in Topic.objects.filter(slug__in=DEMO_FOLLOWS):
            set_following(reader, topic, True)
        with transaction.atomic():  # one training of their model, at the commit
            self.seed_library(reader)
        # Their model, should it be missing (a no-op when it is up to date).
        recommend.train(reader.pk)
        # The reader has been around since the corpus began, so the digests of
        # its weeks are theirs to get (`manage.py digests run --at ...`).
        User.objects.filter(pk=reader.pk, date_joined__gt=DEMO_JOINED).update(
            date_joined=DEMO_JOINED
        )
        admin_url = settings.MOMENTUM_SITE_URL + reverse("admin:index")
        self.stdout.write(
            self.style.SUCCESS(
                f"\nDemo admin:  {admin.email} / {DEMO_ADMIN[1]}  ({admin_url})"
                f"\nDemo reader: {reader.email} / {DEMO_READER[1]}\n"
            )
        )
        self.show_digest_commands(reader)

    def seed_library(self, reader: User) -> None:
        """The demo reader's own signal, so that ratings, authors and the
        exports show at once: saves and thumbs up among the newest papers of the
        largest topic they follow, thumbs down in the largest they don't, and the
        first author of their newest save followed. Once they have saved or
        rated anything it is theirs and left alone."""
        if reader.saved_papers.exists() or reader.ratings.exists():
            return
        by_size = Topic.objects.annotate(size=Count("paper_topics")).order_by(
            "-size", "slug"
        )
        followed = by_size.filter(slug__in=DEMO_FOLLOWS).first()
        other = by_size.exclude(slug__in=DEMO_FOLLOWS).first()
        if followed is None or other is None:
            return
        liked = list(topic_papers(followed)[: DEMO_SAVES + DEMO_UPS])
        disliked = topic_papers(other).exclude(pk__in=[p.pk for p in liked])
        for paper in liked[:DEMO_SAVES]:
            set_saved(reader, paper, True)
        for paper in liked[DEMO_SAVES:]:
            set_rating(reader, paper, Rating.UP)
        for paper in disliked[:DEMO_DOWNS]:
            set_rating(reader, paper, Rating.DOWN)
        if liked and (first := liked[0].authorships.order_by("position").first()):
            set_following_author(reader, first.author, True)

    def show_digest_commands(self, reader: User) -> None:
        last_day = latest_announcement_day()
        if last_day is None:
            return
        # The Monday after the corpus's last announcement day, after the
        # default send time (Mondays 08:00 UTC).
        monday = last_day + timedelta(days=7 - last_day.weekday())
        at = f"{monday.isoformat()}T09:00Z"
        folder = getattr(settings, "EMAIL_FILE_PATH", None)
        manage = manage_command()
        self.stdout.write(
            "The demo reader's digest for the corpus's last week:\n"
            f"  {manage} digests preview {reader.email} --at {at}\n"
            f"  {manage} digests run --at {at}"
            + (f"   (writes it to {folder}/)" if folder else "")
        )

    def ensure_user(self, email: str, password: str, **flags: bool) -> User:
        user, created = User.objects.get_or_create(email=email, defaults=flags)
        if created:
            user.set_password(password)
            user.save()
        # allauth requires a verified address to log in.
        user.emailaddress_set.update_or_create(  # type: ignore[attr-defined]  # allauth
            email=email, defaults={"verified": True, "primary": True}
        )
        return user
