"""bench/ingest: parse + upsert + tag, against feedparser parsing the same bytes.

    .venv/bin/python -m bench.ingest [--entries 50000] [--page 1000] [--model-topics 5]

Renders the demo corpus as arXiv query-API Atom pages (repeated with distinct ids
until there are --entries of them), then in one run times
  - baseline: feedparser.parse over every page (parse only);
  - pipeline: Momentum's parse (one hardened XML pass), bulk
    upsert and tagging against the 34 seed topics, on PostgreSQL;
and prints both rates and their ratio (target: pipeline >= 0.6 of baseline), and
the process's peak resident memory after a pass over a fifth of the entries and
after the full pass (target: it does not grow with the number of entries). Then
--model-topics seed topics get a relevance model (trained on their rule, automatic
tags), and a last pass shows what scoring every new paper with them costs.
"""

from __future__ import annotations

import argparse
import itertools
import resource
from collections.abc import Iterator
from xml.sax.saxutils import escape

from bench.common import Timer
from bench.common import corpus_rows
from bench.common import reset_papers
from bench.common import setup_django

ATOM_HEAD = (
    "<?xml version='1.0' encoding='UTF-8'?>\n"
    '<feed xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" '
    'xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns="http://www.w3.org/2005/Atom">\n'
    "<id>https://arxiv.org/api/bench</id><title>arXiv Query: bench</title>"
    "<updated>2026-07-31T00:00:00Z</updated>"
    "<opensearch:totalResults>{total}</opensearch:totalResults>"
    "<opensearch:startIndex>{start}</opensearch:startIndex>"
    "<opensearch:itemsPerPage>{size}</opensearch:itemsPerPage>\n"
)


def render_entry(row: dict, arxiv_id: str) -> str:
    """One entry in the layout of the 2025/26 query API."""
    from papers.ingest.authors import split_authors
    from papers.ingest.records import rfc2822_utc

    versions = row["versions"]
    published = rfc2822_utc(versions[0]["created"]).strftime("%Y-%m-%dT%H:%M:%SZ")
    updated = rfc2822_utc(versions[-1]["created"]).strftime("%Y-%m-%dT%H:%M:%SZ")
    version = versions[-1]["version"]
    authors = "".join(
        f"<author><name>{escape(a.name)}</name></author>"
        for a in split_authors(row["authors"])
    )
    categories = "".join(
        f'<category term="{c}" scheme="http://arxiv.org/schemas/atom"/>'
        for c in row["categories"].split()
    )
    return (
        f"<entry><id>http://arxiv.org/abs/{arxiv_id}{version}</id>"
        f"<title>{escape(row['title'])}</title><updated>{updated}</updated>"
        f'<link href="https://arxiv.org/abs/{arxiv_id}{version}" rel="alternate"/>'
        f"<summary>{escape(row['abstract'])}</summary>{categories}"
        f"<published>{published}</published>"
        f'<arxiv:primary_category term="{row["categories"].split()[0]}"/>'
        f"{authors}</entry>\n"
    )


def pages(entries: int, size: int) -> Iterator[bytes]:
    rows = list(itertools.islice(corpus_rows(), entries))
    numbered = (
        (rows[n % len(rows)], f"{2601 + n // len(rows):04d}.{n % len(rows):05d}v")
        for n in range(entries)
    )
    for start in range(0, entries, size):
        chunk = itertools.islice(numbered, size)
        body = ATOM_HEAD.format(total=entries, start=start, size=size)
        body += "".join(render_entry(row, arxiv_id) for row, arxiv_id in chunk)
        yield (body + "</feed>\n").encode()


def baseline(bodies: list[bytes]) -> float:
    import feedparser

    with Timer() as timer:
        count = sum(len(feedparser.parse(body).entries) for body in bodies)
    return count / timer.seconds


def pipeline(bodies: list[bytes]) -> tuple[float, int]:
    from papers.ingest.arxiv_api import parse_api_response
    from papers.ingest.runs import ingest_entries
    from papers.models import IngestRun
    from topics.tagging import IngestTagger
    from topics.tagging import active_topic_rules

    rules = active_topic_rules()
    run = IngestRun.objects.create(source="bench")
    with Timer() as timer:
        for body in bodies:
            ingest_entries(
                run,
                parse_api_response(body).records,
                tagger=IngestTagger(rules),
            )
    assert run.rejected_count == 0, run.errors[:3]
    return run.new_count / timer.seconds, peak_rss()


def train_models(count: int) -> list[str]:
    """Give `count` seed topics a model trained on their rule and automatic tags,
    so that ingest scores every new paper in their scope."""
    from django.test.utils import override_settings

    from topics import relevance
    from topics.models import Topic

    topics = list(Topic.objects.filter(is_active=True).order_by("slug")[:count])
    # No curator decisions in the bench: the rule's matches are the positives.
    with override_settings(MOMENTUM_MODEL_MIN_DECISIONS=0):
        for topic in topics:
            topic.membership = Topic.Membership.AUTO
            topic.save(update_fields=["membership"])
            relevance.train(topic, force=True)
    return [topic.slug for topic in topics]


def peak_rss() -> int:
    """The process's peak resident memory so far, in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", type=int, default=50_000)
    parser.add_argument("--page", type=int, default=1000)
    parser.add_argument("--model-topics", type=int, default=5)
    args = parser.parse_args()
    setup_django()
    from topics.seed import load_topics

    load_topics()
    bodies = list(pages(args.entries, args.page))
    small = bodies[: max(1, len(bodies) // 5)]

    parse_rate = baseline(bodies)
    _, small_peak = pipeline(small)
    reset_papers()
    rate, peak = pipeline(bodies)
    mib = 1 << 20
    size = sum(map(len, bodies)) / mib
    print(
        f"entries: {args.entries:,} in pages of {args.page:,} ({size:.0f} MiB of Atom)"
    )
    print(f"baseline  feedparser.parse only      {parse_rate:9,.0f} entries/s")
    print(f"pipeline  parse + upsert + tag (PG)  {rate:9,.0f} papers/s")
    print(
        f"ratio     pipeline / baseline        {rate / parse_rate:9.2f}"
        "  (target >= 0.60)"
    )
    print(
        f"peak RSS  {small_peak / mib:.0f} MiB after "
        f"{len(small) * args.page:,} entries, "
        f"{peak / mib:.0f} MiB after {args.entries:,} (target: flat)"
    )
    if args.model_topics:
        slugs = train_models(args.model_topics)
        reset_papers()
        model_rate, _ = pipeline(bodies)
        print(
            f"models    pipeline + {len(slugs)} model topics  {model_rate:9,.0f}"
            f" papers/s  ({model_rate / rate:.2f} of rules only: {', '.join(slugs)})"
        )


if __name__ == "__main__":
    main()
