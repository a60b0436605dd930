"""The judge of the band against a fake OpenAI-compatible server of ours: it
streams, answers whole, times out, limits (429), answers garbage and refuses
(topics.judging, topics.tasks.judge_pending_papers)."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator

import pytest
from django.urls import reverse
from pytest_httpserver import HTTPServer
from werkzeug import Request
from werkzeug import Response

from tests.integration.smtp_server import free_port
from tests.topics.test_three_way import band_around
from tests.topics.test_three_way import papers  # noqa: F401 (fixture)
from tests.topics.test_three_way import topic  # noqa: F401 (fixture)
from topics.curation import exclude_paper
from topics.curation import pin_paper
from topics.judging import JudgeError
from topics.judging import parse_verdict
from topics.models import JudgeVerdict
from topics.models import PaperTopic
from topics.models import ReviewItem
from topics.models import TopicModel
from topics.tasks import judge_pending_papers
from topics.tasks import judge_topics

pytestmark = pytest.mark.django_db

IN = '{"verdict": "in", "reason": "It trains a tool-calling agent with RL."}'


class JudgeServer:
    """/v1/chat/completions answering what a test sets: streamed as events or
    whole, an HTTP error, a stall past the timeout, or a refusal."""

    def __init__(self, server: HTTPServer) -> None:
        self.requests: list[dict] = []
        self.answer = IN
        self.status = 200
        self.whole = False  # a plain JSON answer although a stream was asked for
        self.refusal = ""
        self.stalling = False
        self.stream_then_stall = False
        self.stall = threading.Event()
        self.base_url = server.url_for("/v1")
        server.expect_request(
            "/v1/chat/completions", method="POST"
        ).respond_with_handler(self.handle)

    def handle(self, request: Request) -> Response:
        body = json.loads(request.get_data())
        self.requests.append(body)
        if self.stalling:
            self.stall.wait(10)  # released at teardown
        if self.status != 200:
            error = {"error": {"message": "rate limited", "type": "rate_limit"}}
            return Response(json.dumps(error), self.status, mimetype="application/json")
        if self.whole or self.refusal:
            message = {"role": "assistant", "content": self.answer}
            if self.refusal:
                message = {
                    "role": "assistant",
                    "content": None,
                    "refusal": self.refusal,
                }
            payload = {"choices": [{"index": 0, "message": message}]}
            return Response(json.dumps(payload), 200, mimetype="application/json")
        return Response(self.events(), 200, mimetype="text/event-stream")

    def events(self) -> Iterator[str]:
        for start in range(0, len(self.answer), 5):
            delta = {
                "choices": [{"delta": {"content": self.answer[start : start + 5]}}]
            }
            yield f"data: {json.dumps(delta)}\n\n"
            if self.stream_then_stall:
                self.stall.wait(10)
        yield "data: [DONE]\n\n"


@pytest.fixture
def judge(httpserver: HTTPServer, settings) -> Iterator[JudgeServer]:
    server = JudgeServer(httpserver)
    settings.MOMENTUM_JUDGE_API_BASE = server.base_url
    settings.MOMENTUM_JUDGE_MODEL = "judge-test-model"
    settings.MOMENTUM_JUDGE_API_KEY = "sk-judge"
    settings.MOMENTUM_JUDGE_TIMEOUT = 1.0
    settings.MOMENTUM_JUDGE_BATCH = 10
    yield server
    server.stall.set()


@pytest.fixture
def pending(topic, papers):  # noqa: F811
    """The paper the rule misses, alone in the band."""
    missed = papers["2606.00200"]
    band_around(topic, missed)
    assert ReviewItem.objects.get(topic=topic, paper=missed).pending
    return missed


def test_a_streamed_verdict_decides_a_pending_paper(judge, topic, pending):  # noqa: F811
    topic.definition = "Agents trained with reinforcement learning."
    topic.save()

    judge_pending_papers(topic.pk)

    verdict = JudgeVerdict.objects.get(topic=topic, paper=pending)
    assert verdict.belongs
    assert verdict.reason == "It trains a tool-calling agent with RL."
    assert verdict.model == "judge-test-model"
    tag = PaperTopic.objects.get(topic=topic, paper=pending)
    assert tag.source == PaperTopic.Source.JUDGE
    assert not ReviewItem.objects.get(topic=topic, paper=pending).pending
    # What was sent: the topic's definition and the paper, as JSON data.
    (sent,) = judge.requests
    data = json.loads(sent["messages"][1]["content"])
    assert data["definition"] == "Agents trained with reinforcement learning."
    assert data["paper"]["title"] == pending.title
    assert sent["stream"] is True


def test_a_whole_answer_saying_out_keeps_the_paper_out(judge, topic, pending):  # noqa: F811
    judge.whole = True
    judge.answer = '```json\n{"verdict": "out", "reason": "No RL here."}\n```'

    judge_pending_papers(topic.pk)

    assert not JudgeVerdict.objects.get(topic=topic, paper=pending).belongs
    assert not PaperTopic.objects.filter(topic=topic, paper=pending).exists()
    assert not ReviewItem.objects.get(topic=topic, paper=pending).pending


@pytest.mark.parametrize(
    ("setup", "logged"),
    [
        ({"stalling": True}, "did not answer within 1 second\n"),
        ({"stream_then_stall": True}, "did not answer within 1 second\n"),
        ({"status": 429}, "HTTP 429"),
        ({"answer": "Sure! The paper is great."}, "not JSON"),
        ({"answer": '{"verdict": "maybe", "reason": "hard"}'}, "no verdict"),
        ({"answer": "[1, 2]", "whole": True}, "not a JSON object"),
        ({"refusal": "I can't help with that."}, "refused"),
    ],
    ids=[
        "timeout",
        "stall-mid-stream",
        "429",
        "prose",
        "bad-verdict",
        "list",
        "refusal",
    ],
)
def test_a_failure_leaves_the_paper_pending_and_is_logged(
    judge,
    topic,  # noqa: F811
    pending,
    caplog,
    setup,
    logged,
):
    for name, value in setup.items():
        setattr(judge, name, value)

    with caplog.at_level(logging.WARNING, logger="topics.judging"):
        judge_pending_papers(topic.pk)

    assert not JudgeVerdict.objects.exists()
    item = ReviewItem.objects.get(topic=topic, paper=pending)
    assert item.pending
    assert item.judged_at is not None  # claimed: the next sweep waits
    assert not PaperTopic.objects.filter(topic=topic, paper=pending).exists()
    assert logged in caplog.text
    assert "left paper" in caplog.text


def test_a_paper_that_failed_is_not_asked_again_before_the_retry(
    judge,
    topic,  # noqa: F811
    pending,
):
    judge.status = 429
    judge_pending_papers(topic.pk)
    judge.status = 200

    judge_pending_papers(topic.pk)

    assert len(judge.requests) == 1
    assert ReviewItem.objects.get(topic=topic, paper=pending).pending


def test_a_judge_out_of_reach_stops_the_batch_with_one_warning(
    judge,
    topic,  # noqa: F811
    pending,
    papers,  # noqa: F811
    settings,
    caplog,
):
    """Each pending paper waited the connect timeout in turn and logged two
    warnings of its own: a batch of 50 a topic, every sweep, for as long as
    the judge was down. The rest wait, unclaimed, for the next sweep."""
    for paper in papers.values():
        ReviewItem.objects.update_or_create(
            topic=topic, paper=paper, defaults={"pending": True, "probability": 0.5}
        )
    assert ReviewItem.objects.filter(topic=topic, pending=True).count() > 2
    settings.MOMENTUM_JUDGE_API_BASE = f"http://127.0.0.1:{free_port()}/v1"

    with caplog.at_level(logging.WARNING):
        judge_pending_papers(topic.pk)

    claimed = ReviewItem.objects.filter(topic=topic, judged_at__isnull=False)
    assert claimed.count() == 1
    [left] = [r.getMessage() for r in caplog.records if r.name == "topics.judging"]
    assert f"{topic.slug}: it could not be reached" in left


@pytest.mark.parametrize("decision", [pin_paper, exclude_paper])
def test_a_curator_decision_overrides_the_verdict(judge, topic, pending, decision):  # noqa: F811
    judge.answer = '{"verdict": "out", "reason": "Not agents."}'
    judge_pending_papers(topic.pk)

    decision(topic, pending)

    member = PaperTopic.objects.filter(topic=topic, paper=pending).first()
    if decision is pin_paper:
        assert member.source == PaperTopic.Source.PIN
    else:
        assert member is None
    assert not ReviewItem.objects.filter(topic=topic, paper=pending).exists()


def test_the_sweep_sends_topics_with_pending_papers_only_when_configured(
    topic,  # noqa: F811
    pending,
    settings,
    monkeypatch,
):
    sent = []
    monkeypatch.setattr(judge_pending_papers, "delay", sent.append)
    # An empty judge queue, whatever other tests left on the shared test broker
    # (a full one: tests/integration/test_waiting_queues.py).
    monkeypatch.setattr("topics.tasks.waiting", lambda queue: 0)
    settings.MOMENTUM_JUDGE_API_BASE = ""
    judge_topics()
    assert sent == []

    settings.MOMENTUM_JUDGE_API_BASE = "http://127.0.0.1:9/v1"
    settings.MOMENTUM_JUDGE_MODEL = "m"
    judge_topics()
    assert sent == [topic.pk]


def test_a_request_that_trains_a_topic_leaves_the_judge_to_a_thread(
    admin_client,
    judge,
    topic,  # noqa: F811
    pending,
    settings,
    monkeypatch,
    django_capture_on_commit_callbacks,
):
    """In the embedded default (tasks in process) a curator's "Train relevance
    model now" trained in the request, and then waited there on the judge's
    language model for every pending paper of the topic."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    # A training that leaves the paper in the band (this corpus's own would
    # decide it).
    trained = (topic, TopicModel.objects.get(topic=topic))
    monkeypatch.setattr("topics.relevance.retrain", lambda *args, **kw: trained)
    later = []
    monkeypatch.setattr("core.queue._run_later", lambda *args: later.append(args))
    selected = {"action": "train_model", "_selected_action": [topic.pk]}

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(reverse("admin:topics_topic_changelist"), selected)

    assert response.status_code == 302
    assert judge.requests == []
    # The process's thread judges the paper once the request is over.
    [(_, task, args)] = later
    task.apply(args, throw=True)
    assert len(judge.requests) == 1
    assert JudgeVerdict.objects.get(topic=topic, paper=pending).belongs


def test_the_judge_task_is_routed_to_its_own_queue(settings):
    route = settings.CELERY_TASK_ROUTES["topics.tasks.judge_pending_papers"]
    assert route == {"queue": "judge"}


@pytest.mark.parametrize(
    "text",
    ["", "in", '{"verdict": "in"}', '{"verdict": "in", "reason": "  "}', "null"],
)
def test_parse_verdict_refuses_what_is_not_a_verdict(text):
    with pytest.raises(JudgeError):
        parse_verdict(text, "m")


def test_parse_verdict_keeps_one_line():
    verdict = parse_verdict('{"verdict": "OUT", "reason": "Not\\n  agents."}', "m")

    assert (verdict.belongs, verdict.reason, verdict.model) == (
        False,
        "Not agents.",
        "m",
    )
