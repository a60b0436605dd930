"""Similar papers (topics.similar): nearest by text on a small corpus of real
abstracts, versions and duplicate titles left out, a new paper entering older
papers' lists, the task after ingest, the command, the page and the API."""

from __future__ import annotations

from io import StringIO
from unittest import mock

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection

from papers.ingest.runs import ingest_entries
from papers.ingest.upsert import upsert_records
from papers.models import IngestRun
from papers.models import PaperVector
from papers.models import SimilarityIndex
from papers.models import SimilarPaper
from tests.concurrency import ingest_committing_late
from tests.papers.factories import paper_record
from tests.sqlite_run import run_module_on_sqlite
from tests.topics.factories import make_topic
from topics import similar
from topics.tagging import IngestTagger
from topics.tagging import tag_papers
from topics.tasks import update_similar_papers

pytestmark = pytest.mark.django_db
POSTGRESQL = connection.vendor == "postgresql"

# Three subjects, three papers each (abstracts in arXiv's words), and one
# paper with nothing but a title.
PAPERS = {
    "2606.10001": (
        "Protein structure prediction with deep learning",
        "We predict the three-dimensional structure of a protein from its amino "
        "acid sequence. A deep network reads multiple sequence alignments and "
        "predicts residue distances; protein folding accuracy approaches "
        "experimental structure determination.",
    ),
    "2606.10002": (
        "Folding proteins from sequence alone",
        "Protein language models learn the structure of a protein from its amino "
        "acid sequence without alignments. Predicted residue contacts give "
        "protein folding models accurate three-dimensional structure.",
    ),
    "2606.10003": (
        "Designing protein sequences for a target structure",
        "Inverse folding: given a three-dimensional protein structure, we design "
        "amino acid sequences that fold into it, scoring residue contacts with a "
        "protein structure prediction network.",
    ),
    "2606.20001": (
        "Reinforcement learning for language model agents",
        "Language model agents act in web environments. We train the agent with "
        "reinforcement learning from environment rewards, improving the policy "
        "over long horizons of tool calls.",
    ),
    "2606.20002": (
        "Reward shaping for tool-using agents",
        "Agents that call tools receive sparse rewards. We shape environment "
        "rewards so that reinforcement learning trains the agent policy faster on "
        "long horizons of tool calls.",
    ),
    "2606.20003": (
        "Policy optimisation for web agents",
        "A language model policy navigates web environments; reinforcement "
        "learning with environment rewards trains the agent to complete tasks "
        "with fewer tool calls.",
    ),
    "2606.30001": (
        "Surface codes for quantum error correction",
        "Quantum error correction protects logical qubits from noise. Surface "
        "codes on a lattice of physical qubits reach a threshold error rate under "
        "circuit-level noise with a fast decoder.",
    ),
    "2606.30002": (
        "Decoding surface codes with neural networks",
        "A decoder for quantum error correction reads syndromes of surface codes; "
        "it corrects errors on physical qubits below the threshold error rate for "
        "circuit-level noise.",
    ),
    "2606.30003": (
        "Logical qubits below threshold",
        "We run quantum error correction with surface codes and measure logical "
        "qubits whose error rate falls as the code grows, below the threshold of "
        "physical qubits' noise.",
    ),
    "2606.40001": ("Protein folding", ""),
}
PROTEIN = ["2606.10001", "2606.10002", "2606.10003"]
AGENTS = ["2606.20001", "2606.20002", "2606.20003"]
QUANTUM = ["2606.30001", "2606.30002", "2606.30003"]


def records(papers: dict[str, tuple[str, str]], **fields):
    return [
        paper_record(arxiv_id, title=title, abstract=abstract, **fields)
        for arxiv_id, (title, abstract) in papers.items()
    ]


def store(papers: dict[str, tuple[str, str]] = PAPERS, **fields) -> list[int]:
    return upsert_records(records(papers, **fields)).changed_ids


def similar_to(arxiv_id: str) -> list[str]:
    return list(
        SimilarPaper.objects.filter(paper__arxiv_id=arxiv_id)
        .order_by("rank")
        .values_list("similar__arxiv_id", flat=True)
    )


@pytest.fixture
def built():
    store()
    return similar.build_all()


