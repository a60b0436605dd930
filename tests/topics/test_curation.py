from __future__ import annotations

from unittest import mock

import pytest
from django.core.exceptions import ValidationError

from papers.ingest.upsert import upsert_records
from papers.models import Category
from papers.models import Paper
from tests.clients import token_client
from tests.concurrency import in_thread
from tests.concurrency import retag_deciding_slowly
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.curation import exclude_paper
from topics.curation import lift_exclusion
from topics.curation import merge_topics
from topics.curation import pin_paper
from topics.curation import unpin_paper
from topics.editing import save_topic
from topics.models import Follow
from topics.models import PaperTopic
from topics.models import Question
from topics.models import Topic
from topics.models import TopicExclusion
from topics.rules import MAX_TERMS
from topics.tagging import retag_topics
from topics.tagging import tag_papers

pytestmark = pytest.mark.django_db


@pytest.fixture
def papers():
    upsert_records(
        [
            paper_record("2606.00001", title="An agent"),
            paper_record("2606.00002", title="A robot"),
        ]
    )
    return {p.arxiv_id: p for p in Paper.objects.all()}


def sources(topic: Topic) -> dict[str, str]:
    return dict(topic.paper_topics.values_list("paper__arxiv_id", "source"))


def test_pinning_a_rule_tagged_paper_makes_it_a_pin(papers):
    topic = make_topic(rule="ti:agent")
    retag_topics([topic])

    pin_paper(topic, papers["2606.00001"])

    assert sources(topic) == {"2606.00001": "pin"}


def test_unpinning_lets_the_rule_decide_again(papers):
    topic = make_topic(rule="ti:agent")
    pin_paper(topic, papers["2606.00001"])
    pin_paper(topic, papers["2606.00002"])

    unpin_paper(topic, papers["2606.00001"])
    unpin_paper(topic, papers["2606.00002"])

    assert sources(topic) == {"2606.00001": "rule"}


def test_excluding_removes_a_pin_and_pinning_lifts_an_exclusion(papers, staff):
    topic = make_topic(rule="ti:agent")
    pin_paper(topic, papers["2606.00002"])

    exclude_paper(topic, papers["2606.00002"], reason="off topic", by=staff)
    assert sources(topic) == {}
    assert TopicExclusion.objects.get().created_by == staff

    pin_paper(topic, papers["2606.00002"])
    assert sources(topic) == {"2606.00002": "pin"}
    assert not TopicExclusion.objects.exists()


def test_lifting_an_exclusion_lets_the_rule_tag_again(papers):
    topic = make_topic(rule="ti:agent")
    exclude_paper(topic, papers["2606.00001"])
    retag_topics([topic])
    assert sources(topic) == {}

    lift_exclusion(topic, papers["2606.00001"])

    assert sources(topic) == {"2606.00001": "rule"}


def test_merge_keeps_followers_pins_exclusions_related_and_questions(
    papers, alice, bob, django_capture_on_commit_callbacks
):
    target = make_topic("Agents", rule="ti:agent", slug="agents")
    other = make_topic("Robots", rule="ti:robot", slug="robots")
    neighbour = make_topic("Neighbour", rule="ti:x", slug="neighbour")
    other.related.add(neighbour, target)
    Follow.objects.create(user=alice, topic=target)
    Follow.objects.create(user=alice, topic=other)
    Follow.objects.create(user=bob, topic=other, muted=True)
    pin_paper(other, papers["2606.00002"])
    exclude_paper(other, papers["2606.00001"], reason="a survey")
    asked = Question.objects.create(user=bob, topic=other, text="Which robots?")

    with (
        mock.patch("topics.tasks.retag_topic.apply_async") as retag,
        django_capture_on_commit_callbacks(execute=True),
    ):
        merge_topics(target, [target, other])

    assert not Topic.objects.filter(slug="robots").exists()
    assert sorted(target.follows.values_list("user__email", "muted")) == [
        ("alice@example.com", False),
        ("bob@example.com", True),
    ]
    assert sources(target) == {"2606.00002": "pin"}
    assert target.exclusions.get().reason == "a survey"
    assert list(target.related.all()) == [neighbour]
    asked.refresh_from_db()  # still bob's recent question, now about the kept topic
    assert asked.topic == target
    retag.assert_called_once_with((target.pk,))  # the re-tag, sent after commit
    target.refresh_from_db()
    assert target.retag_pending


