"""Django admin: every registered model's list, form and search load for staff."""

from __future__ import annotations

from dataclasses import replace

import pytest
from allauth.account.models import EmailAddress
from django.contrib import admin
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.models import TokenProxy

from accounts.models import DigestPreferences
from accounts.models import User
from notifications.models import Digest
from notifications.models import DigestPaper
from papers.ingest.records import AuthorRecord
from papers.ingest.upsert import upsert_records
from papers.models import FeedSource
from papers.models import IngestRun
from papers.models import Paper
from papers.models import SavedPaper
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.models import Follow
from topics.models import JudgeVerdict
from topics.models import Question
from topics.models import RelevanceFlag
from topics.models import ReviewItem
from topics.models import Topic
from topics.models import TopicExclusion
from topics.models import TopicModel
from topics.tagging import tag_papers

pytestmark = pytest.mark.django_db

MODELS = [model for model in admin.site._registry if model._meta.app_label != "auth"]


@pytest.fixture
def admin_client(admin_client, admin_user):
    """pytest-django's, with a row of every model to show."""
    fill_every_model(admin_user)
    return admin_client


def fill_every_model(user):
    """One row of each model, so every change form is exercised."""
    topic = make_topic(rule="ti:agents")
    with_affiliation = replace(
        paper_record(title="Agents"), authors=(AuthorRecord("Ada", ("MIT",)),)
    )
    upsert_records([with_affiliation, paper_record("2606.00002")])
    paper, other = Paper.objects.order_by("arxiv_id")
    tag_papers([paper.pk])
    TopicExclusion.objects.create(topic=topic, paper=other, created_by=user)
    ReviewItem.objects.create(topic=topic, paper=paper, score=0.3, rule_matched=True)
    RelevanceFlag.objects.create(user=user, topic=topic, paper=paper)
    JudgeVerdict.objects.create(
        topic=topic, paper=paper, belongs=True, reason="On topic.", model="m"
    )
    TopicModel.objects.create(
        topic=topic,
        state=TopicModel.State.TOO_FEW,
        fingerprint="0" * 64,
        trained_at=timezone.now(),
    )
    Follow.objects.create(user=user, topic=topic)
    Question.objects.create(user=user, topic=topic, text="Which agents plan?")
    SavedPaper.objects.create(user=user, paper=paper)
    DigestPreferences.objects.create(user=user)
    Token.objects.create(user=user)
    feed = FeedSource.objects.create(
        name="cs.AI listing", kind="listing", category="cs.AI"
    )
    IngestRun.objects.create(
        source="test",
        feed=feed,
        status=IngestRun.Status.PARTIAL,
        errors=[{"entry": "2606.00009", "message": "no title"}],
        rejected_count=3,
    )
    EmailAddress.objects.create(
        user=user, email=user.email, verified=True, primary=True
    )
    digest = Digest.objects.create(
        user=user,
        frequency="weekly",
        period_start="2026-07-13",
        due_at="2026-07-13T08:00Z",
        status=Digest.Status.SENT,
        since="2026-07-06",
        sections=[{"topic": topic.pk, "papers": [[paper.pk, []]], "more": 0}],
    )
    DigestPaper.objects.create(digest=digest, user=user, paper=paper, topic=topic)


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m._meta.label)
def test_changelist_and_search_load(admin_client, model):
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")

    response = admin_client.get(url)
    assert response.status_code == 200
    # The policy (style-src 'self') would block an inline stylesheet.
    assert "<style" not in response.text
    assert admin_client.get(url, {"q": "agent"}).status_code == 200


# A token's page would name it by its key (test_admin_never_shows_an_api_key).
WITH_PAGES = [model for model in MODELS if model is not TokenProxy]


@pytest.mark.parametrize("model", WITH_PAGES, ids=lambda m: m._meta.label)
def test_change_form_loads_for_an_existing_row(admin_client, model):
    obj = model._default_manager.first()
    url = reverse(
        f"admin:{model._meta.app_label}_{model._meta.model_name}_change", args=[obj.pk]
    )

    assert admin_client.get(url).status_code == 200


def test_admin_names_the_product(admin_client):
    page = admin_client.get("/admin/").text

    assert "Momentum administration</a>" in page
    assert "| Momentum admin</title>" in page
    assert "Django administration" not in page


def test_a_researcher_cannot_open_admin(client, alice):
    client.force_login(alice)
    assert client.get("/admin/").status_code == 302


# An active topic's add form with no pins or exclusions.
NO_INLINES = {
    "is_active": "on",
    "paper_topics-TOTAL_FORMS": "0",
    "paper_topics-INITIAL_FORMS": "0",
    "exclusions-TOTAL_FORMS": "0",
    "exclusions-INITIAL_FORMS": "0",
}


def test_admin_refuses_a_bad_rule_with_its_position(admin_client):
    response = admin_client.post(
        reverse("admin:topics_topic_add"),
        {
            "name": "Broken",
            "slug": "broken",
            "rule": 'ti:agent AND (abs:"tool use"',
            **NO_INLINES,
        },
    )

    assert response.status_code == 200
    assert "Invalid rule" in response.text
    assert "position 13" in response.text
    # The rule's text around it, the place marked.
    assert "near “ti:agent AND ⟨here⟩(abs:&quot;tool use&quot;”" in response.text
    assert not Topic.objects.filter(slug="broken").exists()


