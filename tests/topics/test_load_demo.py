"""load_demo again: nothing changed, nothing is tagged or trained again."""

from __future__ import annotations

import gzip
import io
import itertools
import json
from unittest import mock

import pytest
from django.core.cache import cache
from django.core.management import call_command

from accounts.models import User
from papers.models import AuthorFollow
from papers.models import ReaderModel
from papers.models import SimilarPaper
from topics import recommend
from topics import relevance
from topics import similar
from topics import tagging
from topics.management.commands import load_demo
from topics.management.commands.load_demo import manage_command
from topics.models import PaperTopic
from topics.models import Topic
from topics.seed import SEED_TOPICS
from topics.seed import load_topics

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(settings, tmp_path, monkeypatch):
    """load_demo on the first 1,000 papers of the shipped corpus, with the seed
    topics of a copy of topics.json that the test may edit."""
    seed = use_head_of_corpus(settings, tmp_path, monkeypatch, decisions={})
    call_command("load_demo", stdout=io.StringIO())
    return seed


def use_head_of_corpus(settings, tmp_path, monkeypatch, *, decisions):
    """load_demo set to read the first 1,000 papers of the shipped corpus, a
    copy of the seed topics (returned) and, as the labeled set of
    rl-for-llm-agents, these decisions (arXiv id: relevant)."""
    settings.DEBUG = True
    corpus = tmp_path / "head.jsonl.gz"
    with gzip.open(load_demo.DEMO_CORPUS, "rt") as lines:
        head = "".join(itertools.islice(lines, 1000))
    with gzip.open(corpus, "wt") as out:
        out.write(head)
    seed = tmp_path / "topics.json"
    seed.write_text(SEED_TOPICS.read_text())
    labeled = tmp_path / "labeled"
    labeled.mkdir()
    papers = [{"arxiv_id": id, "relevant": yes} for id, yes in decisions.items()]
    (labeled / "agents.json").write_text(
        json.dumps({"topic": "rl-for-llm-agents", "papers": papers})
    )
    monkeypatch.setattr(load_demo, "DEMO_CORPUS", corpus)
    monkeypatch.setattr(load_demo, "LABELED_SETS", labeled)
    monkeypatch.setattr(
        load_demo, "load_topics", lambda **options: load_topics(seed, **options)
    )
    return seed


def run_again() -> tuple[mock.MagicMock, mock.MagicMock]:
    with (
        mock.patch.object(tagging, "retag_topics", wraps=tagging.retag_topics) as retag,
        mock.patch.object(relevance, "train", wraps=relevance.train) as train,
    ):
        call_command("load_demo", stdout=io.StringIO())
    return retag, train


def test_a_second_run_tags_and_trains_nothing(demo):
    tags = set(PaperTopic.objects.values_list("topic_id", "paper_id", "source"))
    assert tags

    retag, train = run_again()

    retag.assert_not_called()
    train.assert_not_called()
    assert set(PaperTopic.objects.values_list("topic_id", "paper_id", "source")) == (
        tags
    )


def test_a_changed_seed_rule_retags_only_its_topic(demo):
    entries = json.loads(demo.read_text())
    entries[0]["rule"] = "ti:agent*"
    demo.write_text(json.dumps(entries))

    retag, _ = run_again()

    [(topics,), _] = retag.call_args
    assert [topic.slug for topic in topics] == [entries[0]["slug"]]
    topic = Topic.objects.get(slug=entries[0]["slug"])
    titles = topic.papers.values_list("title", flat=True)
    assert titles
    assert all("agent" in title.lower() for title in titles)


def test_the_demo_shows_similar_papers_and_a_second_run_builds_none(demo):
    assert SimilarPaper.objects.exists()
    rows = set(SimilarPaper.objects.values_list("paper_id", "similar_id", "rank"))

    with mock.patch.object(similar, "build_all", wraps=similar.build_all) as build:
        call_command("load_demo", stdout=io.StringIO())

    build.assert_not_called()
    assert set(SimilarPaper.objects.values_list("paper_id", "similar_id", "rank")) == (
        rows
    )


def test_the_demo_reader_has_a_library_and_a_second_run_keeps_it(demo):
    reader = User.objects.get(email=load_demo.DEMO_READER[0])
    ratings = dict(reader.ratings.values_list("paper__arxiv_id", "value"))
    saved = set(reader.saved_papers.values_list("paper__arxiv_id", flat=True))
    # Only as many as the 1,000 papers' largest followed topic holds.
    assert 1 <= len(saved) <= load_demo.DEMO_SAVES
    assert list(ratings.values()).count(-1) == load_demo.DEMO_DOWNS
    assert not saved & set(ratings)
    assert AuthorFollow.objects.filter(user=reader).count() == 1

    call_command("load_demo", stdout=io.StringIO())
    again = dict(reader.ratings.values_list("paper__arxiv_id", "value"))
    assert again == ratings
    assert reader.saved_papers.count() == len(saved)


def test_the_demo_reader_gets_for_you(demo):
    reader = User.objects.get(email=load_demo.DEMO_READER[0])
    model = ReaderModel.objects.get(user=reader)
    positives = reader.saved_papers.count() + reader.ratings.filter(value=1).count()
    assert model.positives == positives
    assert recommend.recommended(reader.pk)

    call_command("load_demo", stdout=io.StringIO())
    assert ReaderModel.objects.get(user=reader).trained_at == model.trained_at


def test_the_printed_commands_read_this_demo(monkeypatch, tmp_path):
    """Run as printed, from a fresh shell, a command reads this demo's data and
    links to this server."""
    monkeypatch.setenv("MOMENTUM_SITE_URL", "http://127.0.0.1:8123")
    monkeypatch.setenv("MOMENTUM_VAR_DIR", str(tmp_path / "my var"))

    command = manage_command()

    assert command.startswith(
        f"MOMENTUM_SITE_URL=http://127.0.0.1:8123 MOMENTUM_VAR_DIR='{tmp_path}/my var' "
    )
    assert command.endswith("manage.py")


def test_the_labeled_decisions_are_trained_on_once_and_at_once(
    settings, tmp_path, monkeypatch, django_capture_on_commit_callbacks
):
    """The decisions' own training, after their burst, would run on a timer of
    the command's process while it builds the similar papers, and wait on that
    build's lock (SQLite: "database is locked"). The command trains at once."""
    with gzip.open(load_demo.DEMO_CORPUS, "rt") as lines:
        first = [json.loads(line)["id"] for line in itertools.islice(lines, 4)]
    decisions = {arxiv_id: n % 2 == 0 for n, arxiv_id in enumerate(first)}
    use_head_of_corpus(settings, tmp_path, monkeypatch, decisions=decisions)

    with (
        mock.patch("core.queue._run_later") as timer,
        mock.patch("topics.tasks.train_topic_model.apply_async") as sent,
        django_capture_on_commit_callbacks(execute=True),
    ):
        call_command("load_demo", stdout=io.StringIO())

    scheduled = [call for call in timer.call_args_list if "topic" in str(call)]
    assert (scheduled, sent.call_count) == ([], 0)
    topic = Topic.objects.get(slug="rl-for-llm-agents")
    assert topic.model.decisions == 4
    assert not cache.get(relevance.training_due_key(topic.pk))