def test_a_reader_who_had_the_merged_topic_in_digests_keeps_it_there(papers, alice):
    """Alice muted the kept topic but read the merged one's papers in her
    digest: the merge kept her mute, and those papers left her digests, unsaid."""
    target = make_topic("Agents", rule="ti:agent", slug="agents")
    other = make_topic("Robots", rule="ti:robot", slug="robots")
    Follow.objects.create(user=alice, topic=target, muted=True)
    Follow.objects.create(user=alice, topic=other)

    with mock.patch("topics.tasks.retag_topic.apply_async"):
        merge_topics(target, [other])

    assert target.follows.get(user=alice).muted is False


@pytest.fixture
def two_topics(db):
    upsert_records(
        [
            paper_record("2606.00011", title="An agent", categories=("cs.AI",)),
            paper_record("2606.00012", title="A robot", categories=("cs.RO",)),
            paper_record("2606.00013", title="A robot agent", categories=("cs.RO",)),
            paper_record("2606.00014", title="An agent", categories=("cs.RO",)),
        ]
    )
    target = make_topic("Agents", rule="ti:agent", slug="agents")
    other = make_topic("Robots", rule="ti:robot", slug="robots")
    retag_topics([target, other])
    return target, other


def merge_and_retag(target: Topic, others: list[Topic]):
    with mock.patch("topics.tasks.retag_topic.apply_async"):
        result = merge_topics(target, others)
    before = sources(target)
    target.refresh_from_db()
    retag_topics([target])
    return result, before, sources(target)


def test_merge_keeps_every_paper_only_the_merged_away_rule_matched(two_topics):
    target, other = two_topics

    result, at_once, after_retag = merge_and_retag(target, [other])

    everything = {"2606.00011", "2606.00012", "2606.00013", "2606.00014"}
    assert set(at_once) == set(after_retag) == everything
    assert result.papers == 1
    assert target.rule == "(ti:agent) OR (ti:robot)"


def test_a_pin_over_the_targets_exclusion_counts_among_the_papers_gained(
    two_topics,
):
    target, other = two_topics
    exclude_paper(target, Paper.objects.get(arxiv_id="2606.00013"), reason="no")
    pin_paper(other, Paper.objects.get(arxiv_id="2606.00013"))
    before = set(sources(target))

    result, at_once, _ = merge_and_retag(target, [other])

    assert result.papers == len(set(at_once) - before) == 2


def test_merge_scopes_each_rule_to_its_own_topics_categories(two_topics):
    target, other = two_topics
    target.categories.add(Category.objects.get(code="cs.AI"))
    other.categories.add(Category.objects.get(code="cs.RO"))
    retag_topics([target, other])

    _, _, after_retag = merge_and_retag(target, [other])

    # An agent paper in cs.RO was in neither topic and stays out.
    assert set(after_retag) == {"2606.00011", "2606.00012", "2606.00013"}
    assert not target.categories.exists()
    assert target.rule == "((ti:agent) AND (cat:cs.AI)) OR ((ti:robot) AND (cat:cs.RO))"


def test_merge_pins_the_papers_of_a_rule_too_long_to_join(two_topics):
    target, other = two_topics
    other.rule = " OR ".join(f"ti:robot{n}" for n in range(MAX_TERMS - 1))
    other.rule += " OR ti:robot"
    other.save()
    retag_topics([other])

    result, _, after_retag = merge_and_retag(target, [other])

    assert result.rules_kept == ["Robots"]
    assert target.rule == "ti:agent"
    assert after_retag == {
        "2606.00011": "rule",
        "2606.00012": "pin",
        "2606.00013": "rule",
        "2606.00014": "rule",
    }


def test_merge_moves_the_links_to_the_merged_away_topic(two_topics, client):
    target, other = two_topics
    linking = make_topic("Linking", rule="ti:x", slug="linking")
    linking.related.add(other)

    merge_and_retag(target, [other])

    assert list(linking.related.all()) == [target]
    page = client.get("/topics/robots/?week=2026-06-08")
    assert page.status_code == 301
    assert page["Location"] == "/topics/agents/?week=2026-06-08"
    feed = client.get("/topics/robots/feed/")
    assert (feed.status_code, feed["Location"]) == (301, "/topics/agents/feed/")
    assert client.get("/topics/nothing-here/").status_code == 404


