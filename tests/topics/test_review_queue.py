"""The review queue in Django admin, with the test client, as a curator uses it."""

from __future__ import annotations

from unittest import mock

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse
from django.utils import timezone

from papers.ingest.upsert import upsert_records
from papers.models import Paper
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from tests.topics.test_admin_curation import change_form
from topics.admin.review import review_reason
from topics.models import PaperTopic
from topics.models import RelevanceFlag
from topics.models import ReviewItem
from topics.models import Topic
from topics.models import TopicExclusion
from topics.models import TopicModel

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:topics_reviewitem_changelist"
ALL_IDS = ["2606.00001", "2606.00002", "2606.00003", "2606.00004"]
LONG_ABSTRACT = " ".join(["We train agents with reinforcement learning."] * 12)


@pytest.fixture
def topic() -> Topic:
    return make_topic(rule="ti:agent", membership=Topic.Membership.AUTO)


@pytest.fixture
def papers() -> dict[str, Paper]:
    upsert_records(
        [
            paper_record(
                "2606.00001", title="Agents that plan", abstract=LONG_ABSTRACT
            ),
            paper_record("2606.00002", title="Robots that grasp"),
            paper_record("2606.00003", title="Agents in markets"),
            paper_record("2606.00004", title="Tool-using agents"),
        ]
    )
    return {paper.arxiv_id: paper for paper in Paper.objects.all()}


@pytest.fixture
def queue(topic, papers) -> dict[str, ReviewItem]:
    """One item of each kind, their scores at different distances from 0.5."""
    rule_tag = PaperTopic.objects.create(
        topic=topic, paper=papers["2606.00003"], matched_terms=["agent"], score=0.31
    )
    return {
        "proposed": item(topic, papers["2606.00002"], score=0.83),
        "vetoed": item(
            topic,
            papers["2606.00001"],
            score=0.12,
            rule_terms=["agentic RL", "GRPO"],
            rule_matched=True,
            vetoed=True,
        ),
        "doubted": item(
            topic,
            rule_tag.paper,
            score=0.31,
            rule_terms=["agent"],
            rule_matched=True,
            flags=2,
        ),
        "flagged": item(
            topic,
            papers["2606.00004"],
            rule_terms=["agent"],
            rule_matched=True,
            flags=1,
        ),
    }


def item(topic: Topic, paper: Paper, **fields: object) -> ReviewItem:
    return ReviewItem.objects.create(topic=topic, paper=paper, **fields)


def decision_url(verb: str, review_item: ReviewItem) -> str:
    return reverse(f"admin:topics_reviewitem_{verb}", args=[review_item.pk])


def test_changelist_shows_paper_abstract_score_and_why(admin_client, queue):
    response = admin_client.get(reverse(CHANGELIST))

    assert response.status_code == 200
    text = response.text
    assert "Review queue" in text
    paper = queue["vetoed"].paper
    assert f'<a href="{paper.get_absolute_url()}">Agents that plan</a>' in text
    # The abstract under the title, in the paper's cell: a column of its own
    # was too narrow to read.
    assert (
        '<span class="quiet">arXiv:2606.00001</span><div class="abstract">'
        '<details><summary><span class="abstract-short">We train agents'
    ) in text
    assert "column-abstract" not in text
    assert f"</span></summary>{LONG_ABSTRACT}</details>" in text
    assert "0.83" in text
    assert "0.12" in text
    # The flag-only item has no score: the topic's model is not trained.
    assert "not scored yet: the topic has no trained model" in text
    assert "Model score 0.83 says it belongs; the rule does not match" in text
    assert (
        "Rule matched “agentic RL”, “GRPO”; model score 0.12 doubts it "
        "(kept out: automatic decisions)" in text
    )
    assert (
        "Rule matched “agent”; model score 0.31 doubts it; flagged not relevant by "
        "2 readers" in text
    )
    assert "Rule matched “agent”; flagged not relevant by 1 reader<" in text
    assert text.count('formaction="/admin/topics/reviewitem/') == 8


def test_a_score_just_under_the_boundary_never_reads_as_it(topic, papers):
    doubted = ReviewItem(topic=topic, paper=papers["2606.00001"], score=0.496)
    belongs = ReviewItem(topic=topic, paper=papers["2606.00001"], score=0.5)

    assert review_reason(doubted) == "The rule does not match; model score 0.49 agrees"
    assert review_reason(belongs) == (
        "Model score 0.50 says it belongs; the rule does not match"
    )


