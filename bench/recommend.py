"""bench/recommend: For you at scale, against issue 20's targets.

    PYTHONPATH=. .venv/bin/python -m bench.recommend [--database momentum_scale_100k]
        [--readers 10000] [--requests 200]

Runs on a database bench.scale filled (momentum_scale_100k by default: 100,000
papers; kept), migrated first; without stored paper vectors it builds similar
papers once (about 11 minutes at 100k), which stores them. Then:
  - training: a reader with 200 ratings (150 saves, 30 👍, 20 👎 among the papers
    of two seed topics), trained afresh five times (topics.recommend.train, the
    task's whole work: signal, vectors, fit, scoring the newest papers, storing);
  - reading, in this process through Django's test client (no network):
    GET /api/v1/me/recommendations/ warm (its body cached under the list's
    version) and built (a page at each cursor of the list, each asked once: the
    list, the papers, the reasons), and the home feed in For you order, p50 and
    p95, beside the minimal view measured the same way;
  - ingest: READERS readers with models (copies of models trained on different
    topics' papers), then a 10,000-paper batch (the demo corpus's texts, dated a
    week after the fill's newest, so every one is new) ingested as a worker does,
    then the pass that follows it: similar papers of the new papers (which stores
    their vectors) and the scoring of them for every reader (score_papers);
    the scoring's time over the ingest's is the ratio the target bounds.
The batch, the readers and their models are deleted afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from email.utils import format_datetime
from pathlib import Path

from bench.common import BASE_DIR
from bench.common import corpus_rows
from bench.common import setup_django
from bench.pages_fill import synthetic_id
from bench.pages_server import server_env

SERVER = "postgres://postgres@127.0.0.1:5432"
BATCH = 10_000
BATCH_COPY = 470  # an id prefix no fill reaches (bench.scale's 1M is 40 copies)
EMAIL = "bench-for-you-{}@momentum.localhost"
# The fill's newest papers are of July 2026.
NEXT_WEEK = datetime(2026, 8, 3, 8, tzinfo=UTC)


def timed(call) -> float:
    began = time.perf_counter()
    call()
    return time.perf_counter() - began


def latencies(client, paths: list[str], requests: int) -> tuple[float, float]:
    """p50 and p95 in ms of `requests` GETs of these paths in turn, after ten
    GETs of the first to warm up."""
    for _ in range(10):
        assert client.get(paths[0]).status_code == 200, paths[0]
    times = []
    for n in range(requests):
        path = paths[n % len(paths)]
        began = time.perf_counter()
        response = client.get(path)
        times.append((time.perf_counter() - began) * 1000)
        assert response.status_code == 200, path
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


def ensure_vectors() -> None:
    from papers.models import Paper
    from papers.models import PaperVector
    from topics import similar

    if PaperVector.objects.count() >= Paper.objects.count():
        return
    print("no stored vectors: building similar papers (stores them)...", flush=True)
    print(f"  {similar.build_all()}", flush=True)


def rated_reader():
    """A reader with 200 ratings: 150 saves and 30 👍 in one seed topic, 20 👎
    in another."""
    from accounts.models import User
    from papers.models import Rating
    from papers.models import SavedPaper
    from topics.models import PaperTopic

    user, _ = User.objects.get_or_create(email=EMAIL.format("rated"))
    liked = list(
        PaperTopic.objects.filter(topic__slug="rl-for-llm-agents")
        .order_by("-paper_id")
        .values_list("paper_id", flat=True)[:180]
    )
    disliked = list(
        PaperTopic.objects.filter(topic__slug="robot-learning")
        .exclude(paper_id__in=liked)
        .order_by("-paper_id")
        .values_list("paper_id", flat=True)[:20]
    )
    SavedPaper.objects.filter(user=user).delete()
    Rating.objects.filter(user=user).delete()
    SavedPaper.objects.bulk_create(
        SavedPaper(user=user, paper_id=pk) for pk in liked[:150]
    )
    Rating.objects.bulk_create(
        [Rating(user=user, paper_id=pk, value=Rating.UP) for pk in liked[150:]]
        + [Rating(user=user, paper_id=pk, value=Rating.DOWN) for pk in disliked]
    )
    return user


def training(user) -> list[float]:
    from papers.models import ReaderModel
    from topics import recommend

    times = []
    for _ in range(5):
        ReaderModel.objects.filter(user=user).delete()
        times.append(timed(lambda: recommend.train(user.pk)))
    return times


def readers_with_models(count: int) -> list[int]:
    """`count` readers, each with a copy of one of the models trained on the
    papers of a different topic (the largest topics, 30 saves each)."""
    from accounts.models import User
    from papers.models import ReaderModel
    from papers.models import SavedPaper
    from topics import recommend
    from topics.models import PaperTopic
    from topics.models import Topic

    topics = list(Topic.objects.order_by("-pk").values_list("pk", flat=True)[:20])
    models = []
    for n, topic_id in enumerate(topics):
        user, _ = User.objects.get_or_create(email=EMAIL.format(f"topic-{n}"))
        papers = PaperTopic.objects.filter(topic_id=topic_id).values_list(
            "paper_id", flat=True
        )
        SavedPaper.objects.bulk_create(
            [SavedPaper(user=user, paper_id=pk) for pk in papers[:30]],
            ignore_conflicts=True,
        )
        if (model := recommend.train(user.pk)) is not None:
            models.append(model)
    users = User.objects.bulk_create(
        User(email=EMAIL.format(f"copy-{n}")) for n in range(count - len(models))
    )
    ReaderModel.objects.bulk_create(
        ReaderModel(
            user=user,
            terms=model.terms,
            weights=model.weights,
            positives=model.positives,
            signal=model.signal,
            trained_at=model.trained_at,
            recommended=model.recommended,
            scores=model.scores,
            scored_at=model.scored_at,
        )
        for user, model in zip(users, models * (count // len(models) + 1), strict=False)
    )
    return [m.user_id for m in models] + [u.pk for u in users]


def ingest_and_score() -> dict[str, float]:
    from papers.ingest.runs import ingest_path
    from topics import recommend
    from topics import similar
    from topics.tagging import IngestTagger

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "batch.jsonl"
        with path.open("w") as out:
            for number, row in zip(range(BATCH), corpus_rows(), strict=False):
                row["id"] = synthetic_id(BATCH_COPY, number)
                # A week's new papers, after every paper of the fill: all of
                # them among the newest, so all are scored for every reader.
                created = NEXT_WEEK + timedelta(minutes=number)
                row["versions"] = [
                    {"version": "v1", "created": format_datetime(created)}
                ]
                row["update_date"] = created.date().isoformat()
                out.write(json.dumps(row) + "\n")
        began = time.perf_counter()
        run = ingest_path(path, tagger=IngestTagger())
        ingest = time.perf_counter() - began
    assert run.new_count == BATCH, (run.status, run.new_count)
    began = time.perf_counter()
    found = similar.update_similar()
    similar_s = time.perf_counter() - began
    began = time.perf_counter()
    scored = recommend.score_papers(found.vectorised)
    score_s = time.perf_counter() - began
    print(f"  {found}\n  {scored}", flush=True)
    return {"ingest_s": ingest, "similar_s": similar_s, "score_s": score_s}


def clean_up() -> None:
    from accounts.models import User
    from papers.models import IngestRun
    from papers.models import Paper

    prefix = synthetic_id(BATCH_COPY, 0).split(".")[0]
    Paper.objects.filter(arxiv_id__startswith=f"{prefix}.").delete()
    IngestRun.objects.filter(source__isnull=True, new_count=BATCH).delete()
    User.objects.filter(email__startswith="bench-for-you-").delete()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database", default="momentum_scale_100k")
    parser.add_argument("--readers", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    url = f"{SERVER}/{args.database}"
    os.environ.update(server_env(url))  # production settings, as bench.pages serves
    # Tasks the code sends (a training after a save, the pass after an ingest)
    # go to a queue no worker reads: this bench runs and times them itself.
    os.environ["CELERY_BROKER_URL"] = "redis://127.0.0.1:6379/13"
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v0"],
        cwd=BASE_DIR,
        check=True,
        env=os.environ,
    )
    setup_django(fresh_database=False, url=url)
    from django.test import Client
    from django.test.utils import setup_test_environment

    from papers.models import Paper
    from topics import recommend

    setup_test_environment()  # the test client's hosts and response capture
    clean_up()
    print(f"{Paper.objects.count():,} papers in {args.database}", flush=True)
    ensure_vectors()

    user = rated_reader()
    times = training(user)
    print(
        f"training a reader with 200 ratings: median {statistics.median(times):.2f} s "
        f"(min {min(times):.2f}, max {max(times):.2f}; target <= 2 s)",
        flush=True,
    )

    client = Client()
    client.force_login(user)
    api = "/api/v1/me/recommendations/"
    # A page at every cursor of the list: each address asked once, so built.
    ranked = recommend.recommended(user.pk)[: args.requests]
    cursors = [f"{api}?cursor={round(score * 1e6)}.{pk}" for pk, score in ranked]
    measured = [
        ("minimal view", latencies(client, ["/bench/minimal/"], args.requests)),
        ("API, warm", latencies(client, [api], args.requests)),
        ("API, built", latencies(client, cursors, len(cursors))),
        ("home, For you, warm", latencies(client, ["/?order=for-you"], args.requests)),
    ]
    minimal = measured[0][1][0]
    print("in process, p50 / p95 ms (ratio to the minimal view's p50):")
    for name, (p50, p95) in measured:
        print(f"  {name:22} {p50:7.1f} / {p95:7.1f}   {p50 / minimal:6.1f}x")
    print("  target: recommendations <= 50 ms", flush=True)

    began = time.perf_counter()
    readers = readers_with_models(args.readers)
    print(
        f"{len(readers):,} readers with models in {time.perf_counter() - began:.0f} s",
        flush=True,
    )
    try:
        result = ingest_and_score()
    finally:
        clean_up()
    ratio = result["score_s"] / result["ingest_s"]
    print(
        f"ingest of {BATCH:,} papers {result['ingest_s']:.1f} s; then similar papers "
        f"{result['similar_s']:.1f} s; scoring for {len(readers):,} readers "
        f"{result['score_s']:.1f} s = {ratio:.0%} of the ingest (target <= 20%)"
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory of this process {peak:.0f} MiB")


if __name__ == "__main__":
    main()
