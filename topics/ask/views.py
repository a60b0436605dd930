"""Ask pages: questions about a topic's papers or one paper (AskPDF), answered
from them (topics.ask.asking), whole or streamed."""

from __future__ import annotations

from functools import partial

from django.http import HttpRequest
from django.http import HttpResponse
from django.http import HttpResponseNotAllowed
from django.http import StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.urls import reverse

from papers.query import get_paper_row
from papers.versions import paper_key
from papers.versions import topic_key
from papers.versions import version_of
from topics.ask.answerers import ChatCompletionsAnswerer
from topics.ask.asking import answer_key
from topics.ask.asking import ask
from topics.ask.asking import keep_answer
from topics.ask.asking import kept_answer
from topics.ask.asking import recent_questions
from topics.ask.asking import record_question
from topics.ask.asking import redeem_stream_token
from topics.ask.asking import stream_events
from topics.ask.asking import stream_token
from topics.ask.asking import topic_scope
from topics.ask.forms import AskForm
from topics.ask.fulltext import READY
from topics.ask.fulltext import fulltext_state
from topics.ask.retrieval import Scope
from topics.ask.retrieval import retrieve
from topics.ask.retrieval import scoped_papers
from topics.ask.retrieval import term_weights
from topics.limits import client_key
from topics.limits import take
from topics.query import get_active_topic

# ASK ABOUT THIS TOPIC, ASKPDF
# ------------------------------------------------------------------------------
# Open to visitors and never cached: answers depend on the question. Without
# JavaScript the page carries the whole answer; static/js/ask.js adds stream=1
# when a language model is configured, and the page then leaves the answer to
# the stream endpoint, with a signed ticket so the question counts once.
# offline=1 (ask.js's link when a stream breaks) answers without the model.


def ask_topic(request: HttpRequest, slug: str) -> HttpResponse:
    topic = get_active_topic(slug)
    return _ask_page(
        request,
        "topics/ask.html",
        {"topic": topic},
        lambda data: topic_scope(topic, **_window(data)),
        reverse("topics:ask_stream", args=[topic.slug]),
        placeholder="Which papers introduce a new benchmark or dataset?",
    )


def ask_topic_stream(request: HttpRequest, slug: str) -> HttpResponseBase:
    topic = get_active_topic(slug)
    return _ask_stream(request, lambda data: topic_scope(topic, **_window(data)))


