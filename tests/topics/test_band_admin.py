"""The band in admin, as a curator meets it: pending papers first by uncertainty,
the judge's verdicts, bulk decisions, the topic's definition as help text, and
"N awaiting review" on the topic list and change page, in bounded queries."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from papers.ingest.upsert import upsert_records
from papers.models import Paper
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from tests.topics.test_review_queue import trained_model
from topics.models import JudgeVerdict
from topics.models import PaperTopic
from topics.models import ReviewItem
from topics.models import Topic
from topics.models import TopicAlias
from topics.models import TopicExclusion

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:topics_reviewitem_changelist"


@pytest.fixture
def topic() -> Topic:
    return make_topic(
        rule="ti:agent",
        membership=Topic.Membership.AUTO,
        definition="Agents trained with reinforcement learning; not prompting.",
    )


@pytest.fixture
def band(topic) -> dict[str, ReviewItem]:
    """Five pending papers at different distances from even odds, and one the
    judge decided."""
    upsert_records(
        [paper_record(f"2606.{n:05d}", title=f"Paper {n}") for n in range(1, 7)]
    )
    papers = {paper.arxiv_id: paper for paper in Paper.objects.all()}
    probabilities = [0.7, 0.52, 0.35, 0.45, 0.6]
    items = {
        f"p{p}": ReviewItem.objects.create(
            topic=topic,
            paper=papers[f"2606.{n:05d}"],
            score=p,
            probability=p,
            pending=True,
        )
        for n, p in enumerate(probabilities, 1)
    }
    judged = papers["2606.00006"]
    items["judged"] = ReviewItem.objects.create(
        topic=topic, paper=judged, score=0.5, probability=0.5, pending=False
    )
    JudgeVerdict.objects.create(
        topic=topic, paper=judged, belongs=True, reason="Trains agents.", model="m1"
    )
    PaperTopic.objects.create(topic=topic, paper=judged, source="judge")
    return items


def test_the_queue_puts_the_most_uncertain_first(admin_client, band):
    text = admin_client.get(reverse(CHANGELIST)).text

    titles = ["Paper 6", "Paper 2", "Paper 4", "Paper 5", "Paper 3", "Paper 1"]
    positions = [text.index(f">{title}</a>") for title in titles]
    assert positions == sorted(positions)
    assert "Uncertain: awaiting review" in text
    assert "Judge (m1) says in: Trains agents." in text


def test_the_queue_shows_the_chance_it_is_ordered_by(admin_client, topic, band):
    """A calibrated probability of 0.50 beside a model score of 0.69: the column
    shows what orders the queue, `why` says what the model alone thinks."""
    item = band["p0.6"]
    item.score, item.probability = 0.69, 0.5
    item.rule_matched, item.rule_terms = True, ["agent"]
    item.save()

    text = admin_client.get(reverse(CHANGELIST)).text

    assert "Chance it belongs" in text
    assert '<td class="field-chance_text">0.50</td>' in text
    assert '<td class="field-chance_text">0.69</td>' not in text
    why = "Uncertain: awaiting review; rule matched “agent”; model score 0.69 agrees"
    assert why in text


def test_the_pending_filter_and_definition_help(admin_client, topic, band):
    url = f"{reverse(CHANGELIST)}?topic__id__exact={topic.pk}&kind=pending"

    text = admin_client.get(url).text

    assert "What belongs in RL for LLM Agents:" in text
    assert "Agents trained with reinforcement learning; not prompting." in text
    assert "Paper 2" in text
    assert "Paper 6" not in text  # judged, no longer pending


def test_judged_filter_lists_the_verdicts(admin_client, band):
    text = admin_client.get(f"{reverse(CHANGELIST)}?kind=judged").text

    assert "Paper 6" in text
    assert "Paper 2" not in text


def test_bulk_decisions_settle_pending_papers_and_override_the_judge(
    admin_client, topic, band
):
    chosen = [band["p0.52"].pk, band["judged"].pk]

    response = admin_client.post(
        reverse(CHANGELIST),
        {"action": "exclude_selected", "_selected_action": chosen},
    )

    assert response.status_code == 302
    excluded = set(
        TopicExclusion.objects.filter(topic=topic).values_list("paper_id", flat=True)
    )
    assert excluded == {band["p0.52"].paper_id, band["judged"].paper_id}
    assert not PaperTopic.objects.filter(topic=topic, source="judge").exists()
    assert not ReviewItem.objects.filter(pk__in=chosen).exists()
    assert ReviewItem.objects.filter(topic=topic, pending=True).count() == 4


def test_the_queue_reads_in_bounded_queries(
    admin_client, topic, band, django_assert_max_num_queries
):
    for n in range(7, 37):
        upsert_records([paper_record(f"2606.{n:05d}", title=f"Paper {n}")])
        paper = Paper.objects.get(arxiv_id=f"2606.{n:05d}")
        ReviewItem.objects.create(
            topic=topic, paper=paper, score=0.5, probability=0.5, pending=True
        )

    with django_assert_max_num_queries(14):
        response = admin_client.get(
            f"{reverse(CHANGELIST)}?topic__id__exact={topic.pk}"
        )

    assert response.status_code == 200


def test_the_queue_is_ordered_without_its_papers_and_shows_them(
    admin_client, topic, band
):
    """The queue is ordered over every item: joined, each paper's whole row
    (its abstract) was carried through that ordering (30,000 items at 100,000
    papers: 0.3-1.1 s a page); the page's 30 papers are read on their own."""
    with CaptureQueriesContext(connection) as captured:
        response = admin_client.get(reverse(CHANGELIST))

    ordered = [q["sql"] for q in captured if "ORDER BY" in q["sql"]]
    queue = [sql for sql in ordered if 'FROM "topics_reviewitem"' in sql]
    assert queue
    assert not [sql for sql in queue if '"papers_paper"' in sql]
    assert "Paper 2" in response.text  # each row's title and id
    assert "arXiv:2606.00002" in response.text


