"""Who may call what: every endpoint and method as anonymous, a user (alice),
another user (bob, acting on the same addresses as alice) and a curator; and
staff with fewer permissions, who get what admin would give them.

The user-owned resources are alice's: she follows a topic, saved a paper and has
a token. Bob's column shows that the same calls only ever touch his own data.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from rest_framework.authtoken.models import Token

from papers.library import set_rating
from papers.library import set_saved
from papers.models import IngestRun
from papers.models import Paper
from papers.models import Rating
from papers.models import SavedPaper
from tests.api.conftest import assert_error
from tests.clients import token_client
from tests.conftest import CURATOR_PERMISSIONS
from topics.following import set_following
from topics.models import Follow
from topics.models import SavedSearch
from topics.saved_searches import create_search

pytestmark = pytest.mark.django_db

ROLES = ["anonymous", "user", "other", "staff"]
NEW_TOPIC = {"name": "New topic", "slug": "new-topic", "rule": "ti:new"}
DIGEST = {
    "frequency": "daily",
    "weekday": 2,
    "hour": 7,
    "time_zone": "UTC",
    "max_papers": 10,
}
TOPIC = "/api/v1/topics/robot-learning/"
SEARCH = {"name": "Robots again", "query": "robot"}
HIJACK = {"name": "Hijacked", "query": "agent"}
RATING = {"paper": "2606.00100", "rating": 1}

# (method, path, body): expected status for anonymous, user, other user, staff.
MATRIX = [
    ("get", "/api/v1/papers/", None, (200, 200, 200, 200)),
    ("post", "/api/v1/papers/", {}, (405, 405, 405, 405)),
    ("get", "/api/v1/papers/2606.00100/", None, (200, 200, 200, 200)),
    ("put", "/api/v1/papers/2606.00100/", {}, (405, 405, 405, 405)),
    ("patch", "/api/v1/papers/2606.00100/", {}, (405, 405, 405, 405)),
    ("delete", "/api/v1/papers/2606.00100/", None, (405, 405, 405, 405)),
    ("get", "/api/v1/topics/", None, (200, 200, 200, 200)),
    ("post", "/api/v1/topics/", NEW_TOPIC, (401, 403, 403, 201)),
    ("get", TOPIC, None, (200, 200, 200, 200)),
    ("put", TOPIC, {**NEW_TOPIC, "slug": "robot-learning"}, (401, 403, 403, 200)),
    ("patch", TOPIC, {"description": "Robots."}, (401, 403, 403, 200)),
    ("delete", TOPIC, None, (405, 405, 405, 405)),
    ("get", TOPIC + "papers/", None, (200, 200, 200, 200)),
    ("post", TOPIC + "papers/", {}, (405, 405, 405, 405)),
    ("post", TOPIC + "retag/", None, (401, 403, 403, 202)),
    ("get", TOPIC + "retag/", None, (405, 405, 405, 405)),
    # Each caller's own first flag (topics.flags: one per reader).
    ("post", TOPIC + "papers/2606.00100/not-relevant/", None, (401, 201, 201, 201)),
    ("get", "/api/v1/me/", None, (401, 200, 200, 200)),
    ("patch", "/api/v1/me/", {"last_name": "X"}, (401, 200, 200, 200)),
    ("put", "/api/v1/me/", {"first_name": "Y"}, (401, 200, 200, 200)),
    ("delete", "/api/v1/me/", None, (401, 405, 405, 405)),
    ("get", "/api/v1/me/digest/", None, (401, 200, 200, 200)),
    ("put", "/api/v1/me/digest/", DIGEST, (401, 200, 200, 200)),
    ("patch", "/api/v1/me/digest/", {"hour": 6}, (401, 200, 200, 200)),
    ("get", "/api/v1/me/follows/", None, (401, 200, 200, 200)),
    # alice follows it already (alices_things): 200, nothing created.
    ("post", "/api/v1/me/follows/", {"topic": "robot-learning"}, (401, 200, 201, 201)),
    ("delete", "/api/v1/me/follows/robot-learning/", None, (401, 204, 204, 204)),
    ("get", "/api/v1/me/follows/robot-learning/", None, (401, 405, 405, 405)),
    (
        "patch",
        "/api/v1/me/follows/robot-learning/",
        {"muted": True},
        (401, 200, 404, 404),
    ),
    ("get", "/api/v1/me/followed-authors/", None, (401, 200, 200, 200)),
    ("get", "/api/v1/me/saved/", None, (401, 200, 200, 200)),
    ("post", "/api/v1/me/saved/", {"paper": "2606.00100"}, (401, 200, 201, 201)),
    ("delete", "/api/v1/me/saved/2606.00100/", None, (401, 204, 204, 204)),
    # alice's saved search ({search}: its id); bob's calls find none of hers.
    ("get", "/api/v1/me/searches/", None, (401, 200, 200, 200)),
    ("post", "/api/v1/me/searches/", SEARCH, (401, 201, 201, 201)),
    ("get", "/api/v1/me/searches/{search}/", None, (401, 200, 404, 404)),
    ("patch", "/api/v1/me/searches/{search}/", HIJACK, (401, 200, 404, 404)),
    ("put", "/api/v1/me/searches/{search}/", HIJACK, (401, 405, 405, 405)),
    ("delete", "/api/v1/me/searches/{search}/", None, (401, 204, 404, 404)),
    # alice rated it up already: 200, nothing created.
    ("get", "/api/v1/me/ratings/", None, (401, 200, 200, 200)),
    ("post", "/api/v1/me/ratings/", RATING, (401, 200, 201, 201)),
    ("delete", "/api/v1/me/ratings/2606.00100/", None, (401, 204, 204, 204)),
    ("get", "/api/v1/me/token/", None, (401, 200, 200, 200)),
    # Token-authenticated callers have a token already: rotate it instead.
    ("post", "/api/v1/me/token/", None, (401, 409, 409, 409)),
    ("post", "/api/v1/me/token/rotate/", None, (401, 200, 200, 200)),
    ("delete", "/api/v1/me/token/", None, (401, 204, 204, 204)),
    ("get", "/api/v1/ingest-runs/", None, (401, 403, 403, 200)),
    ("post", "/api/v1/ingest-runs/", {}, (405, 405, 405, 405)),
    ("get", "/api/v1/feed-sources/", None, (401, 403, 403, 200)),
    ("post", "/api/v1/feed-sources/", {}, (405, 405, 405, 405)),
    ("get", "/api/schema/", None, (200, 200, 200, 200)),
    ("get", "/api/docs/", None, (200, 200, 200, 200)),
]

CASES = [
    pytest.param(method, path, body, role, expected[i], id=f"{method}-{path}-{role}")
    for method, path, body, expected in MATRIX
    for i, role in enumerate(ROLES)
]


@pytest.fixture
def alices_things(alice, corpus):
    """What alice owns before each call: a follow, a saved paper, a saved
    search, a rating, a token."""
    set_following(alice, corpus["robots"], True)
    set_saved(alice, Paper.objects.get(arxiv_id="2606.00100"), True)
    set_rating(alice, Paper.objects.get(arxiv_id="2606.00100"), Rating.UP)
    search = create_search(alice, name="Robots", query="robot", syntax="search")
    IngestRun.objects.create(source="test")
    return {
        "search": search.pk,
        "searches": list(SavedSearch.objects.filter(user=alice).values()),
        "ratings": list(Rating.objects.filter(user=alice).values()),
        "follows": list(
            Follow.objects.filter(user=alice).values_list("topic", flat=True)
        ),
        "saved": list(
            SavedPaper.objects.filter(user=alice).values_list("paper", flat=True)
        ),
        "token": Token.objects.get_or_create(user=alice)[0].key,
    }


@pytest.mark.parametrize(("method", "path", "body", "role", "status"), CASES)
def test_authorization(
    method, path, body, role, status, alice, bob, curator, alices_things
):
    caller = {"anonymous": None, "user": alice, "other": bob, "staff": curator}[role]
    client = token_client(caller)

    path = path.format(search=alices_things["search"])
    response = getattr(client, method)(path, body, format="json")

    assert response.status_code == status, response.content
    if status >= 400:
        code = {
            401: "not_authenticated",
            403: "permission_denied",
            404: "not_found",
            405: "method_not_allowed",
            409: "token_exists",
        }[status]
        assert_error(response, status, code)
    if role == "other":
        assert (
            list(Follow.objects.filter(user=alice).values_list("topic", flat=True))
            == alices_things["follows"]
        )
        assert (
            list(SavedPaper.objects.filter(user=alice).values_list("paper", flat=True))
            == alices_things["saved"]
        )
        assert Token.objects.get(user=alice).key == alices_things["token"]
        assert (
            list(SavedSearch.objects.filter(user=alice).values())
            == alices_things["searches"]
        )
        assert (
            list(Rating.objects.filter(user=alice).values()) == alices_things["ratings"]
        )


STAFF_CALLS = [
    ("post", "/api/v1/topics/", NEW_TOPIC, "add_topic"),
    ("put", TOPIC, {**NEW_TOPIC, "slug": "robot-learning"}, "change_topic"),
    ("patch", TOPIC, {"description": "Robots."}, "change_topic"),
    ("post", TOPIC + "retag/", None, "change_topic"),
    ("get", "/api/v1/ingest-runs/", None, "view_ingestrun"),
    ("get", "/api/v1/feed-sources/", None, "view_feedsource"),
]


@pytest.mark.parametrize(
    ("method", "path", "body", "permission"),
    STAFF_CALLS,
    ids=[f"{method}-{path}" for method, path, *_ in STAFF_CALLS],
)
def test_staff_get_in_the_api_what_admin_grants_them(
    method, path, body, permission, staff, corpus
):
    """A staff account given some permissions (say, to watch the feed
    sources) is refused the rest, as admin refuses it."""
    others = Permission.objects.filter(codename__in=CURATOR_PERMISSIONS).exclude(
        codename=permission
    )
    staff.user_permissions.set(others)
    client = token_client(staff)

    refused = getattr(client, method)(path, body, format="json")
    staff.user_permissions.add(Permission.objects.get(codename=permission))
    granted = getattr(client, method)(path, body, format="json")

    assert_error(refused, 403, "permission_denied")
    assert granted.status_code in (200, 201, 202), granted.content
