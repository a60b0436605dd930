"""The database prefilter of rule previews and re-tags: the same papers as matching
every paper, on PostgreSQL (tsvector, GIN) and on SQLite (FTS5)."""

from __future__ import annotations

import gzip
import itertools
import json
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from papers.ingest.runs import ingest_path
from papers.ingest.upsert import upsert_records
from papers.models import Paper
from papers.query import LATE_COMMIT_OVERLAP
from tests.papers.factories import paper_record
from tests.sqlite_run import run_module_on_sqlite
from tests.topics.factories import make_topic
from topics import preview
from topics.models import RuleDocument
from topics.prefilter import CHECKED_KEY
from topics.prefilter import TermsNotReady
from topics.prefilter import refresh_rule_documents
from topics.prefilter import stale_papers
from topics.preview import iter_documents
from topics.preview import rule_matching_ids
from topics.rules import compile_rule
from topics.rules import parse_rule
from topics.rules.terms import TERMS_VERSION
from topics.rules.terms import AllOf
from topics.rules.terms import AnyOf
from topics.rules.terms import InCategory
from topics.rules.terms import Not
from topics.rules.terms import Word
from topics.rules.terms import rule_condition
from topics.rules.terms import sure_condition
from topics.tagging import retag_topics

BASE_DIR = Path(__file__).resolve().parents[2]
DEMO_CORPUS = BASE_DIR / "data" / "demo" / "arxiv-2026-06-07.snapshot.jsonl.gz"
SEED_TOPICS = BASE_DIR / "data" / "demo" / "topics.json"
POSTGRESQL = connection.vendor == "postgresql"
CORPUS_SIZE = 2000

# Rules whose conditions are easy to get wrong, beside the seed topics'.
TRICKY_RULES = [
    "cat:cs.LG ANDNOT agent",  # the excluded side never makes a match
    "agent ANDNOT ti:agent",
    "cat:cs.RO",  # categories only: answered by the category rows
    "cat:cs.*",
    "cat:math",
    "cat:cs.RO OR ti:robot*",  # a category beside words
    "(cat:cs.CV AND video) OR (cat:eess.IV AND image*)",
    "ti:diffusion OR ti:transformer OR ti:graph OR abs:benchmark",
    '"large language model" OR "reinforcement learning"',
    'abs:"chain of thought" AND ti:reason*',
    "agent*",  # a prefix in every field, author names included
    "ti:reinforc* AND abs:polic*",
    "au:wang",
    "au:zha*",
    'au:"yang liu"',
    "co:pages",
    "multi-agent",  # hyphenated: apart, joined up and with the hyphen
    "multiagent",
    "policies",  # plural folding
    "gaussian*",
    "LLMs AND ti:survey",
    "graph ANDNOT (neural OR cat:cs.LG)",
    # Runs of three words decide; longer phrases are their runs of three.
    '"large language model" AND ti:"reinforcement learning"',
    '"large language model agents" OR "multi-agent reinforcement learning"',
    'ti:"vision-language-action model"',
    '"state-of-the-art" ANDNOT "large language model"',
    "ti:agent* AND ti:benchmark*",  # title prefixes, searched as written too
    "ti:polic* OR ti:studie*",
]


def seed_rules() -> dict[str, tuple[str, list[str]]]:
    entries = json.loads(SEED_TOPICS.read_text())
    return {e["slug"]: (e["rule"], e.get("categories", [])) for e in entries}


@pytest.fixture
def corpus(db, tmp_path) -> None:
    """The first papers of the shipped corpus, ingested for real."""
    path = tmp_path / "head.jsonl"
    with gzip.open(DEMO_CORPUS, "rt") as lines:
        path.write_text("".join(itertools.islice(lines, CORPUS_SIZE)))
    ingest_path(path)


def full_scan(rules: dict[str, tuple[str, list[str]]]) -> dict[str, set[int]]:
    """Each rule's matches among every stored paper: each document built once."""
    compiled = {name: compile_rule(rule) for name, (rule, _) in rules.items()}
    found: dict[str, set[int]] = {name: set() for name in rules}
    for pk, doc, categories in iter_documents(Paper.objects.all()):
        for name, rule in compiled.items():
            scope = set(rules[name][1])
            if (not scope or scope & categories) and rule.match(doc) is not None:
                found[name].add(pk)
    return found


