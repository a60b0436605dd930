from __future__ import annotations

import gzip
import itertools
import time
from pathlib import Path

import pytest
from django.db import transaction

from papers.ingest.runs import ingest_entries
from papers.ingest.runs import ingest_path
from papers.ingest.runs import ingest_tagger
from papers.ingest.upsert import upsert_records
from papers.models import Category
from papers.models import IngestRun
from papers.models import Paper
from tests.concurrency import in_thread
from tests.concurrency import retag_deciding_slowly
from tests.concurrency import waiting_on_a_lock
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.curation import merge_topics
from topics.models import PaperTopic
from topics.models import Topic
from topics.models import TopicExclusion
from topics.retagging import run_retag
from topics.seed import load_topics
from topics.tagging import IngestTagger
from topics.tagging import retag_all
from topics.tagging import retag_topics
from topics.tagging import tag_papers

pytestmark = pytest.mark.django_db


DEMO_CORPUS = (
    Path(__file__).parents[2] / "data" / "demo" / "arxiv-2026-06-07.snapshot.jsonl.gz"
)


def ingest(*records) -> list[int]:
    return upsert_records(records).changed_ids


def tags() -> set[tuple[str, str, str]]:
    return set(
        PaperTopic.objects.values_list("topic__slug", "paper__arxiv_id", "source")
    )


def test_tags_matching_papers_with_the_terms_that_matched():
    topic = make_topic()
    ids = ingest(
        paper_record("2606.00001", abstract="Reinforcement learning for LLM agents."),
        paper_record("2606.00002", abstract="Protein folding with diffusion."),
    )

    result = tag_papers(ids)

    tag = PaperTopic.objects.get()
    assert (tag.topic, tag.paper.arxiv_id, tag.source) == (topic, "2606.00001", "rule")
    assert sorted(tag.matched_terms) == ['abs:"reinforcement learning"', "abs:agent"]
    assert (result.papers, result.added, result.removed) == (2, 1, 0)


def test_tagging_twice_changes_nothing():
    make_topic()
    ids = ingest(paper_record(abstract="Reinforcement learning agents."))
    tag_papers(ids)

    result = tag_papers(ids)

    assert (result.added, result.removed) == (0, 0)
    assert PaperTopic.objects.count() == 1


def test_categories_in_scope_limit_the_topic():
    topic = make_topic()
    topic.categories.add(Category.objects.create(code="cs.CL"))
    ids = ingest(
        paper_record(
            "2606.00001", abstract="reinforcement learning agent", categories=("cs.LG",)
        ),
        paper_record(
            "2606.00002", abstract="reinforcement learning agent", categories=("cs.CL",)
        ),
    )

    tag_papers(ids)

    assert tags() == {("rl-for-llm-agents", "2606.00002", "rule")}


def test_changed_rule_retags_exactly_the_right_papers():
    topic = make_topic(rule="ti:agent")
    ingest(
        paper_record("2606.00001", title="An agent"),
        paper_record("2606.00002", title="A robot"),
        paper_record("2606.00003", title="An agent and a robot"),
    )
    retag_topics([topic])
    topic.rule = "ti:robot"
    topic.save()

    result = retag_topics([topic])

    assert {arxiv_id for _, arxiv_id, _ in tags()} == {"2606.00002", "2606.00003"}
    assert (result.added, result.removed) == (1, 1)


def test_pins_survive_retagging_and_exclusions_always_win():
    topic = make_topic(rule="ti:agent")
    ingest(
        paper_record("2606.00001", title="An agent"),
        paper_record("2606.00002", title="A robot"),
    )
    pinned = Paper.objects.get(arxiv_id="2606.00002")
    excluded = Paper.objects.get(arxiv_id="2606.00001")
    PaperTopic.objects.create(topic=topic, paper=pinned, source=PaperTopic.Source.PIN)
    TopicExclusion.objects.create(topic=topic, paper=excluded)

    retag_topics([topic])

    assert tags() == {("rl-for-llm-agents", "2606.00002", "pin")}


def test_a_rule_that_no_longer_parses_keeps_the_topics_papers():
    """A rule stored before a release refused what it holds (an escape, since
    control characters are refused) is not matched; its topic keeps its papers
    through ingest and re-tags alike, and other topics are tagged as usual."""
    broken = make_topic(rule="ti:agent")
    other = make_topic("Robots", rule="ti:robot")
    retag_topics([broken, other])
    tag_papers(ingest(paper_record("2606.00001", title="An agent")))
    Topic.objects.filter(pk=broken.pk).update(rule="ti:agent\x1b")
    held = tags()

    tag_papers(ingest(paper_record("2606.00002", title="An agent and a robot")))
    run_retag(broken.pk, other.pk)
    retag_all()

    assert tags() == held | {("robots", "2606.00002", "rule")}


def test_a_rule_that_no_longer_parses_is_logged_once_a_pass(caplog):
    topic = make_topic(rule="ti:agent")
    Topic.objects.filter(pk=topic.pk).update(rule="ti:agent\x1b")
    ids = ingest(
        paper_record("2606.00001", title="An agent"),
        paper_record("2606.00002", title="Another agent"),
    )

    with caplog.at_level("WARNING", logger="topics.tagging"):
        tag_papers(ids)

    [record] = [r for r in caplog.records if r.name == "topics.tagging"]
    assert record.levelname == "WARNING"
    assert record.getMessage() == (
        "topic rl-for-llm-agents is not tagged: its rule no longer parses "
        "(a control character (U+001B) cannot be in a rule at position 8); "
        "its papers are kept as they are until a curator corrects it"
    )


