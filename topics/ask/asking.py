"""Asking: a question, scoped, retrieved, answered (with fallback) and remembered.

Views, the stream and the API call these functions; they stay thin.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from collections.abc import Iterator
from datetime import date
from datetime import timedelta

from django.contrib.auth.models import AnonymousUser
from django.core import signing
from django.core.cache import cache
from django.utils import timezone

from accounts.models import User
from core.release import RELEASE
from topics.ask.answerers import Answer
from topics.ask.answerers import ChatCompletionsAnswerer
from topics.ask.answerers import ProviderError
from topics.ask.citations import ClaimStream
from topics.ask.extractive import ExtractiveAnswerer
from topics.ask.extractive import in_reading_order
from topics.ask.fulltext import request_fulltext
from topics.ask.retrieval import Scope
from topics.ask.retrieval import Source
from topics.ask.retrieval import retrieve
from topics.ask.retrieval import term_weights
from topics.ask.text import question_language
from topics.ask.text import written_in_latin
from topics.models import Question
from topics.models import Topic
from topics.momentum import latest_announcement_day

logger = logging.getLogger(__name__)

RECENT_SHOWN = 10
# The same question again within this long is the same asking (a reload).
ASKED_AGAIN_WITHIN = timedelta(minutes=10)
STREAM_TOKEN_SECONDS = 600
# A ticket streams its answer this many times: once, and again when a stream
# that broke off is tried again (ask.js), without counting the question again.
STREAM_TOKEN_USES = 3
# An answer is kept this long for its page to show again (kept_answer).
KEPT_SECONDS = 15 * 60


def topic_scope(
    topic: Topic,
    *,
    weeks: int | None = None,
    since: date | None = None,
    until: date | None = None,
) -> Scope:
    """The topic, within `since`..`until` or the last `weeks` weeks of harvest."""
    if weeks:
        # Windows end at the latest harvested day, as momentum's do (DESIGN.md).
        until = until or latest_announcement_day()
        if until is not None:
            # Not before the calendar's first day (until=0001-01-01 was a 500).
            days = min(timedelta(days=7 * weeks - 1), until - date.min)
            since = until - days
    return Scope(topic=topic, since=since, until=until)


def answer_question(
    question: str,
    sources: list[Source],
    provider: ChatCompletionsAnswerer | None = None,
    weights: dict[str, float] | None = None,
) -> Answer:
    """The provider's checked answer, or the offline one with a notice saying why;
    either way numbered in reading order. `weights`: term_weights of the scope."""
    if (answer := _offline_only(question, sources, weights)) is not None:
        return answer
    offline = ExtractiveAnswerer(weights)
    if provider is None:
        return offline.answer(question, sources)
    try:
        answer = provider.answer(question, sources)
    except ProviderError as exc:
        return _fallback(offline.answer(question, sources), str(exc))
    if not answer.claims:
        return _fallback(
            offline.answer(question, sources),
            "its answer cited none of the retrieved papers",
        )
    return in_reading_order(answer)


ENGLISH_ONLY = (
    "Questions are matched against the papers' English text: this one has no "
    "English word to match. Ask it in English."
)
IN_ENGLISH = (
    "Questions are matched against the papers' English text: this one seems to "
    "be in {language}. Ask it in English."
)


def _offline_only(
    question: str,
    sources: list[Source],
    weights: dict[str, float] | None,
    *,
    reading_order: bool = True,
) -> Answer | None:
    """The offline answer where no model is asked: no paper was retrieved, or
    the question has no English word or is in another language (which its
    notice says); else None."""
    latin = written_in_latin(question)
    language = question_language(question) if latin else ""
    if latin and not language and sources:
        return None
    answer = ExtractiveAnswerer(weights, reading_order=reading_order).answer(
        question, sources
    )
    if not latin:
        answer.notice = ENGLISH_ONLY
    elif language:
        answer.notice = IN_ENGLISH.format(language=language)
    return answer


def _fallback(answer: Answer, reason: str) -> Answer:
    logger.warning("Chat provider failed, offline answer shown: %s", reason)
    answer.notice = (
        f"The language model could not answer: {reason}. "
        "Here is the offline answer, quoted from the papers."
    )
    return answer


def stream_events(
    question: str,
    sources: list[Source],
    provider: ChatCompletionsAnswerer | None,
    weights: dict[str, float] | None = None,
    keep: Callable[[Answer], None] | None = None,
) -> Iterator[str]:
    """Server-sent events: each checked `claim` as it completes, then `done`
    with who wrote them; on provider failure, `fallback` with the offline
    answer (which replaces any claims sent), then `done`. The numbers stay the
    retrieval's: the page already lists the sources by them. The whole answer
    goes to `keep` before `done`."""
    checker = ClaimStream(source.number for source in sources)
    claims = []
    offline = _offline_only(question, sources, weights, reading_order=False)
    if offline is None:
        try:
            if provider is None:
                raise ProviderError("no language model is configured")
            for claim in provider.stream(question, sources, checker):
                claims.append(claim)
                yield _event(
                    "claim", {"text": claim.text, "citations": claim.citations}
                )
            if not claims:
                raise ProviderError("its answer cited none of the retrieved papers")
        except ProviderError as exc:
            offline = _fallback(
                ExtractiveAnswerer(weights, reading_order=False).answer(
                    question, sources
                ),
                str(exc),
            )
    if offline is not None:
        lead = [{"text": t, "citations": list(c)} for t, c in offline.lead_parts]
        yield _event("fallback", {**answer_data(offline), "lead_parts": lead})
    answer = offline
    if answer is None:
        answer = Answer(
            claims=claims, sources=sources, answerer="chat", dropped=checker.dropped
        )
    if keep is not None:
        keep(answer)
    yield _event(
        "done",
        {
            "answerer": answer.answerer,
            "dropped": answer.dropped,
            "attribution": answer.attribution,
            "cited": [source_data(s) for s in answer.cited],
        },
    )


def _event(name: str, data: dict) -> str:
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def answer_data(answer: Answer) -> dict:
    """An answer as plain JSON-able data (stream events and the API)."""
    return {
        "answerer": answer.answerer,
        "notice": answer.notice,
        "text": answer.text,
        "lead": answer.lead,
        "claims": [
            {"text": claim.text, "citations": list(claim.citations)}
            for claim in answer.claims
        ],
        "dropped": answer.dropped,
        "attribution": answer.attribution,
        "cited": [source_data(source) for source in answer.cited],
        "also_relevant": [source_data(source) for source in answer.also_relevant],
    }


def source_data(source: Source) -> dict:
    paper = source.paper
    return {
        "number": source.number,
        "arxiv_id": paper.arxiv_id,
        "title": source.title,
        "label": source.label,
        "url": source.link,
        "first_announced": paper.first_announced.isoformat()
        if paper.first_announced
        else None,
    }


def ask(
    scope: Scope,
    question: str,
    user: User | AnonymousUser | None,
    *,
    answer: bool = True,
    offline: bool = False,
) -> tuple[list[Source], Answer | None]:
    """Retrieve for the question, answer it unless `answer` is False (the answer
    then streams), without the language model if `offline`, and record it for a
    signed-in user. The sources come back numbered as the answer cites them."""
    if user is not None and user.is_authenticated:
        record_question(user, scope, question)
    if scope.paper is not None:
        request_fulltext(scope.paper)  # answers from the abstract until it is in
    sources = retrieve(scope, question)
    if not answer:
        return sources, None
    provider = None if offline else ChatCompletionsAnswerer.from_settings()
    checked = answer_question(
        question, sources, provider, term_weights(scope, question)
    )
    return checked.sources, checked


def answer_key(asker: str, read_from: str, question: str, *, offline: bool) -> str:
    """Where the answer to this question of these papers is kept for its asker
    (topics.limits.client_key) a while: their own reload shows it again;
    another asker's same question is asked, and counted, for them. Per
    release, as cached pages are."""
    asked = json.dumps([RELEASE, asker, read_from, question, offline])
    return f"ask:kept:{hashlib.sha256(asked.encode()).hexdigest()}"


def kept_answer(key: str) -> Answer | None:
    """The answer given a while ago (KEPT_SECONDS) under this answer_key, for
    its page to show again. Back from a cited paper, or a reload, asked the
    model again: another answer, whose numbers could cite other papers than
    those just read, counted against the asker's limit."""
    return cache.get(key)