def test_the_prefilter_finds_what_matching_every_paper_finds(corpus):
    rules = seed_rules() | {rule: (rule, []) for rule in TRICKY_RULES}
    expected = full_scan(rules)

    found = {}
    checked = {}
    for name, (rule, scope) in rules.items():
        found[name], checked[name] = rule_matching_ids(compile_rule(rule), scope)

    assert found == expected
    # Not a full scan in disguise: most rules leave few papers to check.
    assert sum(1 for name in rules if checked[name] < CORPUS_SIZE / 4) > 40
    assert sum(1 for papers in expected.values() if papers) > 50


def test_without_the_prefilter_every_paper_is_matched(corpus):
    rule = compile_rule(seed_rules()["world-models"][0])

    prefiltered, checked = rule_matching_ids(rule)
    scanned, every = rule_matching_ids(rule, prefilter=False)

    assert prefiltered == scanned
    assert every == CORPUS_SIZE > checked


def test_a_topic_is_retagged_from_its_candidates_and_loses_what_it_no_longer_matches(
    corpus,
):
    rules = seed_rules()
    expected = full_scan({name: rules[name] for name in ("world-models", "tool-use")})
    topic = make_topic(rule=rules["world-models"][0])

    first = retag_topics([topic])
    tagged_first = set(topic.paper_topics.values_list("paper_id", flat=True))
    topic.rule = rules["tool-use"][0]
    topic.save()
    second = retag_topics([topic])

    assert tagged_first == expected["world-models"]
    assert (
        set(topic.paper_topics.values_list("paper_id", flat=True))
        == (expected["tool-use"])
    )
    assert second.removed == len(expected["world-models"] - expected["tool-use"])
    assert first.papers < CORPUS_SIZE / 4
    assert second.papers < CORPUS_SIZE / 4


@pytest.mark.django_db
def test_terms_follow_new_and_changed_papers():
    upsert_records([paper_record("2606.00081", title="Quantum walks", abstract="")])
    walks = compile_rule("ti:quantum")
    assert len(rule_matching_ids(walks)[0]) == 1

    upsert_records(
        [paper_record("2606.00081", 2, title="Classical walks", abstract="")]
    )
    upsert_records([paper_record("2606.00082", title="Quantum dots", abstract="")])

    assert rule_matching_ids(walks)[0] == {Paper.objects.get(arxiv_id="2606.00082").pk}
    assert len(rule_matching_ids(compile_rule("ti:classical"))[0]) == 1
    assert stale_papers() == {}
    assert refresh_rule_documents() == 0
    Paper.objects.filter(arxiv_id="2606.00082").delete()
    assert RuleDocument.objects.count() == 1


@pytest.mark.django_db
def test_terms_of_an_older_release_are_derived_again_by_the_command():
    upsert_records([paper_record("2606.00083", title="Model predictive control")])
    upsert_records([paper_record("2606.00084", title="Predictive models")])
    RuleDocument.objects.update(version=TERMS_VERSION - 1)
    cache.clear()  # a new release's check has no mark
    out = StringIO()

    call_command("topics", "terms", stdout=out)
    call_command("topics", "terms", stdout=out)

    assert out.getvalue().splitlines() == [
        "Derived the index terms of 2 paper(s).",
        "Derived the index terms of 0 paper(s).",
    ]
    assert stale_papers() == {}
    # The new terms decide the phrase: no paper is matched one by one.
    assert rule_matching_ids(compile_rule('ti:"model predictive control"')) == (
        {Paper.objects.get(arxiv_id="2606.00083").pk},
        0,
    )


@pytest.mark.django_db
def test_past_the_limit_no_terms_are_derived_and_the_caller_is_told_how_many():
    upsert_records([paper_record("2606.00085", title="One")])
    upsert_records([paper_record("2606.00086", title="Two")])
    RuleDocument.objects.update(version=TERMS_VERSION - 1)
    cache.clear()

    with pytest.raises(TermsNotReady) as raised:
        refresh_rule_documents(limit=1)

    assert raised.value.remaining == 2
    assert len(stale_papers()) == 2
    assert refresh_rule_documents(limit=2) == 2


@pytest.mark.django_db
def test_previews_while_many_are_stale_are_told_the_last_count_without_a_check(
    django_assert_num_queries,
):
    upsert_records([paper_record("2606.00085", title="One")])
    upsert_records([paper_record("2606.00086", title="Two")])
    RuleDocument.objects.update(version=TERMS_VERSION - 1)
    cache.clear()
    with pytest.raises(TermsNotReady):
        refresh_rule_documents(limit=1)

    with django_assert_num_queries(0), pytest.raises(TermsNotReady) as raised:
        refresh_rule_documents(limit=1)

    assert raised.value.remaining == 2
    assert refresh_rule_documents() == 2  # the sweep: the count is gone with them
    assert refresh_rule_documents(limit=1) == 0


