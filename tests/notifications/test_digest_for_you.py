"""The digest of a reader with a For you model (topics.recommend): each
section's papers most like theirs first, the cap leaving out the least liked,
and the mail saying so; a reader without one gets newest first as before."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from datetime import timedelta
from unittest import mock

import pytest
from django.core import mail

from accounts.models import User
from notifications.content import shape_digests
from notifications.delivery import hand_out
from notifications.delivery import open_due_digests
from notifications.delivery import send_digests
from notifications.mailer import Mailer
from notifications.plan import PlanRequest
from notifications.plan import plan_digests
from papers.library import set_rating
from papers.library import set_saved
from papers.models import Paper
from papers.models import Rating
from tests.accounts.factories import verified
from tests.topics.factories import make_topic
from tests.topics.test_similar import AGENTS
from tests.topics.test_similar import PAPERS
from tests.topics.test_similar import QUANTUM
from tests.topics.test_similar import store
from topics import recommend
from topics import similar
from topics.following import set_following
from topics.tagging import tag_papers

pytestmark = pytest.mark.django_db

WEEK = timedelta(days=7)


@pytest.fixture
def everything(db):
    """A topic holding every paper of the small corpus (all cs.LG), built."""
    topic = make_topic("Machine Learning", rule="cat:cs.LG", slug="ml")
    tag_papers(store())
    similar.build_all()
    return topic


def plan_of(user, max_papers: int = 30):
    first = Paper.objects.order_by("first_announced").first().first_announced
    last = Paper.objects.order_by("first_announced").last().first_announced
    request = PlanRequest(user.pk, first, WEEK, max_papers, last, fresh=True)
    return plan_digests([request])[user.pk]


def planned_ids(plan) -> list[str]:
    ids = [entry[0] for entry in plan.sections[0]["papers"]]
    arxiv_ids = dict(Paper.objects.filter(pk__in=ids).values_list("pk", "arxiv_id"))
    return [arxiv_ids[pk] for pk in ids]


def likes(user, arxiv_ids) -> None:
    with mock.patch.object(recommend, "request_training"):
        for arxiv_id in arxiv_ids:
            set_saved(user, Paper.objects.get(arxiv_id=arxiv_id), True)
    recommend.train(user.pk)


def test_a_readers_model_orders_each_section_best_first(alice, bob, everything):
    for reader in (alice, bob):
        set_following(reader, everything, True)
    likes(alice, AGENTS[:2])
    likes(bob, QUANTUM[:2])

    alices, bobs = plan_of(alice), plan_of(bob)

    assert alices.sections[0]["ranked"] is True
    # The one they did not save first; those they saved are left out.
    assert planned_ids(alices)[0] == AGENTS[2]
    assert planned_ids(bobs)[0] == QUANTUM[2]
    # Each paper once, whatever the order.
    assert sorted(planned_ids(alices)) == sorted(set(PAPERS) - set(AGENTS[:2]))


def test_papers_the_reader_saved_or_rated_are_left_out(alice, everything):
    set_following(alice, everything, True)
    set_rating(alice, Paper.objects.get(arxiv_id=QUANTUM[0]), Rating.DOWN)
    set_rating(alice, Paper.objects.get(arxiv_id=QUANTUM[1]), Rating.UP)

    left_out = set(PAPERS) - set(planned_ids(plan_of(alice)))

    # No model: they learnt of no positive yet; left out all the same.
    assert left_out == {QUANTUM[0], QUANTUM[1]}


def test_the_cap_leaves_out_the_papers_the_model_likes_least(alice, everything):
    set_following(alice, everything, True)
    likes(alice, AGENTS[:2])

    plan = plan_of(alice, max_papers=3)

    assert AGENTS[2] in planned_ids(plan)
    assert plan.sections[0]["more"] == len(PAPERS) - 2 - 3  # the two saved out


def test_without_a_model_the_digest_is_newest_first(alice, everything):
    set_following(alice, everything, True)

    plan = plan_of(alice)

    assert "ranked" not in plan.sections[0]
    days = [
        Paper.objects.get(arxiv_id=arxiv_id).first_announced
        for arxiv_id in planned_ids(plan)
    ]
    assert days == sorted(days, reverse=True)


def test_the_shaped_digest_knows_it_is_ranked(alice, everything):
    set_following(alice, everything, True)
    likes(alice, AGENTS[:2])

    [content] = shape_digests([plan_of(alice)], "http://testserver")

    assert content.ranked
    assert content.sections[0].ranked


def test_the_mail_says_its_papers_are_ranked_for_the_reader(alice, everything):
    reader = verified(alice)
    User.objects.filter(pk=reader.pk).update(
        date_joined=datetime(2026, 6, 1, tzinfo=UTC)
    )
    set_following(reader, everything, True)
    likes(reader, AGENTS[:2])

    open_due_digests(at=datetime(2026, 6, 15, 9, tzinfo=UTC))
    [outcome] = send_digests(hand_out(), mailer=Mailer())

    assert outcome.status == "sent"
    [message] = mail.outbox
    ranked = (
        "those most like the papers you saved and liked come first; "
        "those you saved or rated are left out"
    )
    assert ranked in message.body
    assert ranked in message.alternatives[0][0]
    # The agent papers lead the section.
    body = message.body
    assert body.index(PAPERS[AGENTS[2]][0]) < body.index(PAPERS[QUANTUM[0]][0])