def test_a_score_of_two_places_reads_as_itself(topic, papers):
    """Cut to two places, 0.29 (28.999999999999996 hundredths) read 0.28."""
    doubted = ReviewItem(topic=topic, paper=papers["2606.00001"], score=0.29)

    assert review_reason(doubted) == "The rule does not match; model score 0.29 agrees"


def test_the_rule_terms_read_as_on_the_papers_page(topic, papers):
    """Terms are stored as the rule spells them: the queue read “"agentic RL"”,
    “ti:agent” where the paper's page says “agentic RL”, “agent” in the title."""
    matched = ReviewItem(
        topic=topic,
        paper=papers["2606.00001"],
        score=0.41,
        rule_matched=True,
        rule_terms=['"agentic RL"', "ti:agent", 'abs:"tool use"', "cat:cs.RO", "GRPO"],
    )

    assert review_reason(matched) == (
        "Rule matched “agentic RL”, “agent” in the title, “tool use” in the "
        "abstract, category cs.RO, “GRPO”; model score 0.41 doubts it"
    )


def test_review_reason_without_rule_or_score_is_the_flag_alone(topic, papers):
    flagged = ReviewItem(topic=topic, paper=papers["2606.00001"], flags=3)

    assert review_reason(flagged) == "Flagged not relevant by 3 readers"


@pytest.mark.parametrize(
    ("membership", "trained", "said"),
    [
        (Topic.Membership.RULE, False, "not scored: rule only"),
        (
            Topic.Membership.AUTO,
            False,
            "not scored yet: the topic has no trained model",
        ),
        (Topic.Membership.SUGGEST, True, "not scored yet"),
    ],
)
def test_a_flagged_paper_without_a_score_says_why(
    admin_client, topic, papers, membership, trained, said
):
    """A reader's flag before the topic's first training (or of a rule-only
    topic) queued the paper with its chance of belonging read "—"."""
    Topic.objects.filter(pk=topic.pk).update(membership=membership)
    if trained:
        TopicModel.objects.create(
            topic=topic, state=TopicModel.State.TRAINED, trained_at=timezone.now()
        )
    item(topic, papers["2606.00001"], flags=1)

    text = admin_client.get(reverse(CHANGELIST)).text

    assert f'<td class="field-chance_text">{said}</td>' in text


def test_most_uncertain_first_then_flag_only_items(admin_client, queue):
    text = admin_client.get(reverse(CHANGELIST)).text

    # |score - 0.5|: doubted 0.19, proposed 0.33, vetoed 0.38; flagged has no score.
    order = ["2606.00003", "2606.00002", "2606.00001", "2606.00004"]
    positions = [text.index(f"arXiv:{arxiv_id}") for arxiv_id in order]
    assert positions == sorted(positions)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"kind": "proposes"}, {"2606.00002"}),
        ({"kind": "doubted"}, {"2606.00001", "2606.00003"}),
        ({"kind": "flagged"}, {"2606.00003", "2606.00004"}),
        ({"vetoed__exact": "1"}, {"2606.00001"}),
    ],
)
def test_filters_by_kind_and_veto(admin_client, queue, query, expected):
    text = admin_client.get(reverse(CHANGELIST), query).text

    shown = {arxiv_id for arxiv_id in ALL_IDS if f"arXiv:{arxiv_id}" in text}
    assert shown == expected


def test_filters_by_topic(admin_client, queue, papers):
    other = make_topic("Robots", rule="ti:robot", slug="robots")
    item(other, papers["2606.00002"], score=0.2, rule_matched=True)

    text = admin_client.get(reverse(CHANGELIST), {"topic__id__exact": other.pk}).text

    assert "arXiv:2606.00002" in text
    assert "arXiv:2606.00001" not in text


@pytest.mark.parametrize(
    "changelist",
    [
        CHANGELIST,
        "admin:topics_papertopic_changelist",
        "admin:topics_topicexclusion_changelist",
    ],
)
def test_a_search_within_a_topic_matches_its_papers_not_its_name(
    admin_client, topic, queue, papers, changelist
):
    # The queue's papers, and the same papers pinned and excluded.
    for arxiv_id in ALL_IDS:
        PaperTopic.objects.update_or_create(
            topic=topic, paper=papers[arxiv_id], defaults={"source": "pin"}
        )
        TopicExclusion.objects.create(topic=topic, paper=papers[arxiv_id])
    url = reverse(changelist)

    def shown(query: str) -> set[str]:
        text = admin_client.get(url, {"topic__id__exact": topic.pk, "q": query}).text
        return {arxiv_id for arxiv_id in ALL_IDS if arxiv_id in text}

    # "LLM" is in the topic's name ("RL for LLM Agents"), in no paper's title.
    assert shown("LLM") == set()
    assert shown("markets") == {"2606.00003"}
    assert shown("2606.00004") == {"2606.00004"}


