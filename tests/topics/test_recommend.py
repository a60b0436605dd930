"""For you (topics.recommend): a reader's model trained on their saves and
ratings over the stored vectors, their list of the newest papers it ranks
highest, new papers scored into it after ingest, the vocabulary refitted, the
home feed's order and reasons, and GET /api/v1/me/recommendations/."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from unittest import mock

import numpy as np
import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.core.cache import cache
from django.test import override_settings
from django.urls import reverse

from papers.ingest.runs import ingest_entries
from papers.ingest.upsert import upsert_records
from papers.library import set_rating
from papers.library import set_saved
from papers.models import IngestRun
from papers.models import Paper
from papers.models import PaperVector
from papers.models import Rating
from papers.models import ReaderModel
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from tests.topics.test_similar import AGENTS
from tests.topics.test_similar import PAPERS
from tests.topics.test_similar import PROTEIN
from tests.topics.test_similar import QUANTUM
from tests.topics.test_similar import store
from topics import recommend
from topics import similar
from topics.following import set_following
from topics.tagging import IngestTagger
from topics.tagging import tag_papers
from topics.tasks import train_reader_models
from topics.tasks import update_similar_papers

pytestmark = pytest.mark.django_db

# The home feed in For you order, rendered anew; serving it writes nothing
# (papers.views.seen).
MAX_FEED_QUERIES = 17
# Token and user, the model's version, what they follow (four), the page's
# newest of each kind followed (one here), the papers (authors, categories,
# topics): 11, whatever the page size.
MAX_NEWEST_QUERIES = 11


def paper(arxiv_id: str) -> Paper:
    return Paper.objects.get(arxiv_id=arxiv_id)


def listed(user_id: int) -> list[str]:
    ids = [pk for pk, _ in recommend.recommended(user_id)]
    arxiv_ids = dict(Paper.objects.filter(pk__in=ids).values_list("pk", "arxiv_id"))
    return [arxiv_ids[pk] for pk in ids]


@pytest.fixture
def indexed(db):
    """The small corpus of three subjects, its vectors stored."""
    store()
    similar.build_all()


@pytest.fixture
def likes_agents(alice, indexed):
    """alice saved two agent papers and rated a protein paper 👎."""
    with mock.patch.object(recommend, "request_training"):
        set_saved(alice, paper(AGENTS[0]), True)
        set_rating(alice, paper(AGENTS[1]), Rating.UP)
        set_rating(alice, paper(PROTEIN[0]), Rating.DOWN)
    return recommend.train(alice.pk)


def test_a_build_stores_every_papers_vector(indexed):
    assert PaperVector.objects.count() == len(PAPERS)


def test_the_model_ranks_papers_like_the_readers_first(alice, likes_agents):
    assert likes_agents.positives == 2
    ranked = listed(alice.pk)
    # Not what they rated; the third agent paper first.
    assert not {AGENTS[0], AGENTS[1], PROTEIN[0]} & set(ranked)
    assert ranked[0] == AGENTS[2]
    # Ranked best first.
    scores = [score for _, score in recommend.recommended(alice.pk)]
    assert scores == sorted(scores, reverse=True)


def test_the_same_signal_is_not_learnt_twice(alice, likes_agents):
    again = recommend.train(alice.pk)
    assert again.trained_at == likes_agents.trained_at


def test_a_reader_without_a_positive_has_no_model(alice, bob, likes_agents):
    with mock.patch.object(recommend, "request_training"):
        set_rating(bob, paper(QUANTUM[0]), Rating.DOWN)
        set_saved(alice, paper(AGENTS[0]), False)
        set_rating(alice, paper(AGENTS[1]), None)

    assert recommend.train(bob.pk) is None
    assert recommend.train(alice.pk) is None
    assert not ReaderModel.objects.exists()
    assert recommend.recommended(alice.pk) == []


def test_nothing_is_trained_before_similar_papers_are_built(alice):
    store()
    with mock.patch.object(recommend, "request_training"):
        set_saved(alice, paper(AGENTS[0]), True)
    assert recommend.train(alice.pk) is None


def test_a_burst_of_changes_asks_for_one_training_after_the_commit(
    alice, indexed, django_capture_on_commit_callbacks
):
    with (
        mock.patch("topics.tasks.train_reader_model.apply_async") as send,
        django_capture_on_commit_callbacks(execute=True),
    ):
        set_saved(alice, paper(AGENTS[0]), True)
        set_rating(alice, paper(AGENTS[1]), Rating.UP)
        set_rating(alice, paper(PROTEIN[0]), Rating.DOWN)

    assert send.call_count == 1
    (args,), options = send.call_args
    assert args == (alice.pk,)
    assert options["countdown"] > 0
    # The training clears the mark: the next change asks again.
    recommend.train(alice.pk)
    assert cache.get(recommend.training_due_key(alice.pk)) is None


@override_settings(CELERY_TASK_ALWAYS_EAGER=True)
def test_in_process_tasks_train_after_the_save_not_in_it(
    client, alice, indexed, monkeypatch, django_capture_on_commit_callbacks
):
    """In the embedded default (tasks in process) a reader's Save trained
    their model in the request: the button waited 1 to 8 s on the demo."""
    later = []
    monkeypatch.setattr("core.queue._run_later", lambda *args: later.append(args))
    client.force_login(alice)

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("papers:save", args=[AGENTS[0]]))

    assert response.status_code == 302
    assert not ReaderModel.objects.filter(user=alice).exists()
    # The process's thread trains it once the request is over.
    [(_, task, args)] = later
    task.apply(args, throw=True)
    assert ReaderModel.objects.get(user=alice).positives == 1


NEW_AGENT = {
    "2606.20004": (
        "Long-horizon agents trained with environment rewards",
        "We train language model agents with reinforcement learning from "
        "environment rewards; the policy improves on long horizons of tool calls "
        "in web environments.",
    )
}
NEW_QUANTUM = {
    "2606.30004": (
        "Faster decoders for surface codes",
        "A decoder for surface codes corrects errors on physical qubits below the "
        "threshold error rate in quantum error correction.",
    )
}


def test_new_papers_are_scored_into_the_lists_after_ingest(alice, likes_agents):
    store({**NEW_AGENT, **NEW_QUANTUM})
    update_similar_papers()

    ranked = listed(alice.pk)
    assert ranked.index("2606.20004") < ranked.index("2606.30004")
    assert ranked.index("2606.20004") <= 1
    # Scored with the stored vector the similar papers' pass wrote.
    assert PaperVector.objects.filter(paper__arxiv_id="2606.20004").exists()


def test_a_pass_stopped_before_its_scoring_is_done_scores_them_when_run_again(
    alice, likes_agents
):
    """A worker killed (or the task past its time limit) once the similar
    papers were stored: the task run again, or the hourly sweep, found nothing
    changed, and the new papers never reached a reader's list."""
    store(NEW_AGENT)
    # Stopped as it writes the readers' lists.
    stopped = mock.patch.object(
        recommend, "update_rows", side_effect=SoftTimeLimitExceeded
    )
    with stopped, pytest.raises(SoftTimeLimitExceeded):
        update_similar_papers()

    update_similar_papers()  # redelivered, or the sweep's

    assert "2606.20004" in listed(alice.pk)