def test_the_nearest_papers_by_text_are_those_of_the_same_subject(built):
    assert built.built
    assert built.papers == len(PAPERS)
    for subject in (PROTEIN, AGENTS, QUANTUM):
        for arxiv_id in subject:
            listed = similar_to(arxiv_id)
            others = set(subject) - {arxiv_id}
            assert set(listed[:2]) == others, (arxiv_id, listed)
    # Nothing in common with the other subjects beyond MIN_SCORE.
    assert not set(similar_to("2606.30001")) & set(PROTEIN + AGENTS)
    ranks = SimilarPaper.objects.filter(paper__arxiv_id="2606.10001")
    scores = list(ranks.order_by("rank").values_list("score", flat=True))
    assert scores == sorted(scores, reverse=True)
    assert all(similar.MIN_SCORE <= score < 1 for score in scores)


def test_a_paper_with_an_empty_abstract_is_read_by_its_title(built):
    assert similar_to("2606.40001")[0] in PROTEIN
    assert "2606.40001" in similar_to("2606.10002")


def test_a_paper_whose_words_no_other_shares_has_no_similar_papers(db):
    store({**PAPERS, "2606.50001": ("Zymurgy", "")})
    similar.build_all()

    assert similar_to("2606.50001") == []
    assert "2606.50001" not in set(
        SimilarPaper.objects.values_list("similar__arxiv_id", flat=True)
    )


def test_an_empty_corpus_builds_nothing(db):
    result = similar.build_all()

    assert result.papers == 0
    assert SimilarPaper.objects.count() == 0
    assert SimilarityIndex.objects.get().vocabulary == []


def test_versions_of_itself_and_duplicate_titles_are_left_out(db):
    store()
    # A new version of a paper is the same paper; a repost under another id with
    # the same title (case and punctuation aside) is a duplicate.
    upsert_records(
        [
            paper_record(
                "2606.10001",
                version=2,
                title=PAPERS["2606.10001"][0],
                abstract=PAPERS["2606.10001"][1],
            ),
            paper_record(
                "2606.10009",
                title="PROTEIN structure prediction, with deep learning!",
                abstract=PAPERS["2606.10001"][1],
            ),
        ]
    )
    similar.build_all()

    assert "2606.10001" not in similar_to("2606.10001")
    assert "2606.10009" not in similar_to("2606.10001")
    assert "2606.10001" not in similar_to("2606.10009")
    assert set(similar_to("2606.10009")[:2]) == {"2606.10002", "2606.10003"}


def test_ties_go_to_the_older_paper_and_builds_repeat_exactly(db):
    same = PAPERS["2606.20001"][1]
    store(
        {
            "2606.60001": ("Agents trained with rewards", same),
            "2606.60002": ("Rewarded agent training", same),
            "2606.60003": ("Training agents from rewards", same),
            **PAPERS,
        }
    )
    first = similar.build_all()
    lists = {arxiv_id: similar_to(arxiv_id) for arxiv_id in PAPERS}
    second = similar.build_all()

    listed = similar_to("2606.20001")
    assert listed[:3] == ["2606.60001", "2606.60002", "2606.60003"]
    assert first.changed > 0
    assert second.changed == 0  # the same lists: nothing written, no page moved
    assert {arxiv_id: similar_to(arxiv_id) for arxiv_id in PAPERS} == lists


def test_a_new_paper_enters_the_lists_it_scores_into(built):
    before = similar_to("2606.30002")
    added = store(
        {
            "2606.30004": (
                "Surface code decoders below threshold",
                "A fast decoder for surface codes in quantum error correction: "
                "logical qubits from noisy physical qubits, below the threshold "
                "error rate of circuit-level noise.",
            )
        }
    )

    result = similar.update_similar()

    assert not result.built
    assert similar_to("2606.30004")[:3] != []
    assert set(similar_to("2606.30004")[:3]) == set(QUANTUM)
    # It scores above the old lists' 10th (they had fewer than ten): it is in.
    for arxiv_id in QUANTUM:
        assert "2606.30004" in similar_to(arxiv_id)
    assert similar_to("2606.30002") != before
    # Unrelated lists are left alone.
    assert "2606.30004" not in similar_to("2606.20001")
    # Nothing changed since: nothing to do.
    assert similar.update_similar().papers == 0
    assert added


def test_a_full_list_takes_a_new_paper_only_above_its_tenth(db, monkeypatch):
    monkeypatch.setattr(similar, "SIMILAR_SHOWN", 2)
    store()
    similar.build_all()
    assert len(similar_to("2606.20001")) == 2
    store(
        {
            # Near the agents' papers: it enters.
            "2606.20004": (
                "Reinforcement learning for web agents with tool calls",
                PAPERS["2606.20001"][1] + " " + PAPERS["2606.20003"][1],
            ),
            # Barely near them: below their second, it does not.
            "2606.20005": (
                "Tool calls",
                "We count tool calls in proteins and qubits.",
            ),
        }
    )

    similar.update_similar()

    assert similar_to("2606.20001")[0] == "2606.20004"
    for arxiv_id in AGENTS:
        assert "2606.20005" not in similar_to(arxiv_id)
        assert len(similar_to(arxiv_id)) == 2