@pytest.mark.parametrize(
    "name", ["Agents\x1b[0m", "Agents\x1fFeed", "Agents\x0bFeed", "Agents\x0cFeed"]
)
def test_admin_refuses_control_characters_in_what_feeds_and_pages_show(
    admin_client, name
):
    """An escape pasted into a name would make the topic's Atom feed unreadable,
    and so would U+001F, a vertical tab or a form feed (a page break pasted from
    a PDF), which Python takes for spaces and XML 1.0 forbids."""
    response = admin_client.post(
        reverse("admin:topics_topic_add"),
        {
            "name": name,
            "slug": "agents-escaped",
            "description": "Tools\x00 and plans",
            "rule": "ti:agent",
            **NO_INLINES,
        },
    )

    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert {"name", "description"} <= set(errors)
    assert "Control characters" in errors["name"][0]
    assert not Topic.objects.filter(slug="agents-escaped").exists()


def test_each_section_of_the_admin_index_has_its_own_name(admin_client):
    import re

    page = admin_client.get(reverse("admin:index")).text
    sections = re.findall(r'<caption>\s*<a [^>]*class="section"[^>]*>([^<]+)</a>', page)

    assert sections
    assert len(sections) == len(set(sections)), sections


def test_admin_signs_in_through_the_sites_log_in_and_its_limits(client, admin_user):
    """Admin's own form counted no failed attempt: a staff password could be
    guessed there without end."""
    asked = client.get("/admin/login/?next=/admin/topics/topic/")
    guessed = client.post(
        "/admin/login/", {"username": admin_user.email, "password": "guess"}
    )

    assert (asked.status_code, asked["Location"]) == (
        302,
        "/accounts/login/?next=%2Fadmin%2Ftopics%2Ftopic%2F",
    )
    assert guessed.status_code == 302
    assert guessed["Location"].startswith("/accounts/login/")
    assert "_auth_user_id" not in client.session


def test_admin_never_shows_an_api_key(admin_client, admin_user):
    key = Token.objects.get(user=admin_user).key

    listing = admin_client.get("/admin/authtoken/tokenproxy/")
    detail = admin_client.get(f"/admin/authtoken/tokenproxy/{admin_user.pk}/change/")

    assert admin_user.email in listing.text
    assert key not in listing.text
    assert detail.status_code == 403
    assert admin_client.get("/admin/authtoken/tokenproxy/add/").status_code == 403


def test_a_curator_sees_flags_not_who_flagged_and_cannot_write_them(
    client, curator, admin_user
):
    from django.contrib.auth.models import Permission

    fill_every_model(admin_user)  # admin_user flagged a paper
    curator.user_permissions.add(Permission.objects.get(codename="view_relevanceflag"))
    client.force_login(curator)
    flag = RelevanceFlag.objects.get()

    listing = client.get("/admin/topics/relevanceflag/")
    detail = client.get(f"/admin/topics/relevanceflag/{flag.pk}/change/")
    searched = client.get("/admin/topics/relevanceflag/", {"q": admin_user.email})

    assert flag.paper.arxiv_id in listing.text
    assert admin_user.email not in listing.text
    assert admin_user.email not in detail.text
    assert "0 results" in searched.text  # no search by the reader's address
    assert client.get("/admin/topics/relevanceflag/add/").status_code == 403


@pytest.mark.parametrize(
    "model", [Follow, SavedPaper, Question], ids=lambda m: m._meta.label
)
def test_staff_given_readers_rows_see_what_not_who(client, curator, admin_user, model):
    """Who follows a topic, saved a paper or asked a question was shown, and
    searchable by address, to any staff given that list, as it was not for
    flags: who is shown only to those who may see readers' accounts."""
    from django.contrib.auth.models import Permission

    fill_every_model(admin_user)
    name = model._meta.model_name
    curator.user_permissions.add(Permission.objects.get(codename=f"view_{name}"))
    client.force_login(curator)
    row = model.objects.get()

    listing = client.get(f"/admin/{model._meta.app_label}/{name}/")
    detail = client.get(f"/admin/{model._meta.app_label}/{name}/{row.pk}/change/")
    searched = client.get(
        f"/admin/{model._meta.app_label}/{name}/", {"q": admin_user.email}
    )

    assert listing.status_code == detail.status_code == 200
    assert admin_user.email not in listing.text
    assert admin_user.email not in detail.text
    assert "0 results" in searched.text


# Lists whose rows name a reader, a topic or a paper: each row's would be a query.
PER_READER = [Follow, SavedPaper, Question, RelevanceFlag, DigestPreferences]


@pytest.mark.parametrize("model", PER_READER, ids=lambda m: m._meta.label)
def test_a_list_costs_as_many_queries_for_many_rows_as_for_one(
    admin_client, model, django_assert_num_queries
):
    """Tried with one row of each, a list that read each row's reader, topic
    or paper anew (one left out of list_select_related) went unnoticed."""
    url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
    admin_client.get(url)  # the session and user, read once and kept
    with CaptureQueriesContext(connection) as one:
        admin_client.get(url)
    topic, paper = Topic.objects.get(), Paper.objects.order_by("arxiv_id").first()
    for n in range(5):
        reader = User.objects.create_user(f"reader{n}@example.com", "pw")
        Follow.objects.create(user=reader, topic=topic)
        SavedPaper.objects.create(user=reader, paper=paper)
        Question.objects.create(user=reader, topic=topic, text=f"Question {n}?")
        RelevanceFlag.objects.create(user=reader, topic=topic, paper=paper)
        DigestPreferences.objects.create(user=reader)

    with django_assert_num_queries(len(one)):
        response = admin_client.get(url)

    assert response.text.count("reader4@example.com") >= 1