def test_scoring_keeps_each_readers_best_and_never_a_paper_they_rated(
    alice, likes_agents
):
    # alice's two agent papers score highest of all, and she rated both: with a
    # list of two, the product must keep more than two per reader, or scoring
    # them again (a changed paper is) would leave the new agent paper out.
    with mock.patch.object(recommend, "RECOMMENDED", 2):
        recommend.train(alice.pk)
        new = store({**NEW_AGENT, **NEW_QUANTUM})
        update_similar_papers()
        rescored = [paper(AGENTS[0]).pk, paper(AGENTS[1]).pk, *new]
        result = recommend.score_papers(rescored)

    ranked = listed(alice.pk)
    assert result.papers == 4
    assert len(ranked) == 2
    assert "2606.20004" in ranked
    assert not {AGENTS[0], AGENTS[1]} & set(ranked)


def test_papers_that_leave_the_window_leave_the_lists(alice, likes_agents):
    with mock.patch.object(recommend, "WINDOW", 3):
        store(NEW_AGENT)
        update_similar_papers()
        ranked = listed(alice.pk)

    newest = Paper.objects.order_by("-first_announced", "-id")[:3]
    assert set(ranked) <= {p.arxiv_id for p in newest}
    assert "2606.20004" in ranked


def test_a_refitted_vocabulary_keeps_the_models_and_scores_them_anew(
    alice, likes_agents
):
    before = listed(alice.pk)
    store(NEW_AGENT)
    result = similar.build_all()

    assert result.built
    model = ReaderModel.objects.get(user=alice)
    assert model.trained_at == likes_agents.trained_at  # remapped, not retrained
    ranked = listed(alice.pk)
    assert ranked[0] in {AGENTS[2], "2606.20004"}
    assert set(before) <= set(ranked)