@pytest.mark.django_db
def test_a_check_of_the_terms_looks_again_only_at_papers_written_since_the_last():
    upsert_records(
        [
            paper_record("2606.00083", title="Quantum walks", abstract=""),
            paper_record("2606.00084", title="Quantum dots", abstract=""),
        ]
    )
    old = Paper.objects.get(arxiv_id="2606.00083")
    Paper.objects.filter(pk=old.pk).update(modified_at=timezone.now() - timedelta(1))
    refresh_rule_documents()  # the first check reads every paper

    RuleDocument.objects.filter(paper=old).delete()
    assert refresh_rule_documents() == 0  # written long before the check
    cache.delete(CHECKED_KEY)  # lost, or kept past CHECK_KEPT
    assert refresh_rule_documents() == 1


@pytest.mark.django_db
def test_a_paper_saved_since_the_check_or_stamped_just_before_it_is_looked_at():
    upsert_records(
        [
            paper_record("2606.00085", title="Quantum walks", abstract=""),
            paper_record("2606.00086", title="Quantum dots", abstract=""),
        ]
    )
    refresh_rule_documents()
    late, edited = Paper.objects.order_by("arxiv_id")
    # Stamped before the check, committed after it: inside the overlap.
    stamped = cache.get(CHECKED_KEY) - LATE_COMMIT_OVERLAP + timedelta(minutes=1)
    Paper.objects.filter(pk=late.pk).update(modified_at=stamped)
    RuleDocument.objects.filter(paper=late).delete()
    edited.title = "Classical dots"  # as admin saves it: no terms stored
    edited.save()

    assert refresh_rule_documents() == 2
    assert rule_matching_ids(compile_rule("ti:classical"))[0] == {edited.pk}
    assert rule_matching_ids(compile_rule("ti:walks"))[0] == {late.pk}


@pytest.mark.django_db
def test_categories_are_read_from_the_paper_as_it_is_now():
    """Categories added to a paper after its terms were stored (a cross-list
    adds some, admin may too) count: they are not part of the stored terms."""
    upsert_records([paper_record("2606.00091", categories=("cs.LG",))])
    robots = compile_rule("cat:cs.RO AND agent*")
    assert rule_matching_ids(robots)[0] == set()

    paper = Paper.objects.get()
    paper.categories.create(code="cs.RO")

    assert rule_matching_ids(robots)[0] == {paper.pk}


def test_conditions_keep_and_or_and_drop_the_excluded_side():
    condition = rule_condition(parse_rule('(ti:agent* OR cat:cs.MA) ANDNOT "tool use"'))

    assert condition == AnyOf(
        (Word("ti:agent", prefix=True), InCategory("cs.ma", False))
    )
    # A phrase is its run of words, which implies each word: only it is looked up.
    assert rule_condition(parse_rule('abs:"policy gradients" au:smith')) == AllOf(
        (Word("policy_gradient"), Word("au:smith"))
    )
    assert rule_condition(parse_rule('"tool use"')) == AnyOf(
        (Word("tool_use"), Word("au:tool_use"))
    )
    # A hyphenated word: its parts side by side, or joined up.
    assert rule_condition(parse_rule('abs:"vision-language-action"')) == AnyOf(
        (Word("vision_language_action"), Word("visionlanguageaction"))
    )
    # Past three words, each run of three.
    assert rule_condition(parse_rule('abs:"large language model agents"')) == AllOf(
        (Word("large_language_model"), Word("language_model_agent"))
    )
    # Runs holding a function word are not stored: their pairs instead.
    assert rule_condition(parse_rule('abs:"chain of thought"')) == AllOf(
        (Word("chain_of"), Word("of_thought"))
    )
    assert rule_condition(parse_rule('abs:"chain of large language models"')) == AllOf(
        (Word("large_language_model"), Word("chain_of"), Word("of_large"))
    )
    assert rule_condition(parse_rule("cat:cs.*")) == InCategory("cs", True)


