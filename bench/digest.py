"""bench/digest: digests built and rendered per second, and queries per batch.

    .venv/bin/python -m bench.digest [--users 10000] [--papers 100000] [--batch 500]

Fills a scratch PostgreSQL database (momentum_bench_digest) with --papers papers
over 16 weeks in 50 topics (three authors each, the first with an affiliation)
and --users readers following 5 topics each. Then, for every reader, plans and
shapes their weekly digest in batches of --batch (notifications.plan and
notifications.content, the code the outbox runs) and renders the
subject/text/HTML triplet (notifications.mailer.render_digest). Prints:

- queries per batch at 100, 500 and 2,000 users (target: the same for all);
- digests built per second (plan + shape) and rendered per second from the
  prebuilt contents, and their ratio (target: building at least half as fast as
  rendering the same templates from prebuilt data).

Nothing is sent and nothing is recorded: this measures content, not SMTP.
"""

from __future__ import annotations

import argparse
import os
import random
from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import timedelta

from bench.common import Timer
from bench.common import setup_django

DATABASE = os.environ.get(
    "BENCH_DIGEST_DATABASE_URL",
    "postgres://postgres@127.0.0.1:5432/momentum_bench_digest",
)
LAST_DAY = date(2026, 7, 17)
TOPICS = 50
FOLLOWS = 5


def fill(users: int, papers: int) -> None:
    from allauth.account.models import EmailAddress

    from accounts.models import User
    from papers.models import Affiliation
    from papers.models import Author
    from papers.models import Authorship
    from papers.models import Paper
    from topics.models import Follow
    from topics.models import PaperTopic
    from topics.models import Topic
    from topics.momentum import refresh_momentum

    rng = random.Random(7)
    topics = Topic.objects.bulk_create(
        Topic(name=f"Topic {n}", slug=f"topic-{n}", rule=f"ti:t{n}")
        for n in range(TOPICS)
    )
    authors = Author.objects.bulk_create(
        Author(name=f"Author {n}", key=f"author {n}") for n in range(20_000)
    )
    affiliations = Affiliation.objects.bulk_create(
        Affiliation(name=f"University {n}") for n in range(500)
    )
    for start in range(0, papers, 10_000):
        batch = Paper.objects.bulk_create(
            Paper(
                arxiv_id=f"26{n // 100_000:02d}.{n % 100_000:05d}",
                version=1,
                title=f"A study of topic words number {n}",
                abstract="We propose a method. It works well on benchmarks. " * 4,
                author_names=", ".join(
                    f"Author {rng.randrange(20_000)}" for _ in "abc"
                ),
                first_announced=LAST_DAY - timedelta(days=rng.randrange(112)),
            )
            for n in range(start, min(start + 10_000, papers))
        )
        PaperTopic.objects.bulk_create(
            PaperTopic(paper=paper, topic=topic)
            for paper in batch
            for topic in rng.sample(topics, rng.choice([1, 1, 2]))
        )
        authorships = Authorship.objects.bulk_create(
            Authorship(paper=paper, author=rng.choice(authors), position=position)
            for paper in batch
            for position in range(3)
        )
        Authorship.affiliations.through.objects.bulk_create(
            Authorship.affiliations.through(
                authorship=authorship, affiliation=rng.choice(affiliations)
            )
            for authorship in authorships
            if authorship.position == 0
        )
    refresh_momentum()
    readers = User.objects.bulk_create(
        User(
            email=f"reader{n}@example.com", date_joined=datetime(2026, 1, 1, tzinfo=UTC)
        )
        for n in range(users)
    )
    EmailAddress.objects.bulk_create(
        EmailAddress(user=user, email=user.email, verified=True, primary=True)
        for user in readers
    )
    Follow.objects.bulk_create(
        Follow(user=user, topic=topic)
        for user in readers
        for topic in rng.sample(topics, FOLLOWS)
    )


def requests(users):
    from notifications.digest import request_for

    period = LAST_DAY + timedelta(days=(0 - LAST_DAY.weekday()) % 7)
    due = datetime(period.year, period.month, period.day, 8, tzinfo=UTC)
    return [request_for(user, period, due) for user in users]


def build(users, batch: int):
    from notifications.content import shape_digests
    from notifications.plan import plan_digests

    contents = []
    for start in range(0, len(users), batch):
        chunk = requests(users[start : start + batch])
        plans = plan_digests(chunk)
        contents += shape_digests(
            [plans[r.user_id] for r in chunk], "https://momentum.example"
        )
    return contents


def queries_per_batch(users, size: int) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        build(users[:size], batch=size)
    return len(queries)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=500)
    args = parser.parse_args()
    setup_django(fresh_database=True, url=DATABASE)

    from accounts.models import User
    from notifications.mailer import render_digest

    with Timer() as filling:
        fill(args.users, args.papers)
    print(
        f"filled {args.papers:,} papers, {args.users:,} readers x {FOLLOWS} topics "
        f"in {filling.seconds:.0f} s"
    )
    users = list(User.objects.select_related("digest").order_by("pk"))
    for size in (100, 500, 2000):
        print(
            f"queries per batch of {size:>5,} users: {queries_per_batch(users, size)}"
        )

    with Timer() as building:
        contents = build(users, args.batch)
    with Timer() as rendering:
        for user, content in zip(users, contents, strict=True):
            render_digest(user=user, content=content, digest_id=1)
    papers = sum(content.paper_count for content in contents)
    built = len(contents) / building.seconds
    rendered = len(contents) / rendering.seconds
    print(f"digests: {len(contents):,}, {papers / len(contents):.1f} papers each")
    print(f"built    {built:8.0f} digests/s (plan + shape, batches of {args.batch})")
    print(f"rendered {rendered:8.0f} digests/s (subject + text + HTML, prebuilt)")
    print(f"build / render speed: {built / rendered:.2f} (target >= 0.5)")


if __name__ == "__main__":
    main()
