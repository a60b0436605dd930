"""bench/pages' fill: a scratch PostgreSQL database of the demo corpus's papers
recombined under new ids, the seed topics plus generated ones, tagged, with
momentum; kept and reused while its signature matches (see bench.pages)."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import random
import re
import subprocess
import sys
from collections.abc import Iterator

from bench.common import BASE_DIR
from bench.common import BENCH_DATABASE
from bench.common import DEMO_CORPUS
from bench.common import Timer
from bench.common import corpus_rows
from bench.common import setup_django

SEED_TOPICS = BASE_DIR / "data" / "demo" / "topics.json"
# Bump when the fill below changes what it stores.
FILL_VERSION = 1
UPSERT_BATCH = 2000


def signature(papers: int, topics: int) -> str:
    """What the filled database holds; a match means it can be reused as is."""
    facts = {
        "fill": FILL_VERSION,
        "papers": papers,
        "topics": topics,
        "corpus": DEMO_CORPUS.stat().st_size,
        "seed": hashlib.sha256(SEED_TOPICS.read_bytes()).hexdigest(),
    }
    digest = hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()
    return f"bench.pages {digest[:16]} {papers} papers {topics} topics"


def database_url(papers: int, topics: int) -> str:
    """One scratch database per size, so a small smoke run keeps the full one."""
    return os.environ.get("BENCH_PAGES_DATABASE_URL") or (
        BENCH_DATABASE.rsplit("/", 1)[0] + f"/momentum_bench_pages_p{papers}_t{topics}"
    )


def _psql(url: str, sql: str) -> str:
    server = url.rsplit("/", 1)[0] + "/postgres"
    done = subprocess.run(
        ["psql", server, "-tAc", sql], check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def stored_signature(url: str) -> str:
    """The signature the database was filled with ('' if none or no database)."""
    name = url.rsplit("/", 1)[1]
    return _psql(
        url,
        "SELECT coalesce(shobj_description(oid, 'pg_database'), '') "
        f"FROM pg_database WHERE datname = '{name}'",
    )


def store_signature(url: str, value: str) -> None:
    name = url.rsplit("/", 1)[1]
    _psql(url, f"COMMENT ON DATABASE {name} IS '{value}'")


def synthetic_id(copy: int, number: int) -> str:
    """A distinct arXiv id per (copy, row): YYMM from 1001 on, never a real pair."""
    return f"{10 + copy // 12:02d}{copy % 12 + 1:02d}.{number:05d}"


def recombined_lines(papers: int) -> Iterator[str]:
    """Snapshot lines for `papers` papers from the demo corpus.

    The first copy is the corpus as is; each later copy keeps a paper's
    abstract, authors, categories and dates and takes another paper's title.
    """
    rows = list(corpus_rows())
    for n in range(papers):
        copy, number = divmod(n, len(rows))
        row = rows[number]
        title = rows[(number + copy * 7919) % len(rows)]["title"]
        yield json.dumps({**row, "id": synthetic_id(copy, number), "title": title})


def seed_phrases() -> list[str]:
    """The quoted phrases of the seed topics' rules, in first-seen order."""
    seen: dict[str, None] = {}
    for entry in json.loads(SEED_TOPICS.read_text()):
        for phrase in re.findall(r'"([^"]{4,})"', entry["rule"]):
            seen.setdefault(phrase, None)
    return list(seen)


