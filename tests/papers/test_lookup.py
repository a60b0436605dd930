"""Save, Rate, Flag and Ask, on the site and in the API, read the paper they
act on alone: never its authors, whom they do not show, so a collaboration's
paper of thousands costs what any other does."""

from __future__ import annotations

from functools import partial

import pytest
from django.db import connection
from django.http import Http404
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from papers.ingest.upsert import upsert_records
from papers.query import get_paper
from papers.query import get_paper_row
from tests.papers.factories import collaboration
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.tagging import tag_papers

pytestmark = pytest.mark.django_db

LARGE, SMALL, WARM_UP = "2606.00001", "2606.00002", "2606.00003"

# (client fixture, method, address with {id}, data): each acts on one paper.
ACTIONS = {
    "save": ("reader", "post", "/papers/{id}/save/", {}),
    "unsave": ("reader", "post", "/papers/{id}/save/?on=0", {}),
    "rate": ("reader", "post", "/papers/{id}/rate/", {"rating": "up"}),
    "flag": ("reader", "post", "/topics/results/papers/{id}/not-relevant/", {}),
    "ask": ("reader", "get", "/papers/{id}/ask/", {"q": "what result"}),
    "api save": ("as_alice", "post", "/api/v1/me/saved/", {"paper": "{id}"}),
    "api unsave": ("as_alice", "delete", "/api/v1/me/saved/{id}/", {}),
    "api rate": (
        "as_alice",
        "post",
        "/api/v1/me/ratings/",
        {"paper": "{id}", "rating": 1},
    ),
    "api unrate": ("as_alice", "delete", "/api/v1/me/ratings/{id}/", {}),
    "api flag": (
        "as_alice",
        "post",
        "/api/v1/topics/results/papers/{id}/not-relevant/",
        {},
    ),
    "api ask": ("as_alice", "get", "/api/v1/papers/{id}/ask/", {"q": "what result"}),
}


# The API's save answers with the saved paper, its authors read in one query.
READS_AUTHORS = {"api save": 1}


@pytest.fixture
def papers(db):
    """A collaboration's paper of 2,000 authors, a paper of two and another
    (to warm the client up on), all in the topic Results."""
    make_topic("Results", rule="ti:result", slug="results")
    records = [
        *collaboration(1, 2000),
        paper_record(SMALL, title="A result of two"),
        paper_record(WARM_UP, title="Another result"),
    ]
    tag_papers(upsert_records(records).changed_ids)


def queries(client, method: str, address: str, data: dict, arxiv_id: str) -> list:
    data = {
        key: value.format(id=arxiv_id) if isinstance(value, str) else value
        for key, value in data.items()
    }
    send = partial(getattr(client, method), address.format(id=arxiv_id))
    if isinstance(client, APIClient):
        send = partial(send, format="json")
    with CaptureQueriesContext(connection) as captured:
        response = send(data) if data else send()
    assert response.status_code < 400, response.content
    return [query["sql"] for query in captured.captured_queries]


@pytest.mark.parametrize("action", ACTIONS)
def test_an_action_on_a_paper_costs_the_same_whatever_its_authors(
    papers, action, request
):
    fixture, method, address, data = ACTIONS[action]
    client = request.getfixturevalue(fixture)
    # The first request of a session reads what later ones need not.
    queries(client, method, address, data, WARM_UP)

    large = queries(client, method, address, data, LARGE)
    small = queries(client, method, address, data, SMALL)

    assert len(large) == len(small)
    authors = [sql for sql in large if "papers_authorship" in sql]
    assert len(authors) == READS_AUTHORS.get(action, 0)


@pytest.mark.parametrize(
    "identifier",
    [SMALL, f"{SMALL}v1", f"{SMALL}v7", "arXiv:2606.00002", "2606.99999", "nope"],
)
def test_the_light_lookup_finds_or_refuses_what_the_page_does(papers, identifier):
    def found(lookup):
        try:
            return lookup(identifier).pk
        except Http404 as exc:
            return str(exc)

    assert found(get_paper_row) == found(get_paper)
