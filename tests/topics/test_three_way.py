"""Three-way membership on PostgreSQL: the band's papers are pending, shown as
members nowhere, counted for staff on the topic page and in admin, and queued
most uncertain first (topics.deciding, topics.relevance, topics.queue)."""

from __future__ import annotations

import pytest
from django.test import override_settings
from django.urls import reverse

from papers.ingest.upsert import upsert_records
from papers.models import Paper
from papers.templatetags.papers import why
from tests.papers.factories import paper_record
from tests.topics.test_relevance import MISSED
from tests.topics.test_relevance import ROBOT
from tests.topics.test_relevance import corpus
from tests.topics.test_relevance import decide
from topics import deciding
from topics import relevance
from topics.curation import exclude_paper
from topics.models import JudgeVerdict
from topics.models import PaperTopic
from topics.models import ReviewItem
from topics.models import Topic
from topics.models import TopicModel
from topics.queue import model_summary
from topics.scoring import Scorer
from topics.scoring import paper_text
from topics.seed import load_topics
from topics.tagging import IngestTagger
from topics.tagging import retag_topics

pytestmark = pytest.mark.django_db

MAX_PAGE_QUERIES = 12
IDENTITY = {"slope": 1.0, "rule_shift": 0.0, "intercept": 0.0}


@pytest.fixture
def papers() -> dict[str, Paper]:
    return corpus()


@pytest.fixture
def topic(papers) -> Topic:
    from tests.topics.factories import make_topic

    topic = make_topic(rule="ti:agent", membership=Topic.Membership.AUTO)
    retag_topics([topic])
    decide(topic, papers)
    relevance.train(topic)
    return topic


def score_of(topic: Topic, paper: Paper) -> float:
    model = TopicModel.objects.get(topic=topic)
    scorer = Scorer.from_weights(model.weights)
    return float(scorer.score([paper_text(paper.title, paper.abstract)])[0])


def band_around(topic: Topic, *papers: Paper, margin: float = 1e-3) -> None:
    """Thresholds whose band holds just these papers' scores (probability =
    score), applied to every paper as a training would."""
    scores = [score_of(topic, paper) for paper in papers]
    TopicModel.objects.filter(topic=topic).update(
        include_at=max(scores) + margin,
        exclude_at=min(scores) - margin,
        calibration=IDENTITY,
        precision=0.96,
        recall=0.9,
        band=0.05,
    )
    deciding.apply_model(topic, deciding.scorer_of(topic))


def test_a_band_paper_is_pending_and_not_a_member(topic, papers):
    missed = papers["2606.00200"]  # the rule misses it

    band_around(topic, missed)

    item = ReviewItem.objects.get(topic=topic, paper=missed)
    assert item.pending
    assert item.probability == pytest.approx(item.score, abs=1e-3)
    assert not PaperTopic.objects.filter(topic=topic, paper=missed).exists()
    # Above the band: members by the rule; below: out.
    sure = PaperTopic.objects.filter(topic=topic, source=PaperTopic.Source.RULE)
    assert sure.exists()
    assert not ReviewItem.objects.filter(topic=topic, pending=True).exclude(
        paper=missed
    )


def test_a_rule_match_in_the_band_leaves_the_topic_and_a_retag_keeps_it_out(
    topic, papers
):
    upsert_records(
        [paper_record("2606.00300", title="Agent grasping again", abstract=ROBOT)]
    )
    retag_topics([topic])
    doubtful = Paper.objects.get(arxiv_id="2606.00300")
    assert topic.paper_topics.filter(paper=doubtful).exists()

    band_around(topic, doubtful)

    item = ReviewItem.objects.get(topic=topic, paper=doubtful)
    assert (item.pending, item.vetoed, item.rule_matched) == (True, True, True)
    assert item.rule_terms == ["ti:agent"]
    assert not topic.paper_topics.filter(paper=doubtful).exists()
    retag_topics([topic])
    assert not topic.paper_topics.filter(paper=doubtful).exists()
    # Still the rule's positive for the next model: a pending paper is no label.
    assert doubtful.pk in relevance.training_set(topic).paper_ids


def test_pending_papers_are_on_no_page_feed_or_api(topic, papers, client, alice):
    missed = papers["2606.00200"]
    band_around(topic, missed)
    members = [tag.paper for tag in topic.paper_topics.select_related("paper")]

    page = client.get(topic.get_absolute_url()).text
    feed = client.get(reverse("topics:feed", args=[topic.slug])).text
    client.force_login(alice)
    api = client.get(f"/api/v1/topics/{topic.slug}/papers/").json()
    listed = {paper["arxiv_id"] for paper in api["results"]}

    assert any(member.title in page for member in members)
    assert missed.title not in page
    assert any(member.title in feed for member in members)
    assert missed.title not in feed
    assert listed
    assert listed <= {member.arxiv_id for member in members}
    assert missed.arxiv_id not in listed