def test_each_recommendation_names_the_readers_paper_most_like_it(alice, likes_agents):
    agent, quantum = paper(AGENTS[2]), paper(QUANTUM[0])
    with mock.patch.object(recommend, "request_training"):
        set_saved(alice, paper(QUANTUM[1]), True)
    found = recommend.reasons(alice.pk, [agent.pk, quantum.pk])

    assert found[agent.pk].arxiv_id in {AGENTS[0], AGENTS[1]}
    assert found[quantum.pk].arxiv_id == QUANTUM[1]
    assert found[quantum.pk].saved


# THE HOME FEED
# ------------------------------------------------------------------------------


def _five_positives(user) -> None:
    with mock.patch.object(recommend, "request_training"):
        for arxiv_id in [*AGENTS[:2], *QUANTUM]:
            set_saved(user, paper(arxiv_id), True)
    recommend.train(user.pk)


def test_for_you_is_the_first_order_from_five_positives(reader, alice, indexed):
    set_following(alice, make_topic(rule="ti:agent"), True)
    _five_positives(alice)

    page = reader.get("/").content.decode()
    assert 'aria-current="page">For you' in page
    # Its list is bounded (RECOMMENDED): said as such, not as the feed's count.
    count = len(recommend.recommended(alice.pk))
    # Which newest: the window it draws from, counted in papers.
    said = (
        f"The {count} papers of the 20,000 newest on Momentum, whatever their topic, "
        "most like those you saved"
    )
    assert said in page
    assert '<h1 id="feed-heading">Your feed</h1>' in page
    assert "Like <a" in page
    assert "which you saved" in page
    assert "/papers/2606.20003/" in page

    newest = reader.get("/?order=newest").content.decode()
    assert 'aria-current="page">Newest' in newest
    assert 'Your feed <span class="count">' in newest
    assert "which you saved" not in newest


def test_the_for_you_feeds_pages_are_not_called_older_or_newer(
    reader, alice, indexed, monkeypatch
):
    """Its papers are best first, of any day: its next page holds papers the
    model likes less, not older ones; the newest order's are older."""
    monkeypatch.setattr("topics.views.PAPERS_PER_PAGE", 2)
    set_following(alice, make_topic(rule="abs:protein"), True)
    tag_papers(list(Paper.objects.values_list("pk", flat=True)))
    _five_positives(alice)

    first = reader.get("/").content.decode()
    second = reader.get("/?page=2").content.decode()
    assert 'rel="next" href="?page=2">Next →</a>' in first
    assert 'rel="prev" href="?page=1">← Previous</a>' in second
    assert "Older" not in first
    assert "Newer" not in second

    newest = reader.get("/?order=newest").content.decode()
    assert 'href="?order=newest&amp;page=2">Older →</a>' in newest


def test_a_reason_shows_the_saved_papers_latex_title_as_text(reader, alice, indexed):
    saved = [*AGENTS[:2], *QUANTUM]
    Paper.objects.filter(arxiv_id__in=saved).update(title=r"$\alpha$-saved \emph{x}")
    _five_positives(alice)

    page = reader.get("/").content.decode()

    assert "\u03b1-saved x</a>, which you saved" in page
    assert "\\alpha" not in page


