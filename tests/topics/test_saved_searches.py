"""Saved searches: their queries checked by the two syntaxes' parsers, the
reader's limit, and their matches found when saved, edited and after ingest."""

from __future__ import annotations

import threading
from io import StringIO
from pathlib import Path
from unittest import mock

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.db import connections

from accounts.models import User
from papers.ingest.upsert import upsert_records
from tests.concurrency import ingest_committing_late
from tests.papers.factories import paper_record
from topics import prefilter
from topics import saved_searches
from topics.models import RuleDocument
from topics.models import SavedSearch
from topics.models import SavedSearchMatch
from topics.prefilter import refresh_rule_documents
from topics.rules.terms import TERMS_VERSION
from topics.saved_searches import SavedSearchError
from topics.saved_searches import check_query
from topics.saved_searches import create_search
from topics.saved_searches import delete_search
from topics.saved_searches import match_new_papers
from topics.saved_searches import update_search
from topics.tagging import tag_papers
from topics.tasks import match_saved_searches

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("query", "message", "position"),
    [
        ('agents "tool use', "Unbalanced quote at position 7", 7),
        ("   ", "Type some words to search for at position 0", 0),
        ("-robot -arm", "Only excluded words: add a word to look for at position 0", 0),
        ("agents or -robot", "Only excluded words", 10),
        ("or agents", "Nothing before or at position 0", 0),
        ("agents or", "Nothing after or at position 7", 7),
        ('""', "Nothing to search for (words as common as", 0),
        ("arXiv:2607.04713", "An arXiv id names one paper", 0),
        ("x" * 201, "Too long (201 characters, limit 200) at position 200", 200),
        # A word of symbols is no term: "+" alone searches for nothing.
        ("+ \u2192", "Nothing to search for (words as common as", 0),
        ("of the", "Nothing to search for (words as common as", 0),
        ("(the) A*", "Nothing to search for (words as common as", 0),
        ("agents AU:Levine", "AU: is a field of the topic rule syntax", 7),
        ('"world model" -cat:cs.RO', "cat: is a field of the topic rule syntax", 15),
        # Read as search reads it: a phone's minus sign and quotes, full width.
        ("\u2212robot", "Only excluded words", 0),
        ("agents \u201ctool use", "Unbalanced quote at position 7", 7),
        ("agents \uff41\uff55:Levine", "au: is a field of the topic rule syntax", 7),
        # Positions are in the query as typed, where "…" is one character.
        ("\u2026 \u00bd ti:graphs", "ti: is a field of the topic rule syntax", 4),
        # Read with its letters as search reads them (papers.letters): a
        # dotless i is an i, so "if it" in it is two stop words, and "ør" an `or`.
        ("\u0131f \u0131t", "Nothing to search for (words as common as", 0),
        ("{\\i}f", "Nothing to search for (words as common as", 0),
        ("\u00f8r agents", "Nothing before or at position 0", 0),
    ],
)
def test_search_syntax_refuses_poor_alerts_with_the_position(query, message, position):
    with pytest.raises(SavedSearchError) as refused:
        check_query(query, "search")

    assert message in refused.value.message
    assert refused.value.position == position
    assert refused.value.field == "query"


@pytest.mark.parametrize(
    "query", ['agents "tool use" -robot', "robot or agent", "Levine", '-robot "arm"']
)
def test_search_syntax_takes_what_looks_for_something(query):
    assert check_query(query, "search") is None


@pytest.mark.django_db
@pytest.mark.parametrize("query", ["COVID-19", "LLM", "LiDAR + camera"])
def test_a_saved_search_matches_what_the_search_finds(alice, query):
    upsert_records(
        [
            paper_record("2606.00001", title="Forecasting COVID-19 cases"),
            paper_record("2606.00002", title="Tables read by LLMs"),
            paper_record("2606.00003", title="Fusing LiDAR + camera"),
        ]
    )

    search = create_search(alice, name="mine", query=query, syntax="search")

    assert SavedSearchMatch.objects.filter(search=search).count() == 1