def test_a_merged_away_address_keeps_leading_on_through_a_second_merge(two_topics):
    target, other = two_topics
    third = make_topic("Third", rule="ti:third", slug="third")
    merge_and_retag(target, [other])

    merge_and_retag(third, [target])

    assert set(third.aliases.values_list("slug", flat=True)) == {"agents", "robots"}


def test_a_topic_given_a_new_slug_leads_there_from_the_old_one(client, db):
    topic = make_topic("Agents", rule="ti:agent", slug="agents")

    save_topic(topic, fields={"slug": "llm-agents"}, retag=False)

    page = client.get("/topics/agents/?week=2026-06-08")
    assert (page.status_code, page["Location"]) == (
        301,
        "/topics/llm-agents/?week=2026-06-08",
    )
    feed = client.get("/topics/agents/feed/")
    assert (feed.status_code, feed["Location"]) == (301, "/topics/llm-agents/feed/")
    api = client.get("/api/v1/topics/agents/")
    assert (api.status_code, api["Location"]) == (301, "/api/v1/topics/llm-agents/")

    # Back again: the address it has is its own, not a way elsewhere.
    save_topic(topic, fields={"slug": "agents"}, retag=False)

    assert client.get("/topics/agents/").status_code == 200
    assert list(topic.aliases.values_list("slug", flat=True)) == ["llm-agents"]


def test_a_former_address_cannot_be_taken_by_another_topic(two_topics, as_staff):
    target, other = two_topics
    merge_and_retag(target, [other])
    taker = Topic(name="Robotics", slug="robots", rule="ti:robot")

    with pytest.raises(ValidationError) as refused:
        taker.full_clean()
    response = as_staff.post(
        "/api/v1/topics/",
        {"name": "Robotics", "slug": "robots", "rule": "ti:robot"},
        format="json",
    )

    assert refused.value.message_dict["slug"] == [
        "“robots” was an address of Agents, and its links and feeds lead there; "
        "choose another slug, or release it on the page of Agents: under Former "
        "addresses, tick Delete? and save."
    ]
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "conflict"


def test_a_topics_text_typed_decomposed_is_stored_composed(db, as_staff):
    """An accent typed as a character of its own (NFD: "e" and U+0301, as
    text pasted from a Mac is) is stored composed (NFC), as papers' text is:
    a search or a comparison with the name as typed elsewhere found nothing,
    and a second "Café" could be made beside the first."""
    decomposed = "Cafe\u0301 Models"
    topic = Topic(
        name=decomposed,
        slug="cafe",
        rule="ti:cafe",
        description=f"About {decomposed}.",
        definition=f"{decomposed} and\nSchro\u0308dinger.",
        glossary="CM: Cafe\u0301 Models",
    )

    save_topic(topic, fields={}, retag=False)

    stored = Topic.objects.get()
    assert stored.name == "Café Models"
    assert stored.description == "About Café Models."
    assert stored.definition == "Café Models and\nSchrödinger."
    assert stored.glossary == "CM: Café Models"
    response = as_staff.post(
        "/api/v1/topics/",
        {"name": decomposed, "slug": "cafe-2", "rule": "ti:cafe"},
        format="json",
    )
    assert response.status_code == 409
    assert list(response.json()["error"]["fields"]) == ["name"]


def test_a_merged_away_slug_still_names_the_topic_to_the_api(two_topics, alice):
    """A client holding the old slug can still mute and leave the topic its
    follow moved to, and its Ask is led there, as the site's page is."""
    target, other = two_topics
    Follow.objects.create(user=alice, topic=other)
    merge_and_retag(target, [other])
    api = token_client(alice)

    muted = api.patch("/api/v1/me/follows/robots/", {"muted": True}, format="json")
    asked = api.get("/api/v1/topics/robots/ask/", {"q": "robot"})
    left = api.delete("/api/v1/me/follows/robots/")

    assert muted.status_code == 200
    assert muted.json()["topic"]["slug"] == "agents"
    assert (asked.status_code, asked["Location"]) == (
        301,
        "/api/v1/topics/agents/ask/?q=robot",
    )
    assert left.status_code == 204
    assert not Follow.objects.filter(user=alice).exists()