def ask_paper(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    paper = get_paper_row(arxiv_id)
    return _ask_page(
        request,
        "papers/ask.html",
        {"paper": paper},
        lambda data: Scope(paper=paper),
        reverse("ask_paper_stream", args=[paper.arxiv_id]),
        placeholder="What is the main result?",
    )


def ask_paper_stream(request: HttpRequest, arxiv_id: str) -> HttpResponseBase:
    paper = get_paper_row(arxiv_id)
    return _ask_stream(request, lambda data: Scope(paper=paper))


def _ask_page(
    request, template, context, scope_of, stream_path, placeholder
) -> HttpResponse:
    form = AskForm(request.GET or None, placeholder=placeholder)
    provider = ChatCompletionsAnswerer.from_settings()
    context = {**context, "form": form, "streams": provider is not None}
    status, wait = 200, 0
    if form.is_bound and not form.is_valid():
        status = 400
    elif form.is_bound and form.question and from_elsewhere(request):
        # Filled in, for the reader to ask by pressing Ask (from this site).
        context["from_elsewhere"] = True
    elif form.is_bound and form.question and request.method == "GET":
        # A HEAD (a link checker, a mail scanner) asks nothing: no answer, no
        # question counted against the visitor's limit.
        question, scope = form.question, scope_of(form.cleaned_data)
        offline = request.GET.get("offline") == "1"
        asker, key = client_key(request), _scope_key(scope)
        # Read before asking: a full text that comes in meanwhile is not what
        # this answer was read from.
        kept_as = answer_key(asker, _read_from(scope), question, offline=offline)
        if kept := kept_answer(kept_as):
            # Shown again (a reload, Back from a cited paper): not asked again.
            if request.user.is_authenticated:
                record_question(request.user, scope, question)
            context.update(
                question=question, scope=scope, sources=kept.sources, answer=kept
            )
        elif wait := take(asker):
            status = 429
            context["wait_minutes"] = max(1, round(wait / 60))
        else:
            streaming = (
                provider is not None
                and not offline
                and request.GET.get("stream") == "1"
            )
            sources, answer = ask(
                scope, question, request.user, answer=not streaming, offline=offline
            )
            context.update(question=question, scope=scope, sources=sources)
            context["answer"] = answer
            if answer is not None:
                keep_answer(kept_as, answer, offline=offline, provider=provider)
            if streaming:
                params = request.GET.copy()
                params.pop("stream", None)
                params["token"] = stream_token(key, question)
                context["stream_url"] = f"{stream_path}?{params.urlencode()}"
        if scope.paper is not None and "answer" in context:
            context["fulltext"] = fulltext_state(scope.paper)
        if scope.topic is not None and "question" in context and not context["sources"]:
            # No words could match: "try other words" would send the reader
            # round in circles.
            context["no_papers"] = not scoped_papers(scope).exists()
    context["recent"] = recent_questions(request.user)
    response = render(request, template, context, status=status)
    if wait:
        response["Retry-After"] = str(wait)
    return response


def _ask_stream(request: HttpRequest, scope_of) -> HttpResponseBase:
    if request.method != "GET":
        # A HEAD would ask, and count, a question (as on the page, _ask_page).
        return HttpResponseNotAllowed(["GET"])
    if from_elsewhere(request):
        return HttpResponse(
            "Ask from the ask page.", status=403, content_type="text/plain"
        )
    form = AskForm(request.GET)
    if not form.is_valid() or not form.question:
        # What is wrong: the question, or the window asked about.
        refused = [str(error) for errors in form.errors.values() for error in errors]
        message = (
            " ".join(refused) or "Ask a question (at most 500 characters) with ?q=."
        )
        return HttpResponse(message, status=400, content_type="text/plain")
    question, scope = form.question, scope_of(form.cleaned_data)
    asker, token = client_key(request), request.GET.get("token", "")
    kept_as = answer_key(asker, _read_from(scope), question, offline=False)
    if not redeem_stream_token(token, _scope_key(scope), question):
        if wait := take(asker):
            response: HttpResponseBase = HttpResponse(
                "Too many questions; try again later.",
                status=429,
                content_type="text/plain",
            )
            response["Retry-After"] = str(wait)
            return response
        if request.user.is_authenticated:
            record_question(request.user, scope, question)
    provider = ChatCompletionsAnswerer.from_settings()
    events = stream_events(
        question,
        retrieve(scope, question),
        provider,
        term_weights(scope, question),
        keep=partial(keep_answer, kept_as, offline=False, provider=provider),
    )
    response = StreamingHttpResponse(events, content_type="text/event-stream")
    # One asker's answer as it is written (a reader's counts as their question):
    # no cache, shared or the browser's, keeps it.
    response["Cache-Control"] = "private, no-store"
    response["X-Accel-Buffering"] = "no"  # let a proxy pass each event on at once
    return response


def from_elsewhere(request: HttpRequest) -> bool:
    """Whether the browser says another site sent the request (Fetch
    Metadata): a link or a page there must not ask a question for the reader,
    which would write their recent questions and spend their hourly questions
    (and the operator's model). A browser that does not say is taken as this
    site's."""
    return request.headers.get("Sec-Fetch-Site") in {"cross-site", "same-site"}


def _window(data: dict) -> dict:
    return {key: data.get(key) for key in ("weeks", "since", "until")}


def _read_from(scope: Scope) -> str:
    """What an answer is read from: its scope as it is now (the topic's or the
    paper's version: an answer kept from before a paper was tagged in could
    not cite it), and for a paper whether its full text is in (an answer kept
    from the abstract is not given once it is)."""
    if scope.paper is not None:
        version = version_of(paper_key(scope.paper.arxiv_id))
        full = ":full" if fulltext_state(scope.paper) == READY else ""
        return f"{_scope_key(scope)}@{version}{full}"
    assert scope.topic is not None  # a scope is a paper's or a topic's
    return f"{_scope_key(scope)}@{version_of(topic_key(scope.topic.slug))}"


def _scope_key(scope: Scope) -> str:
    if scope.paper is not None:
        return f"paper:{scope.paper.arxiv_id}"
    assert scope.topic is not None  # a scope is a paper's or a topic's
    return f"topic:{scope.topic.slug}:{scope.since}:{scope.until}"