@pytest.mark.parametrize(
    ("query", "position"),
    [
        ("ti:agent AND", 9),
        ('ti:"agent', 3),
        ("ti:agent or abs:robot", 9),
        ("ti:agent cat:cs.XX", 9),
    ],
)
def test_rules_are_refused_with_the_rule_languages_position(query, position):
    with pytest.raises(SavedSearchError) as refused:
        check_query(query, "rule")

    assert refused.value.code == "invalid_rule"
    assert refused.value.position == position
    assert refused.value.message.startswith("Invalid rule: ")
    assert refused.value.message.endswith(f"at position {position}")


@pytest.mark.parametrize("syntax", ["search", "rule"])
@pytest.mark.parametrize(
    ("query", "position"), [("learn\x00ing", 5), ("\x00", 0), ("agent \x1bx", 6)]
)
def test_a_control_character_in_a_query_is_refused_where_it_is(query, position, syntax):
    with pytest.raises(SavedSearchError) as refused:
        check_query(query, syntax)

    assert refused.value.message == (
        f"A control character cannot be searched for at position {position}"
    )
    assert (refused.value.field, refused.value.position) == ("query", position)


@pytest.mark.parametrize(
    "name",
    [
        "ctl\x1b\x08 x",
        "nul\x00name",
        "\x7f",
        "\u2067isolate",
        "\u202eevil",
        # Noncharacters, which XML 1.0 refuses: the private feed was unreadable.
        "Robots \uffff",
        "\ufffeRobots",
    ],
)
def test_a_name_with_a_control_character_is_refused(alice, name):
    # It would be shown in pages, mails and the Atom feed, where XML refuses it.
    with pytest.raises(SavedSearchError) as refused:
        create_search(alice, name=name, query="agent", syntax="search")

    assert (refused.value.field, refused.value.code) == ("name", "invalid")
    assert refused.value.message == "A name cannot hold control characters"
    assert not SavedSearch.objects.exists()


def test_a_name_that_looks_the_same_is_the_same_name(alice):
    composed = create_search(
        alice, name="Caf\u00e9 alerts", query="agent", syntax="search"
    )

    for lookalike in ("Cafe\u0301 alerts", "Caf\u00e9\u200b alerts\ufeff"):
        with pytest.raises(SavedSearchError) as refused:
            create_search(alice, name=lookalike, query="robot", syntax="search")
        assert (refused.value.field, refused.value.code) == ("name", "unique")
    # A joiner is part of how some scripts spell a word: kept.
    persian = create_search(
        alice, name="\u0645\u06cc\u200c\u0634\u0648\u062f", query="x", syntax="search"
    )

    assert composed.name == "Caf\u00e9 alerts"
    assert persian.name == "\u0645\u06cc\u200c\u0634\u0648\u062f"


def test_names_are_unique_per_reader_and_the_limit_is_clear(alice, bob, settings):
    settings.MOMENTUM_SAVED_SEARCHES_MAX = 2
    create_search(alice, name="Agents", query="agent", syntax="search")
    create_search(bob, name="Agents", query="agent", syntax="search")
    with pytest.raises(SavedSearchError) as taken:
        create_search(alice, name=" Agents ", query="robot", syntax="search")
    assert (taken.value.field, taken.value.code) == ("name", "unique")

    create_search(alice, name="Robots", query="ti:robot", syntax="rule")
    with pytest.raises(SavedSearchError) as full:
        create_search(alice, name="Third", query="arm", syntax="search")
    assert full.value.code == "limit"
    assert "2 saved searches" in full.value.message
    assert SavedSearch.objects.filter(user=alice).count() == 2


def matched(search: SavedSearch) -> set[str]:
    return set(
        SavedSearchMatch.objects.filter(search=search).values_list(
            "paper__arxiv_id", flat=True
        )
    )