def test_a_judge_verdict_decides_and_a_curator_overrides_it(topic, papers):
    missed = papers["2606.00200"]
    band_around(topic, missed)
    JudgeVerdict.objects.create(
        topic=topic, paper=missed, belongs=True, reason="It trains agents.", model="m"
    )

    deciding.apply_model(topic, deciding.scorer_of(topic), [missed.pk])

    tag = PaperTopic.objects.get(topic=topic, paper=missed)
    assert tag.source == PaperTopic.Source.JUDGE
    item = ReviewItem.objects.get(topic=topic, paper=missed)
    assert not item.pending  # decided, still in the queue for a curator
    from topics.curation import exclude_paper

    exclude_paper(topic, missed)
    deciding.apply_model(topic, deciding.scorer_of(topic), [missed.pk])
    assert not PaperTopic.objects.filter(topic=topic, paper=missed).exists()
    assert not ReviewItem.objects.filter(topic=topic, paper=missed).exists()


@override_settings(MOMENTUM_MODEL_MIN_DECISIONS=1)
def test_ingest_leaves_a_new_band_paper_pending(topic, papers):
    band_around(topic, papers["2606.00200"])
    tagger = IngestTagger()
    records = [
        paper_record("2606.00400", title="Learning to call tools", abstract=MISSED)
    ]

    result = upsert_records(records)
    tagger.store(result, tagger.match(records))

    new = Paper.objects.get(arxiv_id="2606.00400")
    assert not PaperTopic.objects.filter(topic=topic, paper=new).exists()
    assert ReviewItem.objects.get(topic=topic, paper=new).pending


def test_training_fits_thresholds_from_the_decisions(papers):
    from tests.topics.factories import make_topic
    from topics.curation import pin_paper

    topic = make_topic(rule="ti:agent", membership=Topic.Membership.AUTO)
    retag_topics([topic])
    decide(topic, papers)  # 3 pins, 12 exclusions: too few "in" for a band
    first = relevance.train(topic)
    assert first.include_at is None
    assert "No band yet: too few decisions of each kind" in model_summary(first)

    for n in range(3, 8):
        pin_paper(topic, papers[f"2606.{n:05d}"])
    model = relevance.train(topic)

    assert model.version == first.version + 1
    assert model.exclude_at <= model.include_at
    assert set(model.calibration) == {"slope", "rule_shift", "intercept"}
    assert model.precision >= topic.precision_target
    assert 0 <= model.band <= 1
    summary = model_summary(model, awaiting=3)
    assert f"precision {model.precision:.2f}" in summary
    assert "3 papers in the band await review" in summary
    assert "the 3 most uncertain first" in summary


def test_staff_see_how_many_await_review_on_the_topic_page(
    topic,
    papers,
    client,
    alice,
    staff,
    django_assert_max_num_queries,
    django_capture_on_commit_callbacks,
):
    band_around(topic, papers["2606.00200"])
    url = topic.get_absolute_url()

    anonymous = client.get(url).text
    client.force_login(alice)
    reader = client.get(url).text
    client.force_login(staff)
    with django_assert_max_num_queries(MAX_PAGE_QUERIES):
        curator = client.get(url).text

    assert "awaiting review" not in anonymous
    assert "awaiting review" not in reader
    queue = reverse("admin:topics_reviewitem_changelist")
    assert (
        f'href="{queue}?topic__id__exact={topic.pk}&amp;pending__exact=1">'
        "1 awaiting review</a>"
    ) in curator

    # A training that draws a wider band, then a decision in the queue: a
    # curator back on the page sees each at once.
    def awaiting() -> int:
        return ReviewItem.objects.filter(topic=topic, pending=True).count()

    with django_capture_on_commit_callbacks(execute=True):
        band_around(topic, papers["2606.00200"], papers["2606.00030"])
    assert awaiting() > 1
    assert f">{awaiting()} awaiting review</a>" in client.get(url).text
    with django_capture_on_commit_callbacks(execute=True):
        exclude_paper(topic, papers["2606.00200"])
    assert f">{awaiting()} awaiting review</a>" in client.get(url).text


def test_the_topic_page_says_what_belongs_here(client, db):
    from tests.topics.factories import make_topic

    topic = make_topic(definition="Agents trained with RL.\n\nNot prompting alone.")
    plain = make_topic("Robots", rule="ti:robot", slug="robots")

    text = client.get(topic.get_absolute_url()).text

    # Folded under the description, which it often begins by repeating.
    assert '<details class="definition">' in text
    assert "<summary>What belongs here</summary>" in text
    assert "<p>Agents trained with RL.</p>" in text
    assert "<p>Not prompting alone.</p>" in text
    assert "What belongs here" not in client.get(plain.get_absolute_url()).text


def test_every_seed_topic_has_a_definition(db):
    topics = load_topics()

    assert topics
    for topic in topics:
        assert len(topic.definition.split()) >= 30, topic.slug
        assert "Not here" in topic.definition, topic.slug


def test_a_judged_paper_says_why_on_its_page_and_in_the_api(
    topic, papers, client, alice
):
    missed = papers["2606.00200"]
    band_around(topic, missed)
    JudgeVerdict.objects.create(
        topic=topic, paper=missed, belongs=True, reason="Trains agents.", model="m"
    )
    deciding.apply_model(topic, deciding.scorer_of(topic), [missed.pk])

    page = client.get(missed.get_absolute_url()).text
    client.force_login(alice)
    api = client.get(f"/api/v1/papers/{missed.arxiv_id}/").json()

    assert "judged to belong by a language model" in page
    chip = PaperTopic.objects.get(topic=topic, paper=missed)
    assert why(chip) == "Judged to belong by a language model"
    tags = {tag["slug"]: tag["source"] for tag in api["topics"]}
    assert tags[topic.slug] == "judge"