def test_a_page_of_thirty_items_takes_few_queries(
    admin_client, topic, django_assert_max_num_queries
):
    upsert_records(
        [paper_record(f"2606.{n:05d}", title=f"Paper {n}") for n in range(1, 31)]
    )
    other = make_topic("Robots", rule="ti:robot", slug="robots")
    for n, paper in enumerate(Paper.objects.all()):
        item(topic if n % 2 else other, paper, score=n / 30)

    with django_assert_max_num_queries(12):
        response = admin_client.get(reverse(CHANGELIST))

    # Each row shows its paper once, and names its two buttons with it.
    assert response.text.count("arXiv:2606.") == 30 * 3


def test_include_pins_the_paper_and_resolves_the_item(admin_client, topic, queue):
    proposed = queue["proposed"]

    response = admin_client.post(decision_url("include", proposed))

    assert response.status_code == 302
    assert response["Location"] == reverse(CHANGELIST)
    tag = PaperTopic.objects.get(topic=topic, paper=proposed.paper)
    assert tag.source == PaperTopic.Source.PIN
    assert not ReviewItem.objects.filter(pk=proposed.pk).exists()
    messages = [str(m) for m in response.wsgi_request._messages]
    assert messages == [f"Included “Robots that grasp” in {topic}."]


def test_exclude_keeps_the_paper_out_and_resolves_the_item_and_flags(
    admin_client, admin_user, topic, queue, alice
):
    doubted = queue["doubted"]
    RelevanceFlag.objects.create(user=alice, topic=topic, paper=doubted.paper)

    response = admin_client.post(decision_url("exclude", doubted))

    assert response.status_code == 302
    exclusion = TopicExclusion.objects.get(topic=topic, paper=doubted.paper)
    assert exclusion.reason == "review queue"
    assert exclusion.created_by == admin_user
    assert not PaperTopic.objects.filter(topic=topic, paper=doubted.paper).exists()
    assert not ReviewItem.objects.filter(pk=doubted.pk).exists()
    assert not RelevanceFlag.objects.exists()


def test_decision_returns_to_the_filtered_changelist(admin_client, topic, queue):
    listing = admin_client.get(reverse(CHANGELIST), {"topic__id__exact": topic.pk})
    filters = f"_changelist_filters=topic__id__exact%3D{topic.pk}"
    url = f"{decision_url('exclude', queue['proposed'])}?{filters}"
    assert f'formaction="{url}"' in listing.text

    response = admin_client.post(url)

    assert response["Location"] == f"{reverse(CHANGELIST)}?topic__id__exact={topic.pk}"


def test_decision_urls_refuse_get(admin_client, queue):
    assert (
        admin_client.get(decision_url("include", queue["proposed"])).status_code == 405
    )
    assert (
        admin_client.get(decision_url("exclude", queue["proposed"])).status_code == 405
    )
    assert ReviewItem.objects.count() == 4


def test_a_paper_decided_twice_goes_back_to_the_queue_saying_so(
    admin_client, topic, queue
):
    """A second click, the back button or another curator: not a 404 page."""
    url = decision_url("include", queue["proposed"])
    admin_client.post(url)

    again = admin_client.post(url, follow=True)

    assert again.redirect_chain[-1][0] == reverse(CHANGELIST)
    assert "That paper was decided already; it has left the queue." in again.text
    assert ReviewItem.objects.count() == 3


def test_a_researcher_cannot_decide(client, alice, queue):
    client.force_login(alice)

    response = client.post(decision_url("include", queue["proposed"]))

    assert response.status_code == 302
    assert "/login/" in response["Location"]
    assert ReviewItem.objects.count() == 4


def test_staff_without_topic_permission_cannot_decide_or_see_the_queue(
    client, staff, queue
):
    client.force_login(staff)

    assert client.post(decision_url("include", queue["proposed"])).status_code == 403
    assert client.post(decision_url("exclude", queue["proposed"])).status_code == 403
    assert client.get(reverse(CHANGELIST)).status_code == 403
    assert ReviewItem.objects.count() == 4
    assert not TopicExclusion.objects.exists()