def test_matches_are_found_when_saved_and_again_when_edited(alice, corpus):
    words = create_search(alice, name="Robots", query="robot", syntax="search")
    rule = create_search(
        alice, name="Agents", query="ti:agent ANDNOT ti:robot", syntax="rule"
    )

    assert matched(words) == {"2606.00100"}
    assert matched(rule) == {f"2606.{n:05d}" for n in range(1, 8)}

    revision = SavedSearch.objects.get(pk=words.pk).revision
    update_search(words, query='"old style"')
    assert matched(words) == {"math/0601001"}
    assert SavedSearch.objects.get(pk=words.pk).revision > revision
    update_search(rule, name="Only agents")
    assert SavedSearch.objects.get(pk=rule.pk).name == "Only agents"
    assert len(matched(rule)) == 7

    delete_search(words)
    assert not SavedSearchMatch.objects.filter(search_id=words.pk).exists()


def test_a_rule_search_waits_while_the_rule_index_is_rebuilt(
    alice, corpus, monkeypatch
):
    """After a release that reads papers' terms anew, a request does not derive
    the whole corpus's terms: a rule search is refused until the worker has."""
    rule = create_search(alice, name="Agents", query="ti:agent", syntax="rule")
    RuleDocument.objects.update(version=TERMS_VERSION - 1)
    cache.clear()
    monkeypatch.setattr(prefilter, "PREVIEW_DERIVES", 1)

    with pytest.raises(SavedSearchError) as refused:
        create_search(alice, name="Robots", query="ti:robot", syntax="rule")
    with pytest.raises(SavedSearchError):
        update_search(rule, query="ti:agent ANDNOT ti:robot")

    assert refused.value.code == "index_rebuilding"
    assert refused.value.field is None
    assert "try again in a few minutes" in refused.value.message
    assert list(SavedSearch.objects.values_list("query", flat=True)) == ["ti:agent"]
    assert create_search(alice, name="Words", query="robot", syntax="search")
    refresh_rule_documents()
    assert matched(create_search(alice, name="R", query="ti:robot", syntax="rule"))


def test_new_papers_are_matched_once_after_ingest(alice, corpus):
    words = create_search(alice, name="Robots", query="robot -agent", syntax="search")
    rule = create_search(alice, name="Arms", query='abs:"robot arm"', syntax="rule")
    assert matched(words) == set()
    assert matched(rule) == set()
    records = [
        paper_record("2607.00001", title="A robot", abstract="A robot arm grasps."),
        paper_record("2607.00002", title="An agent", abstract="No arm here."),
    ]
    tag_papers(upsert_records(records).changed_ids)

    assert match_new_papers() == 2
    assert matched(words) == {"2607.00001"}
    assert matched(rule) == {"2607.00001"}
    assert match_new_papers() == 0  # idempotent


def test_after_an_index_change_the_searches_in_words_find_their_matches_again(
    alice, corpus
):
    """README, Upgrades: what an index that reads text anew finds, the stored
    matches gain; a rule's, which the index does not decide, stay."""
    words = create_search(alice, name="Robots", query="robot", syntax="search")
    rule = create_search(alice, name="Arms", query='abs:"robot arm"', syntax="rule")
    SavedSearchMatch.objects.all().delete()  # as an old index left them
    out = StringIO()

    call_command("topics", "searches", stdout=out)

    assert out.getvalue() == "Found the matches of 1 saved search(es) again.\n"
    assert matched(words) == {"2606.00100"}
    assert matched(rule) == set()


def test_a_changed_paper_is_matched_again(alice, corpus):
    words = create_search(alice, name="Robots", query="robot", syntax="search")
    rule = create_search(alice, name="Arms", query='abs:"robot arm"', syntax="rule")
    first = paper_record("2607.00001", title="A study", abstract="A robot arm grasps.")
    tag_papers(upsert_records([first]).changed_ids)
    match_new_papers()
    assert matched(words) == {"2606.00100", "2607.00001"}
    assert matched(rule) == {"2607.00001"}
    revision = SavedSearch.objects.get(pk=rule.pk).revision

    # Its second version is about a gripper: it leaves both; an older paper's
    # second version is about a robot arm: it enters both.
    revised = [
        paper_record("2607.00001", 2, title="A study", abstract="A gripper grasps."),
        paper_record("2606.00003", 2, title="Agent 3", abstract="A robot arm."),
    ]
    tag_papers(upsert_records(revised).changed_ids)

    assert match_new_papers() == 2
    assert matched(words) == {"2606.00100", "2606.00003"}
    assert matched(rule) == {"2606.00003"}
    assert SavedSearch.objects.get(pk=rule.pk).revision > revision
    assert match_new_papers() == 0  # idempotent


