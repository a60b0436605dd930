from __future__ import annotations

import gzip
import json
from itertools import islice

import pytest
from django.core.management import call_command

from papers.models import Paper
from topics.models import Topic
from topics.rules import Document
from topics.rules import RuleError
from topics.rules import compile_rule
from topics.seed import SEED_TOPICS
from topics.seed import load_topics
from topics.tagging import retag_all

SEED = json.loads(SEED_TOPICS.read_text())
DEMO_CORPUS = SEED_TOPICS.parent / "arxiv-2026-06-07.snapshot.jsonl.gz"


def test_seed_file_has_the_curated_topics_with_glossaries():
    slugs = [topic["slug"] for topic in SEED]
    assert 20 <= len(SEED) <= 40
    assert len(set(slugs)) == len(slugs)
    assert slugs[0] == "rl-for-llm-agents"
    assert SEED[0]["name"] == "RL for LLM Agents"
    for topic in SEED:
        assert topic["glossary"], topic["slug"]
        assert set(topic["related"]) <= set(slugs), topic["slug"]


@pytest.mark.django_db
def test_loading_the_seed_twice_gives_the_same_topics():
    load_topics()
    first = list(Topic.objects.values_list("slug", "rule", "glossary").order_by("slug"))
    load_topics()

    assert (
        list(Topic.objects.values_list("slug", "rule", "glossary").order_by("slug"))
        == first
    )
    agents = Topic.objects.get(slug="rl-for-llm-agents")
    assert "RL: Reinforcement Learning" in agents.glossary
    assert agents.related.exists()


@pytest.mark.django_db
@pytest.mark.parametrize("rule", ['abs:"unterminated', "ti:agent AND cat:cs.Al"])
def test_a_bad_rule_in_the_seed_file_changes_nothing_and_is_named(tmp_path, rule):
    """An unknown category too: it passed the first check, then failed on
    save, naming neither the file nor the topic."""
    broken = [dict(SEED[0]), dict(SEED[1], rule=rule)]
    path = tmp_path / "topics.json"
    path.write_text(json.dumps(broken))

    with pytest.raises(RuleError, match=f"topics.json, {SEED[1]['slug']}: "):
        load_topics(path)
    assert Topic.objects.count() == 0


@pytest.mark.django_db
def test_seed_topics_tag_the_shipped_corpus(tmp_path):
    """The first 5,000 demo papers, ingested for real: every topic finds papers."""
    sample = tmp_path / "sample.jsonl"
    with gzip.open(DEMO_CORPUS, "rt") as lines:
        sample.write_text("".join(islice(lines, 5000)))
    call_command("ingest", str(sample))
    load_topics()

    retag_all()

    counts = {t.slug: t.paper_topics.count() for t in Topic.objects.all()}
    assert Paper.objects.count() == 5000
    assert counts["rl-for-llm-agents"] >= 20
    assert sum(1 for count in counts.values() if count) == len(SEED)


def test_the_vision_language_rule_leaves_out_variational_quantum_algorithms():
    """VQA is also a variational quantum algorithm: a paper on their cost
    landscapes was tagged Vision-Language Models, and Ask quoted it on VQA."""
    rule = compile_rule(
        next(t for t in SEED if t["slug"] == "vision-language-models")["rule"]
    )
    wanted = {
        "2607.01329": False,  # quantum cost landscapes, "improved VQA predictions"
        "2607.21155": True,  # knowledge-intensive VQA diagnostics
        "2607.17834": True,  # endoscopic VQA
        "2607.16094": True,  # compositional VQA
        "2607.12418": True,  # a quantum adapter for VLM fine-tuning
    }
    rows = {}
    with gzip.open(DEMO_CORPUS, "rt") as lines:
        for line in lines:
            if line[8:18] in wanted:
                rows[line[8:18]] = json.loads(line)
    matched = {
        arxiv_id: rule.match(
            Document.from_fields(title=row["title"], abstract=row["abstract"])
        )
        is not None
        for arxiv_id, row in rows.items()
    }

    assert matched == wanted