def test_a_changed_paper_leaves_lists_it_no_longer_belongs_to(built):
    assert "2606.10003" in similar_to("2606.10001")
    # Its new version is about something else altogether.
    store({"2606.10003": ("Surface codes again", PAPERS["2606.30001"][1])}, version=2)

    similar.update_similar()

    assert "2606.10003" not in similar_to("2606.10001")
    assert "2606.10003" in similar_to("2606.30001")
    assert set(similar_to("2606.10003")[:3]) == set(QUANTUM)


def test_many_changes_refit_the_vocabulary(built):
    index = SimilarityIndex.objects.get()
    more = {
        f"2606.7{n:04d}": (f"Qubits and agents {n}", PAPERS["2606.30003"][1])
        for n in range(5)
    }
    store(more)

    result = similar.update_similar()

    assert result.built  # five new papers on ten: past REBUILD_SHARE
    assert SimilarityIndex.objects.get().papers == index.papers + 5


def test_without_an_index_the_first_update_builds_all(db):
    store()

    result = similar.update_similar()

    assert result.built
    assert set(similar_to("2606.10001")[:2]) == {"2606.10002", "2606.10003"}


def test_ingest_sends_the_update_after_its_runs_and_the_task_runs_it(
    built, django_capture_on_commit_callbacks
):
    run = IngestRun.objects.create(source="test")
    tagger = IngestTagger()
    new = paper_record(
        "2606.10004",
        title="Protein structure from amino acid sequence",
        abstract=PAPERS["2606.10002"][1],
    )
    with (
        mock.patch("topics.tasks.update_similar_papers.apply_async") as sent,
        django_capture_on_commit_callbacks(execute=True),
    ):
        ingest_entries(run, [new], tagger=tagger)
        assert not sent.called  # not during ingest: it does not wait for it
        tagger.after_runs()

    sent.assert_called_once()
    assert similar_to("2606.10004") == []  # not yet: the worker's task does it
    update_similar_papers.apply()
    assert set(similar_to("2606.10004")[:3]) == set(PROTEIN)
    assert "2606.10004" in similar_to("2606.10002")


def test_the_command_builds_and_skips_when_nothing_changed(db):
    store()
    out = StringIO()

    call_command("similar_papers", "--if-changed", stdout=out)
    call_command("similar_papers", "--if-changed", stdout=out)
    store({"2606.30004": ("Qubits", PAPERS["2606.30003"][1])})
    call_command("similar_papers", "--update", stdout=out)
    call_command("similar_papers", stdout=out)

    lines = out.getvalue().splitlines()
    assert lines[0].startswith(f"Similar papers: built for {len(PAPERS)} papers")
    assert lines[1] == "Similar papers: up to date."
    assert lines[2].startswith("Similar papers: updated for")
    assert lines[3].startswith(f"Similar papers: built for {len(PAPERS) + 1} papers")
    assert set(similar_to("2606.10001")[:2]) == {"2606.10002", "2606.10003"}


# THE PAGE AND THE API
# ------------------------------------------------------------------------------

# The paper page rendered anew: the site (a process's first request), the paper
# (authors, affiliations, tags, categories), the similar papers' ids and rows
# (papers, authors, affiliations, tags), related papers.
MAX_PAGE_QUERIES = 12


def test_the_paper_page_lists_similar_papers_as_rows(
    client, built, django_assert_max_num_queries
):
    with django_assert_max_num_queries(MAX_PAGE_QUERIES):
        page = client.get("/papers/2606.10001/").text

    section = page.split('id="similar"')[1].split("</section>")[0]
    shown = [arxiv_id for arxiv_id in PAPERS if f'data-paper="{arxiv_id}"' in section]
    assert set(shown) == set(similar_to("2606.10001"))
    assert section.index("2606.10002") < section.index("2606.40001")
    assert "data-paper-list" in page.split('id="similar"')[0].rsplit("<section", 1)[1]
    assert 'aria-pressed="false"' in section  # each row's save button, a slot


