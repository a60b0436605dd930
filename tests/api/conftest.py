from __future__ import annotations

from datetime import UTC
from datetime import datetime

import pytest

from papers.ingest.upsert import upsert_records
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.momentum import refresh_momentum
from topics.tagging import tag_papers


@pytest.fixture
def corpus(db):
    """Two topics; eight agent papers over three days, one also a robot paper, and
    an old-style id. Momentum counted."""
    agents = make_topic(
        "RL for LLM Agents", rule="ti:agent", glossary="RL: Reinforcement Learning"
    )
    robots = make_topic("Robot Learning", rule="ti:robot", slug="robot-learning")
    agents.related.add(robots)
    records = [
        paper_record(
            f"2606.{n:05d}",
            title=f"Agent {n}",
            published=datetime(2026, 6, 1 + n % 3, 15, 0, tzinfo=UTC),
            categories=("cs.LG", "cs.AI") if n % 2 else ("cs.AI",),
        )
        for n in range(1, 8)
    ]
    records.append(paper_record("2606.00100", title="An agent and a robot"))
    records.append(
        paper_record("math/0601001", version=2, title="Old style id", categories=())
    )
    tag_papers(upsert_records(records).changed_ids)
    refresh_momentum()
    return {"agents": agents, "robots": robots}


def assert_error(response, status: int, code: str | None = None) -> dict:
    """The response is an error in the API's one shape; returns its body."""
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert set(body) == {"error"}
    assert {"code", "message"} <= set(body["error"]) <= {"code", "message", "fields"}
    if code is not None:
        assert body["error"]["code"] == code, body
    return body["error"]