def test_with_fewer_positives_newest_comes_first_and_for_you_is_offered(
    reader, alice, likes_agents
):
    page = reader.get("/").content.decode()
    assert 'aria-current="page">Newest' in page
    assert 'href="?order=for-you"' in page

    for_you = reader.get("/?order=for-you").content.decode()
    assert "which you saved" in for_you or "which you liked" in for_you
    assert "once you have saved or liked five papers" in for_you


def test_the_for_you_feed_follows_a_new_training_at_once(
    reader, alice, likes_agents, django_capture_on_commit_callbacks
):
    before = reader.get("/?order=for-you").content.decode()
    assert "once you have saved or liked five papers" in before

    with django_capture_on_commit_callbacks(execute=True):
        with mock.patch.object(recommend, "request_training"):
            for arxiv_id in QUANTUM:
                set_saved(alice, paper(arxiv_id), True)
        recommend.train(alice.pk)
    after = reader.get("/?order=for-you").content.decode()

    # Not the page rendered before, kept while nothing shared moved.
    assert "once you have saved or liked five papers" not in after
    assert after != before


def test_the_for_you_feed_follows_a_follow_or_unfollow_at_once(reader, alice, indexed):
    """Its render is the reader's (their list), but it lists what they follow
    beside it: an author or topic unfollowed in settings was still listed
    under Your authors or Your topics until something shared moved."""
    agents, quantum = make_topic("Agents", rule="ti:agent"), make_topic("Quantum")
    set_following(alice, agents, True)
    set_following(alice, quantum, True)
    _five_positives(alice)
    assert 'href="/topics/quantum/">Quantum</a>' in reader.get("/").text

    reader.post("/topics/quantum/follow/", {"on": "0"})

    page = reader.get("/").text
    assert 'aria-current="page">For you' in page
    assert 'href="/topics/quantum/">Quantum</a>' not in page


def test_the_for_you_feed_follows_new_papers_scored_into_its_list(
    reader, alice, indexed, django_capture_on_commit_callbacks
):
    """New papers are scored into the lists after the ingest that stored them,
    by the similar papers' pass: the page, kept under the reader's For you
    version, which only a training moved, showed the list before for ten
    minutes, where the API gave the new one."""
    set_following(alice, make_topic(rule="ti:agent"), True)
    _five_positives(alice)
    store(NEW_AGENT)
    assert "/papers/2606.20004/" not in reader.get("/").text  # not scored yet

    with django_capture_on_commit_callbacks(execute=True):
        update_similar_papers()

    assert "2606.20004" in listed(alice.pk)
    assert "/papers/2606.20004/" in reader.get("/").text


def test_the_for_you_feed_follows_its_list_scored_on_a_refitted_vocabulary(
    reader, alice, indexed, django_capture_on_commit_callbacks
):
    set_following(alice, make_topic(rule="ti:agent"), True)
    _five_positives(alice)
    store(NEW_AGENT)
    assert "/papers/2606.20004/" not in reader.get("/").text

    with django_capture_on_commit_callbacks(execute=True):
        assert similar.build_all().built

    assert "/papers/2606.20004/" in reader.get("/").text


def test_the_for_you_feed_shows_a_listed_papers_new_version_at_once(
    reader, alice, indexed, django_capture_on_commit_callbacks
):
    """A listed paper that is not among the newest (those move the home page)
    changes: its row in For you shows it at once, not once the page expires."""
    set_following(alice, make_topic(rule="ti:agent"), True)
    _five_positives(alice)
    newer = datetime(2026, 7, 1, 15, 0, tzinfo=UTC)
    upsert_records(
        [paper_record(f"2607.{n:05d}", published=newer) for n in range(1, 30)]
    )
    assert "/papers/2606.20003/" in reader.get("/").text

    with django_capture_on_commit_callbacks(execute=True):
        record = paper_record("2606.20003", version=2, title="Agents, retitled")
        ingest_entries(
            IngestRun.objects.create(source="t"), [record], tagger=IngestTagger()
        )

    assert "Agents, retitled" in reader.get("/").text