SNAPSHOT = (
    Path(__file__).resolve().parent.parent
    / "fixtures"
    / "arxiv"
    / "kaggle_jsonl"
    / "arxivSpider_mnbvc_arxiv-metadata-oai-snapshot_head200.jsonl"
)


def test_an_ingest_of_a_real_snapshot_sends_the_matching_and_the_task_runs_it(
    alice, corpus, django_capture_on_commit_callbacks
):
    words = create_search(alice, name="Neutrinos", query="neutrino", syntax="search")
    rule = create_search(alice, name="Graphene", query="ti:graphene", syntax="rule")
    assert SavedSearchMatch.objects.count() == 0

    with (
        mock.patch("topics.tasks.match_saved_searches.apply_async") as sent,
        django_capture_on_commit_callbacks(execute=True),
    ):
        call_command("ingest", str(SNAPSHOT), stdout=StringIO())
    sent.assert_called_once()
    assert SavedSearchMatch.objects.count() == 0  # the worker's task does it

    match_saved_searches.apply()
    # Stemmed ("neutrinos" too), whole words ("neutrinoless" in 0704.0063 is not).
    assert matched(words) == {"0704.0032", "0704.0186", "0704.0190"}
    assert matched(rule) == {"0704.0027"}
    before = SavedSearch.objects.get(pk=rule.pk).revision
    match_saved_searches.apply()  # the sweep, with nothing new
    assert SavedSearch.objects.get(pk=rule.pk).revision == before


@pytest.mark.django_db(transaction=True)
def test_two_renames_to_one_name_at_once_refuse_one_saying_so():
    """Both passed the name's check, and one failed at the unique constraint:
    a 500. One change at a time per reader."""
    alice = User.objects.create_user("alice@example.com", "correct horse battery")
    first = create_search(alice, name="a", query="graph", syntax="search")
    second = create_search(alice, name="b", query="agent", syntax="search")
    checked_once, go = threading.Event(), threading.Event()
    real = saved_searches._check_name
    errors: list[Exception] = []

    def check_then_wait(*args, **kwargs):
        name = real(*args, **kwargs)
        if not checked_once.is_set():
            checked_once.set()
            assert go.wait(30)
        return name

    def rename(search):
        try:
            update_search(search, name="graphs")
        except Exception as error:  # what the view or the API would get
            errors.append(error)
        finally:
            connections.close_all()

    with mock.patch.object(saved_searches, "_check_name", check_then_wait):
        threads = [threading.Thread(target=rename, args=(s,)) for s in (first, second)]
        threads[0].start()
        assert checked_once.wait(30)
        threads[1].start()
        threads[1].join(2)  # blocked on the first's lock, or done
        go.set()
        for thread in threads:
            thread.join(30)

    assert [type(error).__name__ for error in errors] == ["SavedSearchError"]


@pytest.mark.django_db(transaction=True)
def test_a_paper_whose_ingest_committed_late_is_matched():
    """Another ingest, stamped later, committed first and moved the mark past
    it: the paper never reached the search's feed or digest."""
    alice = User.objects.create_user("alice@example.com", "correct horse battery")
    upsert_records([paper_record("2606.00001", title="Old graph paper")])
    search = create_search(alice, name="graphs", query="graph", syntax="search")
    slow, commit = ingest_committing_late(
        [paper_record("2606.00002", title="A graph of agents")]
    )
    upsert_records([paper_record("2606.00003", title="Another graph")])
    assert match_new_papers() == 1
    commit.set()
    slow.join(30)

    assert match_new_papers() == 1
    assert match_new_papers() == 0
    matched = SavedSearchMatch.objects.filter(search=search)
    assert sorted(matched.values_list("paper__arxiv_id", flat=True)) == [
        "2606.00001",
        "2606.00002",
        "2606.00003",
    ]