def test_a_follow_button_at_a_former_slug_acts_on_the_topic(two_topics, client, alice):
    """A page open from before a rename or a merge still follows and leaves."""
    target, other = two_topics
    save_topic(target, fields={"slug": "llm-agents"}, retag=False)
    merge_and_retag(target, [other])
    client.force_login(alice)

    followed = client.post("/topics/agents/follow/", {"on": "1"})
    assert Follow.objects.filter(user=alice, topic=target).exists()
    left = client.post("/topics/robots/follow/", {"on": "0"})

    assert (followed.status_code, left.status_code) == (302, 302)
    assert followed["Location"] == "/topics/llm-agents/"
    assert not Follow.objects.filter(user=alice).exists()
    assert client.post("/topics/no-such-topic/follow/", {"on": "1"}).status_code == 404


def test_a_merge_while_the_target_is_re_tagged_loses_nothing(two_topics, monkeypatch):
    """The re-tag tags one of the papers being moved first: the merge went on
    to a 500 (the unique tag), and nothing was merged."""
    target, other = two_topics
    moving = set(PaperTopic.objects.filter(topic=other).values_list("paper", flat=True))
    store = PaperTopic.objects.bulk_create

    def retag_lands_first(rows, **options):
        PaperTopic.objects.create(topic=target, paper=rows[0].paper)
        return store(rows, **options)

    monkeypatch.setattr(PaperTopic.objects, "bulk_create", retag_lands_first)

    merge_and_retag(target, [other])

    assert not Topic.objects.filter(pk=other.pk).exists()
    assert moving <= set(
        PaperTopic.objects.filter(topic=target).values_list("paper", flat=True)
    )


def test_a_merge_moves_the_kept_topics_follower_count_on_its_page(
    two_topics, alice, bob, client, django_capture_on_commit_callbacks
):
    """Its followers moved, yet its page said the count it had cached (for an
    hour, or until someone followed it)."""
    target, other = two_topics
    Follow.objects.create(user=alice, topic=target)
    Follow.objects.create(user=bob, topic=other)
    assert "1 follower" in client.get("/topics/agents/").text

    with django_capture_on_commit_callbacks(execute=True):
        merge_and_retag(target, [other])

    assert "2 followers" in client.get("/topics/agents/").text


@pytest.mark.django_db(transaction=True)
def test_a_pin_made_while_a_retag_decides_stays_a_pin():
    """The re-tag decided to drop the rule tag the pin then replaced, and
    deleted the pin by its row. Neither is lost to a deadlock: the pin dated
    the paper's page before it waited for the tag, which the re-tag held and
    then dated the page too (PostgreSQL ended the re-tag)."""
    upsert_records([paper_record("2606.00001", title="A network")])
    topic = make_topic("Nets", rule="ti:network", slug="nets")
    paper = Paper.objects.get()
    tag_papers([paper.pk])
    Topic.objects.filter(pk=topic.pk).update(rule="ti:graph")  # narrowed
    errors: list[Exception] = []
    retag, go = retag_deciding_slowly(topic.pk, errors)

    pin = in_thread(lambda: pin_paper(topic, paper), errors)
    pin.join(2)  # waiting for the re-tag's lock on the tag
    go.set()
    retag.join(30)
    pin.join(30)

    assert errors == []
    assert list(PaperTopic.objects.values_list("source", flat=True)) == ["pin"]


@pytest.mark.django_db(transaction=True)
def test_an_exclusion_made_while_a_retag_decides_keeps_the_paper_out():
    upsert_records([paper_record("2606.00001", title="A graph")])
    topic = make_topic("Nets", rule="ti:network", slug="nets")
    paper = Paper.objects.get()
    Topic.objects.filter(pk=topic.pk).update(rule="ti:graph")  # widened
    retag, go = retag_deciding_slowly(topic.pk)

    exclude_paper(topic, paper)
    go.set()
    retag.join(30)

    assert not PaperTopic.objects.filter(topic=topic, paper=paper).exists()