def test_a_newer_version_that_no_longer_matches_loses_its_tag():
    make_topic(rule="ti:agent")
    tag_papers(ingest(paper_record(version=1, title="An agent")))

    tag_papers(ingest(paper_record(version=2, title="A robot")))

    assert tags() == set()


def test_inactive_topics_do_not_tag():
    make_topic(rule="ti:agent", is_active=False)

    tag_papers(ingest(paper_record(title="An agent")))

    assert tags() == set()


def stored_tags() -> set[tuple[int, int, tuple[str, ...]]]:
    return {
        (topic_id, paper_id, tuple(terms))
        for topic_id, paper_id, terms in PaperTopic.objects.values_list(
            "topic_id", "paper_id", "matched_terms"
        )
    }


def test_ingest_tags_from_records_exactly_as_from_the_stored_papers(tmp_path):
    # IngestTagger matches the parsed records beside the upsert; the result must
    # be what matching the stored papers gives (what a re-tag does).
    load_topics()
    path = tmp_path / "demo-head.jsonl"
    with gzip.open(DEMO_CORPUS, "rt") as corpus:
        path.write_text("".join(itertools.islice(corpus, 1500)))

    run = ingest_path(path, tagger=IngestTagger())
    stored = stored_tags()

    assert run.new_count == 1500
    assert len(stored) > 200
    assert retag_all().added == 0
    assert retag_all().removed == 0
    assert stored_tags() == stored


def test_ingest_tagger_reads_back_papers_only_cross_listed():
    topic = make_topic(rule="cat:cs.RO", slug="robots")
    upsert_records([paper_record("2606.00001", categories=("cs.LG",))])
    cross = paper_record("2606.00001", categories=("cs.LG", "cs.RO"))

    run = IngestRun.objects.create(source="listing")
    ingest_entries(run, [cross], tagger=IngestTagger())

    assert topic.paper_topics.count() == 1


def store_page(run, tagger, records) -> None:
    """One page of a run, as papers.ingest.harvest writes it."""
    with transaction.atomic():
        ingest_entries(run, records, tagger=tagger)
        run.save()


@pytest.mark.django_db(transaction=True)
def test_a_runs_pages_after_a_rule_edit_are_tagged_by_the_new_rule():
    """A multi-page run (OAI, an API query, a backfill) kept the rules it began
    with: the finished re-tag was undone for every later page."""
    topic = make_topic("Nets", rule="ti:network", slug="nets")
    tagger = ingest_tagger()
    run = IngestRun.objects.create(source="oai")
    store_page(run, tagger, [paper_record("2606.00001", title="A network")])
    Topic.objects.filter(pk=topic.pk).update(rule="ti:graph")
    run_retag(topic.pk)

    store_page(
        run,
        tagger,
        [
            paper_record("2606.00002", title="Another network"),
            paper_record("2606.00003", title="A graph"),
        ],
    )

    tagged = PaperTopic.objects.filter(topic=topic)
    assert list(tagged.values_list("paper__arxiv_id", flat=True)) == ["2606.00003"]


@pytest.mark.django_db(transaction=True)
def test_a_merge_between_two_pages_of_a_run_does_not_fail_it():
    """The next page tagged into the topic merged away: a foreign key error at
    its commit, and the run failed."""
    kept = make_topic("Graphs", rule="ti:graph", slug="graphs")
    gone = make_topic("Nets", rule="ti:network", slug="nets")
    tagger = ingest_tagger()
    run = IngestRun.objects.create(source="oai")
    store_page(run, tagger, [paper_record("2606.00001", title="A network")])
    merge_topics(kept, [gone])

    store_page(run, tagger, [paper_record("2606.00002", title="Another network")])

    tagged = PaperTopic.objects.filter(topic=kept)
    assert set(tagged.values_list("paper__arxiv_id", flat=True)) == {
        "2606.00001",
        "2606.00002",
    }


@pytest.mark.django_db(transaction=True)
def test_an_ingest_page_and_a_retag_chunk_do_not_deadlock():
    """A page locks its papers, then waits for a tag the re-tag holds; the
    re-tag then inserts a tag pointing at one of those papers: its key check
    must not wait on the page's lock."""
    upsert_records(
        [
            paper_record("2606.00001", 1, title="A network"),
            paper_record("2606.00002", 1, title="Another network"),
        ]
    )
    first = Paper.objects.order_by("pk").first()
    topic = make_topic("Nets", rule="ti:network", slug="nets")
    # The first holds its rule tag; the second, matched too, is not tagged yet.
    PaperTopic.objects.create(
        topic=topic, paper=first, source="rule", matched_terms=["ti:network"]
    )
    errors: list[Exception] = []

    def ingest_page():
        run = IngestRun.objects.create(source="oai")
        with transaction.atomic():
            ingest_entries(
                run,
                [
                    paper_record("2606.00001", 2, title="A network, v2"),
                    paper_record("2606.00002", 2, title="Another network, v2"),
                ],
                tagger=IngestTagger(),
            )

    # The re-tag holds the lock on the first's tag.
    retagging, go = retag_deciding_slowly(topic.pk, errors)
    ingesting = in_thread(ingest_page, errors)
    for _ in range(100):  # the page holds both papers, and waits for the first's tag
        if waiting_on_a_lock():
            break
        time.sleep(0.05)
    go.set()  # the re-tag now inserts the second's tag: its key check
    retagging.join(30)
    ingesting.join(30)

    assert errors == []