def test_a_reader_without_a_model_sees_their_topics_newest_first(reader, alice):
    topic = make_topic(rule="ti:agent")
    set_following(alice, topic, True)

    page = reader.get("/?order=for-you").content.decode()
    assert "Order of the feed" not in page
    assert "newest first" in page


def test_two_readers_never_see_each_others_for_you(alice, bob, indexed):
    from tests.clients import signed_in

    _five_positives(alice)
    with mock.patch.object(recommend, "request_training"):
        for arxiv_id in [*PROTEIN[:2], "2606.40001", *QUANTUM[:2]]:
            set_saved(bob, paper(arxiv_id), True)
    recommend.train(bob.pk)

    alices = signed_in(alice).get("/").content.decode()
    bobs = signed_in(bob).get("/").content.decode()
    assert alices.index("/papers/2606.20003/") < alices.index("/papers/2606.10003/")
    assert bobs.index("/papers/2606.10003/") < bobs.index("/papers/2606.20003/")


def test_the_for_you_feed_is_a_bounded_number_of_queries(
    reader, alice, indexed, django_assert_max_num_queries
):
    _five_positives(alice)
    with django_assert_max_num_queries(MAX_FEED_QUERIES):
        assert reader.get("/").status_code == 200


# THE API
# ------------------------------------------------------------------------------


def test_recommendations_come_in_cursor_pages_with_scores_and_reasons(
    as_alice, alice, likes_agents
):
    everything = listed(alice.pk)
    seen, url = [], "/api/v1/me/recommendations/?page_size=3"
    while url:
        body = as_alice.get(url).json()
        for item in body["results"]:
            seen.append(item["paper"]["arxiv_id"])
            assert isinstance(item["score"], float)
        url = body["next"]
    assert seen == everything

    first = as_alice.get("/api/v1/me/recommendations/").json()["results"][0]
    assert first["paper"]["arxiv_id"] == AGENTS[2]
    assert first["reason"]["paper"] in {AGENTS[0], AGENTS[1]}
    assert set(first["reason"]) == {"paper", "title", "saved"}


def test_without_a_model_recommendations_are_what_they_follow_newest_first(
    bob, as_bob, likes_agents, django_assert_max_num_queries
):
    url = "/api/v1/me/recommendations/"
    assert as_bob.get(url).json() == {"order": "newest", "next": None, "results": []}

    quantum = make_topic("Quantum", rule="abs:quantum", slug="quantum")
    tag_papers(Paper.objects.values_list("pk", flat=True))
    set_following(bob, quantum, True)
    newest = list(
        Paper.objects.filter(paper_topics__topic=quantum)
        .order_by("-first_announced", "-id")
        .values_list("arxiv_id", flat=True)
    )
    assert sorted(newest) == QUANTUM

    seen, url = [], f"{url}?page_size=2"
    while url:
        with django_assert_max_num_queries(MAX_NEWEST_QUERIES):
            body = as_bob.get(url).json()
        assert body["order"] == "newest"
        for item in body["results"]:
            seen.append(item["paper"]["arxiv_id"])
            assert item["score"] is None
            assert item["reason"] is None
        url = body["next"]
    assert seen == newest


def test_a_newest_cursor_outside_the_calendar_is_still_a_position(
    bob, as_bob, likes_agents
):
    quantum = make_topic("Quantum", rule="abs:quantum", slug="quantum")
    tag_papers(Paper.objects.values_list("pk", flat=True))
    set_following(bob, quantum, True)

    url = "/api/v1/me/recommendations/?cursor="
    # Past the last day there is: from the newest. No day (0 or less): after
    # an undated paper, which come first, so every dated one.
    for cursor in ("n999999999999.1", "n-5.1", "n0.1"):
        response = as_bob.get(url + cursor)
        assert response.status_code == 200
        assert len(response.json()["results"]) == 3