def test_staff_who_may_change_topics_can_see_the_queue_and_decide(
    client, staff, topic, queue
):
    staff.user_permissions.add(Permission.objects.get(codename="change_topic"))
    client.force_login(staff)

    listing = client.get(reverse(CHANGELIST))
    response = client.post(decision_url("include", queue["proposed"]))

    assert listing.status_code == 200
    assert "Include selected papers" in listing.text
    assert response.status_code == 302
    assert PaperTopic.objects.get(paper=queue["proposed"].paper).source == "pin"


def test_view_only_staff_see_the_queue_without_decisions(client, staff, queue):
    staff.user_permissions.add(Permission.objects.get(codename="view_reviewitem"))
    client.force_login(staff)

    text = client.get(reverse(CHANGELIST)).text

    assert "arXiv:2606.00001" in text
    assert "formaction" not in text
    assert "Include selected papers" not in text


def test_bulk_include_and_exclude(admin_client, topic, queue):
    url = reverse(CHANGELIST)
    proposed, flagged, vetoed = queue["proposed"], queue["flagged"], queue["vetoed"]

    included = admin_client.post(
        url,
        {"action": "include_selected", "_selected_action": [proposed.pk, flagged.pk]},
    )
    excluded = admin_client.post(
        url, {"action": "exclude_selected", "_selected_action": [vetoed.pk]}
    )

    assert included.status_code == excluded.status_code == 302
    pins = PaperTopic.objects.filter(topic=topic, source=PaperTopic.Source.PIN)
    assert {tag.paper.arxiv_id for tag in pins} == {"2606.00002", "2606.00004"}
    assert TopicExclusion.objects.get().paper == vetoed.paper
    assert list(ReviewItem.objects.all()) == [queue["doubted"]]


def test_the_queue_cannot_be_added_to_or_edited(admin_client, queue):
    proposed = queue["proposed"]
    change = reverse("admin:topics_reviewitem_change", args=[proposed.pk])

    assert admin_client.get(reverse("admin:topics_reviewitem_add")).status_code == 403
    assert admin_client.get(change).status_code == 200  # read-only
    admin_client.post(change, {"score": "0.1"})
    proposed.refresh_from_db()
    assert proposed.score == 0.83


# The topic's side: membership, its model, and the way to its queue.


def trained_model(topic: Topic, **fields: object) -> TopicModel:
    values = {
        "state": TopicModel.State.TRAINED,
        "version": 3,
        "positives": 42,
        "negatives": 500,
        "decisions": 12,
        "precision": 0.91,
        "recall": 0.8,
        "f1": 0.85,
        "band": 0.05,
        "include_at": 0.9,
        "exclude_at": 0.2,
        "calibration": {"slope": 1.0, "rule_shift": 0.0, "intercept": 0.0},
        "fingerprint": "f" * 64,
        "weights": {},
        "trained_at": timezone.now(),
    }
    values.update(fields)
    return TopicModel.objects.create(topic=topic, **values)


def test_topic_page_shows_the_trained_model_and_links_to_its_queue(
    admin_client, topic, queue
):
    trained_model(topic)

    text = admin_client.get(reverse("admin:topics_topic_change", args=[topic.pk])).text

    assert "v3, trained" in text
    assert "42 positives and 500 negatives" in text
    assert "precision 0.91, recall 0.80; 5% of decided papers fall in the band" in text
    queue_url = f"{reverse(CHANGELIST)}?topic__id__exact={topic.pk}"
    assert f'<a href="{queue_url}">4 papers to review</a>' in text
    assert 'name="membership"' in text
    assert 'name="precision_target"' in text
    assert 'name="recall_target"' in text


def test_a_figure_just_under_its_target_never_reads_as_the_target(admin_client, topic):
    """Tool Use in the demo, after a burst of exclusions: "precision 0.95, ...
    That is below the topic's precision target of 0.95" (0.9467, rounded). A
    figure below its target is cut to two places, not rounded up to it."""
    trained_model(topic, precision=0.9467, recall=0.8996)

    page = admin_client.get(reverse("admin:topics_topic_change", args=[topic.pk]))
    listing = admin_client.get(reverse("admin:topics_topic_changelist"))

    assert "precision 0.94, recall 0.89; 5% of decided papers" in page.text
    assert "precision target of 0.95 and its recall target of 0.90" in page.text
    assert "model v3, precision 0.94, recall 0.89" in listing.text


