"""me/followed-authors/: the authors the caller follows."""

from __future__ import annotations

import pytest

from papers.models import Author
from papers.models import AuthorFollow
from tests.api.conftest import assert_error

pytestmark = pytest.mark.django_db

URL = "/api/v1/me/followed-authors/"


@pytest.fixture
def ada(corpus) -> Author:
    return Author.objects.get(key="ada lovelace")


def test_follow_list_and_unfollow_an_author(as_alice, as_bob, alice, ada):
    response = as_alice.post(URL, {"author": ada.pk}, format="json")

    assert response.status_code == 201
    assert response.json()["author"] == {"id": ada.pk, "name": "Ada Lovelace"}
    assert as_alice.post(URL, {"author": ada.pk}, format="json").status_code == 200
    assert AuthorFollow.objects.filter(user=alice).count() == 1
    listed = as_alice.get(URL).json()
    assert [f["author"]["id"] for f in listed] == [ada.pk]
    assert "followed_at" in listed[0]
    assert as_bob.get(URL).json() == []

    # Bob unfollowing changes nothing of Alice's; unfollowing is idempotent.
    assert as_bob.delete(f"{URL}{ada.pk}/").status_code == 204
    assert AuthorFollow.objects.filter(user=alice).count() == 1
    assert as_alice.delete(f"{URL}{ada.pk}/").status_code == 204
    assert as_alice.delete(f"{URL}{ada.pk}/").status_code == 204
    assert not AuthorFollow.objects.exists()


@pytest.mark.parametrize(
    "body", [{}, {"author": "1"}, {"author": None}, {"author": True}, {"author": 0}]
)
def test_following_needs_an_author_id(as_alice, corpus, body):
    response = as_alice.post(URL, body, format="json")

    assert "author" in assert_error(response, 400, "invalid")["fields"]


def test_following_an_author_that_does_not_exist_is_a_404(as_alice, corpus):
    response = as_alice.post(URL, {"author": 999_999}, format="json")

    error = assert_error(response, 404, "not_found")
    assert error["fields"]["author"][0]["code"] == "does_not_exist"
    assert_error(as_alice.delete(f"{URL}999999/"), 404, "not_found")


def test_followed_authors_need_signing_in(anonymous, ada):
    assert anonymous.get(URL).status_code == 401
    assert anonymous.post(URL, {"author": ada.pk}, format="json").status_code == 401
    assert not AuthorFollow.objects.exists()


def test_a_client_follows_an_author_a_papers_detail_names(as_alice, corpus):
    """The id was only in the site's /authors/<id>/ addresses."""
    detail = as_alice.get("/api/v1/papers/2606.00001/").json()
    author = detail["authors"][0]

    response = as_alice.post(URL, {"author": author["id"]}, format="json")

    assert response.status_code == 201
    assert response.json()["author"]["name"] == author["name"] == "Ada Lovelace"