def generated_rules(count: int, seed: int = 11) -> list[tuple[str, str]]:
    """(name, rule) for `count` topics whose rules recombine the seed phrases."""
    from topics.rules import RuleError
    from topics.rules import compile_rule

    rng = random.Random(seed)
    phrases = seed_phrases()
    shapes = [
        '"{a}" OR "{b}" OR "{c}"',
        'ti:("{a}" OR "{b}") OR abs:"{c}"',
        '("{a}" OR "{b}" OR "{c}") ANDNOT ti:survey',
        '("{a}" OR "{b}") AND (LLM OR "{c}" OR learning)',
        'abs:"{a}" OR ti:"{b}" OR "{c}" OR "{d}"',
    ]
    rules: list[tuple[str, str]] = []
    while len(rules) < count:
        a, b, c, d = rng.sample(phrases, 4)
        rule = rng.choice(shapes).format(a=a, b=b, c=c, d=d)
        try:
            compile_rule(rule)
        except RuleError:
            continue
        rules.append((f"{a.capitalize()} and {b}"[:100], rule))
    return rules


def fill(papers: int, topics: int) -> None:
    """Topics, papers, tags and momentum, through the real pipeline's functions."""
    from django.db import connection
    from django.utils import timezone
    from django.utils.text import slugify

    from papers.ingest.records import Rejected
    from papers.ingest.snapshot import iter_snapshot
    from papers.ingest.upsert import upsert_records
    from papers.models import IngestRun
    from topics.models import Topic
    from topics.momentum import refresh_momentum
    from topics.seed import load_topics
    from topics.tagging import retag_all

    with Timer() as timer:
        seeded = load_topics()
        for number, (name, rule) in enumerate(
            generated_rules(max(topics - len(seeded), 0)), 1
        ):
            Topic.objects.create(
                name=f"{name} ({number})",
                slug=f"bench-{number:03d}-{slugify(name)}"[:120],
                description="Generated by bench.pages from the seed rules' phrases.",
                rule=rule,
            )
    print(f"  topics    {Topic.objects.count():9,}  in {timer.seconds:6.1f} s")

    run = IngestRun.objects.create(source="bench.pages", format="snapshot")
    with Timer() as timer:
        records = iter_snapshot(recombined_lines(papers))
        while batch := list(itertools.islice(records, UPSERT_BATCH)):
            rejected = [r for r in batch if isinstance(r, Rejected)]
            assert not rejected, rejected[:3]
            result = upsert_records(batch)
            run.fetched_count += len(batch)
            run.new_count += len(result.new_ids)
    run.status = IngestRun.Status.SUCCEEDED
    run.finished_at = timezone.now()
    run.save()
    print(f"  papers    {run.new_count:9,}  in {timer.seconds:6.1f} s")

    with Timer() as timer:
        tagged = retag_all()
    print(f"  tagging   {tagged.papers:9,}  in {timer.seconds:6.1f} s")
    with Timer() as timer:
        refresh_momentum()
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    print(f"  momentum, VACUUM ANALYZE   in {timer.seconds:6.1f} s")


def open_kept_database(url: str) -> None:
    """Set Django up on a filled database, kept from an earlier run."""
    setup_django(fresh_database=False, url=url)
    # Migrations added since the fill apply to the kept data, as in production.
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v0"],
        cwd=BASE_DIR,
        check=True,
        env=os.environ,
    )


def prepare_database(url: str, papers: int, topics: int, refill: bool) -> None:
    """Reuse the filled database when its signature matches, else fill it anew."""
    wanted = signature(papers, topics)
    name = url.rsplit("/", 1)[1]
    if not refill and stored_signature(url) == wanted:
        print(f"database: reusing {name} ({wanted})")
        open_kept_database(url)
        return
    print(f"database: filling {name}")
    setup_django(fresh_database=True, url=url)
    fill(papers, topics)
    store_signature(url, wanted)


# PAGES
# ------------------------------------------------------------------------------


def largest_seed_topic() -> tuple[str, int]:
    from django.db.models import Count

    from topics.models import Topic

    seed = [entry["slug"] for entry in json.loads(SEED_TOPICS.read_text())]
    topic = (
        Topic.objects.filter(slug__in=seed, is_active=True)
        .annotate(n=Count("paper_topics"))
        .order_by("-n", "slug")
        .first()
    )
    assert topic is not None, "no seed topic"
    return topic.slug, topic.n