def test_a_paper_page_shows_a_paper_once_across_similar_and_related(client, db):
    make_topic("Agents", rule="abs:agent OR ti:zymurgy")
    # In the topic, but sharing no words with the agents' papers.
    apart = {"2606.20009": ("Zymurgy", "Fermentation in brewing.")}
    tag_papers(store({**PAPERS, **apart}))
    similar.build_all()

    page = client.get("/papers/2606.20001/").text

    similar_part, related_part = page.split('class="related-papers"')
    for arxiv_id in AGENTS[1:]:
        assert f'data-paper="{arxiv_id}"' in similar_part
        assert f"/papers/{arxiv_id}/" not in related_part
    assert "/papers/2606.20009/" in related_part
    assert "2606.20009" not in similar_part


def test_the_paper_page_follows_its_similar_papers(
    client, db, django_capture_on_commit_callbacks
):
    store()
    first = client.get("/papers/2606.30001/").text
    assert 'id="similar"' not in first  # not built yet
    assert client.get("/papers/2606.30001/").text == first  # from the cache

    with django_capture_on_commit_callbacks(execute=True):
        similar.build_all()  # moves the papers' similar versions on commit

    assert 'data-paper="2606.30002"' in client.get("/papers/2606.30001/").text


def test_the_api_lists_similar_papers_nearest_first(
    anonymous, built, django_assert_max_num_queries
):
    # The paper, its list, and the listed papers with their authors, tags and
    # categories.
    with django_assert_max_num_queries(6):
        response = anonymous.get("/api/v1/papers/2606.20001v1/similar/")

    assert response.status_code == 200, response.content
    results = response.json()["results"]
    assert [paper["arxiv_id"] for paper in results] == similar_to("2606.20001")
    assert results[0]["title"] in {PAPERS[a][0] for a in AGENTS}
    assert results[0]["authors"] == ["Ada Lovelace", "Alan Turing"]
    assert "links" in results[0]
    # Served again from the cache under the content version, with no query.
    with django_assert_max_num_queries(0):
        again = anonymous.get("/api/v1/papers/2606.20001v1/similar/")
    assert again.content == response.content
    etag = response["ETag"]
    assert (
        anonymous.get(
            "/api/v1/papers/2606.20001v1/similar/", HTTP_IF_NONE_MATCH=etag
        ).status_code
        == 304
    )


def test_the_api_moves_on_when_the_lists_change(
    anonymous, built, django_capture_on_commit_callbacks
):
    before = anonymous.get("/api/v1/papers/2606.30001/similar/")
    store({"2606.30004": ("Qubits", PAPERS["2606.30003"][1])})
    with django_capture_on_commit_callbacks(execute=True):
        similar.update_similar()

    after = anonymous.get("/api/v1/papers/2606.30001/similar/")

    assert after["ETag"] != before["ETag"]
    assert "2606.30004" in [paper["arxiv_id"] for paper in after.json()["results"]]


def test_the_api_says_when_there_is_no_such_paper(anonymous, db):
    missing = anonymous.get("/api/v1/papers/2606.99999/similar/")
    empty = anonymous.get("/api/v1/papers/2606.10001/similar/")

    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "not_found"
    assert empty.status_code == 404  # no paper stored yet either
    store()
    cache.clear()
    assert anonymous.get("/api/v1/papers/2606.10001/similar/").json() == {"results": []}


# The embedded default (`make run`) is SQLite: the ORM's bulk writes there.
@pytest.mark.skipif(not POSTGRESQL, reason="the suite runs on SQLite")
@pytest.mark.sqlite
@pytest.mark.slow
def test_this_module_passes_on_sqlite(tmp_path):
    result = run_module_on_sqlite(__file__, tmp_path)

    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(not POSTGRESQL, reason="threads writing at once: PostgreSQL only")
@pytest.mark.django_db(transaction=True)
def test_a_paper_whose_ingest_committed_late_gets_its_similar_papers():
    """Another ingest, stamped later, committed first and moved the pass's
    mark past it: it never had a vector nor similar papers."""
    upsert_records(records(PAPERS))
    similar.build_all()
    late = records(
        {
            "2606.30004": (
                "Surface code decoders below threshold",
                "A fast decoder for surface codes in quantum error correction: "
                "logical qubits from noisy physical qubits, below threshold.",
            )
        }
    )

    slow, commit = ingest_committing_late(late)
    upsert_records(
        records(
            {
                "2606.20004": (
                    "Agents that browse the web",
                    "A language model agent trained with reinforcement learning "
                    "on web environments and tool calls.",
                )
            }
        )
    )
    similar.update_similar()
    commit.set()
    slow.join(30)

    similar.update_similar()

    assert SimilarPaper.objects.filter(paper__arxiv_id="2606.30004").exists()
    assert PaperVector.objects.filter(paper__arxiv_id="2606.30004").exists()