def test_topic_admin_says_how_many_await_review(
    admin_client, topic, band, django_assert_max_num_queries
):
    trained_model(topic)
    for n in range(5):
        make_topic(f"Other {n}", rule="ti:other", slug=f"other-{n}")
    queue = reverse(CHANGELIST)

    with django_assert_max_num_queries(12):
        listing = admin_client.get(reverse("admin:topics_topic_changelist")).text
    change = admin_client.get(
        reverse("admin:topics_topic_change", args=[topic.pk])
    ).text

    pending_url = f"{queue}?topic__id__exact={topic.pk}&amp;pending__exact=1"
    # Short under the column's heading, in full in the link's title.
    assert f'<a href="{pending_url}" title="5 awaiting review">5 awaiting</a>' in (
        listing
    )
    assert f'<a href="{pending_url}">5 awaiting review</a>' in change
    assert "6 papers to review" in change
    assert "5 papers in the band await review" in change
    assert "deciding the 5 most uncertain first helps most" in change
    assert 'name="definition"' in change
    assert 'name="precision_target"' in change


def test_topic_admin_says_which_papers_readers_flagged(admin_client):
    """A rule-only topic's queue holds only readers' flags: its row in the
    topic list said "—" under "awaiting review", its page only "1 paper to
    review", and a flag waited unseen."""
    topic = make_topic("Robots", rule="ti:robot", slug="robots")
    upsert_records([paper_record("2606.00001", title="A robot")])
    flagged = ReviewItem.objects.create(
        topic=topic, paper=Paper.objects.get(), rule_matched=True, flags=2
    )
    flagged_url = f"{reverse(CHANGELIST)}?topic__id__exact={topic.pk}&amp;kind=flagged"

    listing = admin_client.get(reverse("admin:topics_topic_changelist")).text
    change = admin_client.get(
        reverse("admin:topics_topic_change", args=[topic.pk])
    ).text

    link = f'<a href="{flagged_url}">1 flagged by readers</a>'
    listed = f'<a href="{flagged_url}" title="1 flagged by readers">1 flagged</a>'
    assert f'<td class="field-awaiting_review">{listed}</td>' in listing
    assert f"0 awaiting review</a>, {link}" in change

    flagged.delete()
    listing = admin_client.get(reverse("admin:topics_topic_changelist")).text
    assert '<td class="field-awaiting_review">—</td>' in listing