def test_a_figure_at_or_over_its_target_is_rounded(admin_client, topic):
    trained_model(topic, precision=0.9551, recall=0.9)

    page = admin_client.get(reverse("admin:topics_topic_change", args=[topic.pk]))

    assert "precision 0.96, recall 0.90; 5% of decided papers" in page.text
    assert "below the topic" not in page.text


def test_topic_page_says_when_too_few_decisions_to_train(admin_client, topic):
    trained_model(
        topic,
        state=TopicModel.State.TOO_FEW,
        positives=5,
        decisions=1,
        precision=None,
        recall=None,
        f1=None,
    )

    text = admin_client.get(reverse("admin:topics_topic_change", args=[topic.pk])).text

    assert "Too few decisions to train (5 positives, 1 curator decisions" in text
    assert "the rule alone decides" in text
    assert "0 papers to review" in text


def test_new_topic_page_has_no_model_yet(admin_client):
    text = admin_client.get(reverse("admin:topics_topic_add")).text

    assert "Not trained yet." in text


def test_topic_list_shows_membership_and_model_state(admin_client, topic):
    trained_model(topic)
    make_topic("Robots", rule="ti:robot", slug="robots")

    text = admin_client.get(reverse("admin:topics_topic_changelist")).text

    assert "automatic decisions; model v3, precision 0.91, recall 0.80" in text
    assert "rule only; not trained" in text


def test_changing_membership_retrains_after_commit(
    admin_client, topic, django_capture_on_commit_callbacks
):
    url = reverse("admin:topics_topic_change", args=[topic.pk])

    with (
        mock.patch("topics.tasks.train_topic_model.apply_async") as sent,
        django_capture_on_commit_callbacks(execute=True),
    ):
        response = admin_client.post(url, change_form(topic, membership="suggest"))

    assert response.status_code == 302
    sent.assert_called_once_with((topic.pk, True))
    topic.refresh_from_db()
    assert topic.membership == Topic.Membership.SUGGEST


@pytest.mark.parametrize(
    "target", [{"precision_target": "0.9"}, {"recall_target": "0.8"}]
)
def test_changing_a_target_retrains_and_other_edits_do_not(
    admin_client, topic, django_capture_on_commit_callbacks, target
):
    url = reverse("admin:topics_topic_change", args=[topic.pk])

    with (
        mock.patch("topics.tasks.train_topic_model.apply_async") as sent,
        django_capture_on_commit_callbacks(execute=True),
    ):
        admin_client.post(url, change_form(topic, description="Now described"))
        assert not sent.called
        admin_client.post(url, change_form(topic, **target))

    sent.assert_called_once_with((topic.pk, True))
    topic.refresh_from_db()
    field, value = next(iter(target.items()))
    assert getattr(topic, field) == float(value)


@pytest.mark.parametrize(
    ("eager", "said"),
    [
        (False, "Training the relevance model of 1 topic(s) in the background;"),
        (True, "Trained the relevance model of 1 topic(s) in this request"),
    ],
)
def test_train_action_queues_a_forced_training_per_active_topic(
    admin_client, topic, django_capture_on_commit_callbacks, settings, eager, said
):
    """And says where it runs: without a broker, in the request."""
    settings.CELERY_TASK_ALWAYS_EAGER = eager
    inactive = make_topic("Robots", rule="ti:robot", slug="robots", is_active=False)
    selected = {"action": "train_model", "_selected_action": [topic.pk, inactive.pk]}

    with (
        mock.patch("topics.tasks.train_topic_model.apply_async") as sent,
        django_capture_on_commit_callbacks(execute=True),
    ):
        response = admin_client.post(reverse("admin:topics_topic_changelist"), selected)

    assert response.status_code == 302
    sent.assert_called_once_with((topic.pk, True))
    messages = [str(m) for m in response.wsgi_request._messages]
    assert messages[0].startswith(said)
    assert "Skipped 1 inactive topic(s)." in messages[0]


def test_the_queue_counts_papers_to_review(admin_client, queue):
    """Its count read "4 review queue", and "0 review queue" once empty."""
    text = admin_client.get(reverse(CHANGELIST)).text

    assert f"{len(queue)} papers to review" in text
    assert "review queue</" not in text
    ReviewItem.objects.exclude(pk=queue["vetoed"].pk).delete()
    assert "1 paper to review" in admin_client.get(reverse(CHANGELIST)).text