def keep_answer(
    key: str,
    answer: Answer,
    *,
    offline: bool,
    provider: ChatCompletionsAnswerer | None,
) -> None:
    """Keep the answer for kept_answer; not the offline one given in place of
    a model that failed, which asking again may get."""
    if provider is not None and not offline and answer.answerer != "chat":
        return
    cache.set(key, answer, KEPT_SECONDS)


def record_question(user: User, scope: Scope, text: str) -> Question:
    """The question in the user's recent ones, with the window of the topic's
    papers it was asked of; asked again of the same topic and window or paper
    soon after (a reload), the last one moves up, not a second row."""
    asked = {
        "topic_id": getattr(scope.topic, "pk", None),
        "paper_id": getattr(scope.paper, "pk", None),
        "since": scope.since,
        "until": scope.until,
        "text": text,
    }
    last = Question.objects.filter(user=user).first()
    if (
        last is not None
        and all(getattr(last, name) == value for name, value in asked.items())
        and timezone.now() - last.created_at < ASKED_AGAIN_WITHIN
    ):
        last.created_at = timezone.now()
        last.save(update_fields=["created_at"])
        return last
    return Question.objects.create(user=user, **asked)


def recent_questions(user: User, limit: int = RECENT_SHOWN) -> list[Question]:
    """The user's latest questions, newest first, with their topic or paper."""
    if not user.is_authenticated:
        return []
    return list(
        Question.objects.filter(user=user).select_related("topic", "paper")[:limit]
    )


def stream_token(scope_key: str, question: str) -> str:
    """A signed ticket for one stream of an already counted question."""
    return signing.dumps({"s": scope_key, "q": question}, salt="ask-stream")


def redeem_stream_token(token: str, scope_key: str, question: str) -> bool:
    """True for the first STREAM_TOKEN_USES uses of a valid, unexpired ticket
    for this scope and question."""
    try:
        data = signing.loads(token, salt="ask-stream", max_age=STREAM_TOKEN_SECONDS)
    except signing.BadSignature:
        return False
    if data != {"s": scope_key, "q": question}:
        return False
    key = f"ask:token:{hashlib.sha256(token.encode()).hexdigest()}"
    if cache.add(key, 1, STREAM_TOKEN_SECONDS):
        return True
    try:
        return cache.incr(key) <= STREAM_TOKEN_USES
    except ValueError:  # expired between the two calls: a use like the first
        return cache.add(key, 1, STREAM_TOKEN_SECONDS)