@pytest.mark.parametrize(
    "changelist",
    ["admin:topics_topic_changelist", "admin:topics_topicmodel_changelist"],
)
def test_lists_of_topics_and_their_models_read_no_model_weights(
    admin_client, topic, changelist
):
    """A trained model's weights are about 1 MB of JSON at 100,000 papers:
    read for each topic listed, 100 trained topics made the topic list 1.4 s
    and the models' list 2.5 s."""
    trained_model(topic, weights={"vocabulary": {"agent": 0}, "idf": [1.0]})

    with CaptureQueriesContext(connection) as captured:
        response = admin_client.get(reverse(changelist))

    assert response.status_code == 200
    assert topic.name in response.text
    assert not [q for q in captured if '"weights"' in q["sql"]]


def test_a_topics_change_page_reads_no_model_weights(admin_client, topic):
    """Its model's summary read the whole model, weights and all."""
    trained_model(topic, weights={"vocabulary": {"agent": 0}, "idf": [1.0]})

    with CaptureQueriesContext(connection) as captured:
        response = admin_client.get(
            reverse("admin:topics_topic_change", args=[topic.pk])
        )

    assert "v3, trained" in response.text
    assert not [q for q in captured if '"weights"' in q["sql"]]


def curated(topic: Topic, n: int) -> None:
    """n more of each thing a topic's change page lists or counts: pins,
    exclusions, papers awaiting review that readers flagged, former addresses
    and related topics."""
    start = Paper.objects.count()
    upsert_records(
        [
            paper_record(f"2607.{start + k:05d}", title=f"Curated paper {k}")
            for k in range(3 * n)
        ]
    )
    papers = list(Paper.objects.order_by("-pk")[: 3 * n])
    PaperTopic.objects.bulk_create(
        PaperTopic(topic=topic, paper=paper, source="pin") for paper in papers[:n]
    )
    TopicExclusion.objects.bulk_create(
        TopicExclusion(topic=topic, paper=paper) for paper in papers[n : 2 * n]
    )
    ReviewItem.objects.bulk_create(
        ReviewItem(topic=topic, paper=paper, pending=True, flags=1)
        for paper in papers[2 * n :]
    )
    for k in range(start, start + n):
        TopicAlias.objects.create(topic=topic, slug=f"former-{k}")
        topic.related.add(make_topic(f"Related {k}", slug=f"related-{k}"))


def test_a_topics_change_page_reads_as_few_queries_however_much_it_holds(
    admin_client, topic, django_assert_num_queries
):
    """Each list and count in one query, none per row, none asked twice (its
    papers awaiting review and flagged were counted three times between them)."""
    trained_model(topic)
    curated(topic, 2)
    url = reverse("admin:topics_topic_change", args=[topic.pk])
    admin_client.get(url)

    with django_assert_num_queries(11):
        admin_client.get(url)
    curated(topic, 20)
    with django_assert_num_queries(11):
        page = admin_client.get(url).text

    assert "22 pinned papers" in page
    assert "22 excluded papers" in page
    assert "22 papers to review</a>, of which" in page
    assert "22 awaiting review" in page
    assert "22 flagged by readers" in page
    assert "22 papers in the band await review" in page
    assert page.count('name="aliases-') >= 22


def test_a_topics_change_page_reads_its_decisions_papers_without_abstracts(
    admin_client, topic
):
    """Its latest pins and exclusions name their papers by id and title: their
    abstracts and search vectors (4 KB a row) were read too."""
    curated(topic, 3)

    with CaptureQueriesContext(connection) as captured:
        page = admin_client.get(
            reverse("admin:topics_topic_change", args=[topic.pk])
        ).text

    assert "Curated paper 8" in page  # pinned
    assert "Curated paper 3" in page  # excluded
    read = [q["sql"] for q in captured if '"papers_paper"' in q["sql"]]
    assert read
    assert not [sql for sql in read if '"search_vector"' in sql or '"abstract"' in sql]