def test_sure_conditions_are_what_index_keys_alone_decide():
    sure = {
        rule: sure_condition(parse_rule(rule))
        for rule in (
            'ti:agent OR "tool use"',
            "cat:cs.RO ANDNOT ti:robot*",
            'abs:agent OR ti:"large language model"',
            'ti:"multi-turn RL"',
            '"multi-turn reinforcement learning"',
            'abs:"tool use" OR co:pages',
        )
    }

    assert sure == {
        'ti:agent OR "tool use"': AnyOf(
            (Word("ti:agent"), Word("tool_use"), Word("au:tool_use"))
        ),
        "cat:cs.RO ANDNOT ti:robot*": AllOf(
            (InCategory("cs.ro", False), Not(Word("ti:robot", prefix=True)))
        ),
        # abs: has no keys of its own; three words are one run.
        'abs:agent OR ti:"large language model"': Word("ti:large_language_model"),
        # Every spelling of up to three words decides.
        'ti:"multi-turn RL"': AnyOf(
            (Word("ti:multi_turn_rl"), Word("ti:multiturn_rl"))
        ),
        # Four words are not one run; the spelling of three still decides.
        '"multi-turn reinforcement learning"': AnyOf(
            (
                Word("multiturn_reinforcement_learning"),
                Word("au:multiturn_reinforcement_learning"),
            )
        ),
        'abs:"tool use" OR co:pages': None,
    }


def test_papers_their_terms_decide_are_not_matched_one_by_one(corpus):
    rule = compile_rule("cat:cs.RO OR agent* OR ti:robot")
    matched, checked = rule_matching_ids(rule)

    assert len(matched) > 50
    assert checked == 0


def test_a_word_whose_folded_form_folds_again_is_not_decided_by_terms(db):
    """A paper's terms hold "children" as written (its folded word is "child");
    the rule word "childrens" folds to "children", which must not find it."""
    upsert_records([paper_record("2606.00071", title="Children learn", abstract="")])

    # Only an author's name spelled so decides it.
    assert sure_condition(parse_rule("childrens")) == Word("au:childrens")
    assert rule_matching_ids(compile_rule("childrens")) == (set(), 1)
    assert len(rule_matching_ids(compile_rule("ti:child"))[0]) == 1


@pytest.mark.parametrize("few", [2000, 1])  # SQLite: by id, or walking the days
def test_a_preview_lists_the_newest_of_its_papers(corpus, monkeypatch, few):
    monkeypatch.setattr(preview, "FEW", few)
    rule = "agent*"
    matched, _ = rule_matching_ids(compile_rule(rule))
    order = Paper.objects.filter(pk__in=matched).order_by("-first_announced", "-pk")

    shown = preview.preview_rule(rule, limit=5).latest

    assert [paper.pk for paper in shown] == list(order.values_list("pk", flat=True)[:5])


def test_past_its_budget_a_preview_reads_the_newest_and_estimates_the_rest(corpus):
    """A word in a named field (abs:model) leaves every paper holding the word
    to be read: tens of seconds at 100,000 papers, on a web worker."""
    rule = "abs:model"
    exact = preview.preview_rule(rule, limit=5)
    undecided = exact.checked
    assert undecided > 100  # the index decides none of them

    budget = preview.preview_rule(rule, limit=5, read_at_most=100)

    assert (budget.checked, budget.unread) == (100, undecided - 100)
    # The newest matches are among the newest read.
    assert [p.pk for p in budget.latest] == [p.pk for p in exact.latest]
    assert budget.count == pytest.approx(exact.count, rel=0.25)
    assert budget.as_json()["unread"] == undecided - 100


def test_an_unchanged_rule_estimated_past_the_budget_changes_nothing(corpus):
    """One rate for the papers in the topic and out of it showed an unchanged
    abs: rule adding and removing a thousand papers each at 100,000."""
    topic = make_topic("Models", rule="abs:model", slug="models")
    retag_topics([topic])

    budget = preview.preview_rule(topic.rule, topic=topic, read_at_most=100)

    assert budget.unread > 100
    assert (budget.added_count, budget.removed_count) == (0, 0)


def test_a_budget_the_preview_keeps_within_changes_nothing(corpus):
    rule = "ti:agent*"
    exact = preview.preview_rule(rule)

    assert preview.preview_rule(rule, read_at_most=10_000).as_json() | {
        "seconds": 0
    } == exact.as_json() | {"seconds": 0}


# On SQLite the suite ran this module already; from PostgreSQL it runs it there.
@pytest.mark.skipif(not POSTGRESQL, reason="the suite runs on SQLite")
@pytest.mark.sqlite
@pytest.mark.slow
def test_this_module_passes_on_sqlite(tmp_path):
    result = run_module_on_sqlite(__file__, tmp_path)

    assert result.returncode == 0, result.stdout + result.stderr
