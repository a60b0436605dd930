"""bench/heavy_reader: a reader who follows nearly everything, beside one who
follows five topics, on the 100,000 papers bench.scale filled.

    PYTHONPATH=. .venv/bin/python -m bench.heavy_reader [--database momentum_scale_100k]
        [--rounds 5]

The home feed rendered anew (cached pages dropped before each request, as every
ingest and curation makes a reader's feed cold; paper rows kept) and the API's
recommendations without a model (the feed, newest first, 25 and 100 a page),
in process, median of --rounds, for two readers made in a transaction rolled
back after: one following five topics and one following 150 of the 200 topics
and 40 authors, with 3,000 saved papers. Prints each and the heavy reader's
over the light one's (target: <= 2x: what a reader follows should not make
their pages slow).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from bench.common import setup_django

if TYPE_CHECKING:
    from accounts.models import User

PAGES = {
    "home feed": "/",
    "home feed, page 2": "/?page=2",
    "API feed, 25": "/api/v1/me/recommendations/",
    "API feed, 100": "/api/v1/me/recommendations/?page_size=100",
}
HEAVY_TOPICS = 150
HEAVY_AUTHORS = 40
HEAVY_SAVES = 3000
LIGHT_TOPICS = 5


class RolledBack(Exception):
    """Ends the transaction the readers were made in."""


def forget_pages() -> None:
    """Drop every cached page and API body, as an ingest or a curation makes
    them cold, and
    keep the fragments (paper rows, what readers follow), which they leave."""
    import redis
    from django.conf import settings

    client = redis.Redis.from_url(settings.CACHES["default"]["LOCATION"])
    for pattern in ("*pages:page:*", "*api:body:*"):
        for key in client.scan_iter(match=pattern, count=1000):
            client.delete(key)


def median_ms(request: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        forget_pages()
        start = time.perf_counter()
        request()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def reader(email: str, topics: int, authors: int, saves: int) -> User:
    """A reader following the first `topics` topics and `authors` authors,
    with `saves` saved papers among the newest."""
    from accounts.models import User
    from papers.models import Author
    from papers.models import AuthorFollow
    from papers.models import Paper
    from papers.models import SavedPaper
    from topics.models import Follow
    from topics.models import Topic

    user = User.objects.create_user(email, "bench-heavy-reader-1")
    followed = Topic.objects.filter(is_active=True).order_by("pk")[:topics]
    Follow.objects.bulk_create(Follow(user=user, topic=topic) for topic in followed)
    AuthorFollow.objects.bulk_create(
        AuthorFollow(user=user, author=author)
        for author in Author.objects.order_by("pk")[:authors]
    )
    newest = Paper.objects.order_by("-first_announced", "-pk")
    SavedPaper.objects.bulk_create(
        SavedPaper(user=user, paper_id=pk)
        for pk in newest.values_list("pk", flat=True)[: saves * 3 : 3]
    )
    return user


def measure(rounds: int) -> dict[str, dict[str, float]]:
    from django.conf import settings
    from django.db import transaction
    from django.test import Client
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    settings.ALLOWED_HOSTS = ["testserver"]
    results: dict[str, dict[str, float]] = {}
    try:
        with transaction.atomic():
            readers = {
                "light": reader("light@bench.invalid", LIGHT_TOPICS, 0, 0),
                "heavy": reader(
                    "heavy@bench.invalid", HEAVY_TOPICS, HEAVY_AUTHORS, HEAVY_SAVES
                ),
            }
            for kind, user in readers.items():
                site = Client()
                site.force_login(user)
                api = APIClient()
                api.credentials(
                    HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}"
                )
                for name, path in PAGES.items():
                    client = api if path.startswith("/api/") else site
                    client.get(path)  # the process's own first look-ups
                    results.setdefault(name, {})[kind] = median_ms(
                        partial(client.get, path), rounds
                    )
            raise RolledBack
    except RolledBack:
        pass
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database", default="momentum_scale_100k")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    setup_django(
        fresh_database=False,
        url=f"postgres://postgres@127.0.0.1:5432/{args.database}",
    )
    results = measure(args.rounds)
    print(
        f"bench.heavy_reader on {args.database}: rendered anew, median of "
        f"{args.rounds}, ms; heavy: {HEAVY_TOPICS} topics, {HEAVY_AUTHORS} authors, "
        f"{HEAVY_SAVES:,} saves; light: {LIGHT_TOPICS} topics (target <= 2x)"
    )
    print(f"{'':24}{'light':>10}{'heavy':>10}{'heavy/light':>14}")
    for name, figures in results.items():
        ratio = figures["heavy"] / figures["light"]
        print(
            f"{name:24}{figures['light']:10.1f}{figures['heavy']:10.1f}{ratio:13.2f}x"
        )


if __name__ == "__main__":
    main()