def test_a_walk_across_the_models_coming_or_going_starts_the_new_order_from_its_top(
    as_alice, alice, likes_agents
):
    """A for-you cursor once the model is gone (or a newest one once it is
    trained) is no position in the other order: read as one, a score was a day
    centuries ago, an empty last page, and the client stopped."""
    everything = make_topic("Everything", rule="abs:the OR abs:a", slug="everything")
    tag_papers(Paper.objects.values_list("pk", flat=True))
    set_following(alice, everything, True)
    url = "/api/v1/me/recommendations/?page_size=2"
    ranked = as_alice.get(url).json()
    assert ranked["order"] == "for-you"

    with mock.patch.object(recommend, "request_training"):
        set_saved(alice, paper(AGENTS[0]), False)
        set_rating(alice, paper(AGENTS[1]), None)
    recommend.train(alice.pk)  # nothing liked: the model is dropped
    newest = as_alice.get(ranked["next"]).json()
    from_the_top = as_alice.get(url).json()

    assert newest["order"] == "newest"
    assert newest == from_the_top
    assert len(newest["results"]) == 2
    assert "cursor=n" in newest["next"]
    assert "cursor=f" in ranked["next"]


def test_recommendations_refuse_a_bad_cursor_or_parameter(as_alice, likes_agents):
    for cursor in ("abc", "12.3", "x12.3"):
        bad = as_alice.get(f"/api/v1/me/recommendations/?cursor={cursor}")
        assert bad.status_code == 400
        assert "cursor" in bad.json()["error"]["fields"]
    assert as_alice.get("/api/v1/me/recommendations/?order=x").status_code == 400


def test_recommendations_need_a_signed_in_caller(anonymous, likes_agents):
    assert anonymous.get("/api/v1/me/recommendations/").status_code in (401, 403)


def test_recommendations_are_a_bounded_number_of_queries(
    as_alice, likes_agents, django_assert_num_queries
):
    # Token and user, the list's version and the list, the papers (authors,
    # categories, topics), the reasons (positives, vectors); whatever the size.
    for size in (1, 6):
        with django_assert_num_queries(9):
            url = f"/api/v1/me/recommendations/?page_size={size}"
            assert len(as_alice.get(url).json()["results"]) == size


def test_a_stored_list_keeps_ids_past_32_bits():
    ids = np.asarray([2**40 + 1, 7], dtype=np.int64)
    scores = np.asarray([0.5, 0.25], dtype=np.float32)
    again_ids, again_scores = recommend.unpack_list(*recommend.pack_list(ids, scores))
    assert again_ids.tolist() == ids.tolist()
    assert again_scores.tolist() == scores.tolist()


def test_recommendations_are_served_again_from_the_cache_until_the_list_moves(
    as_alice, alice, likes_agents, django_assert_num_queries
):
    url = "/api/v1/me/recommendations/"
    first = as_alice.get(url)
    # Token and user, and the list's version: the body is the cached one.
    with django_assert_num_queries(2):
        again = as_alice.get(url)
    assert again.json() == first.json()
    assert as_alice.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304

    store(NEW_AGENT)
    update_similar_papers()
    moved = as_alice.get(url)
    assert moved["ETag"] != first["ETag"]
    assert "2606.20004" in [
        item["paper"]["arxiv_id"] for item in moved.json()["results"]
    ]


def test_a_positive_saved_before_its_vector_is_learnt_once_it_has_one(
    reader, alice, indexed
):
    """alice's fifth save is a paper ingested moments before, which the similar
    papers' pass has not yet given a vector: her training learns four; the
    pass then stores its vector, and the nightly sweep learns the fifth."""
    (new,) = store(NEW_AGENT)
    with mock.patch.object(recommend, "request_training"):
        for arxiv_id in [*AGENTS[:2], *QUANTUM[:2]]:
            set_saved(alice, paper(arxiv_id), True)
        set_saved(alice, Paper.objects.get(pk=new), True)
    assert recommend.train(alice.pk).positives == 4

    assert not similar.update_after_ingest().built
    train_reader_models()

    assert ReaderModel.objects.get(user=alice).positives == 5
    assert 'aria-current="page">For you' in reader.get("/").content.decode()
