from __future__ import annotations

import json
from datetime import UTC
from datetime import datetime

import pytest

from papers.ingest.upsert import upsert_records
from papers.models import Paper
from papers.versions import content_changed
from tests.ask.pdfs import PAGES
from tests.ask.pdfs import tiny_pdf
from tests.papers.factories import collaboration
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from tests.visible import visible_text
from topics.models import Question
from topics.tagging import tag_papers


def test_visitor_asks_a_topic_and_gets_a_cited_offline_answer(client, agents):
    response = client.get(
        "/topics/agents/ask/", {"q": "Which papers use tree search for rollouts?"}
    )

    assert response.status_code == 200
    html = response.content.decode()
    assert "Monte Carlo tree search to plan rollouts" in html
    assert 'class="cite" href="/papers/2606.00001/"' in html
    assert "Retrieved" in html
    assert "Your recent questions" not in html
    assert not Question.objects.exists()


def test_empty_question_shows_the_form(client, agents):
    response = client.get("/topics/agents/ask/", {"q": "  "})

    assert response.status_code == 200
    assert b"Ask about Agents" in response.content
    assert b"Retrieved" not in response.content


def test_huge_question_is_refused_with_a_message(client, agents):
    response = client.get("/topics/agents/ask/", {"q": "tree " * 200})

    assert response.status_code == 400
    assert b"at most 500 characters" in response.content


def test_a_head_request_asks_nothing(client, agents, alice):
    """A link checker or a mail scanner: no answer, no question counted."""
    client.force_login(alice)

    page = client.head("/topics/agents/ask/", {"q": "tree search"})
    stream = client.head("/topics/agents/ask/stream/", {"q": "tree search"})
    api = client.head("/api/v1/topics/agents/ask/", {"q": "tree search"})

    assert page.status_code == 200
    assert (stream.status_code, api.status_code) == (405, 405)
    assert not Question.objects.exists()


@pytest.mark.parametrize("sent_by", ["cross-site", "same-site"])
def test_a_question_in_a_link_from_another_site_is_filled_in_not_asked(
    client, agents, alice, sent_by
):
    """Another site's link (or image) must not write the reader's recent
    questions nor spend their hourly questions: the page fills the form in."""
    client.force_login(alice)
    elsewhere = {"HTTP_SEC_FETCH_SITE": sent_by}
    question = {"q": "Which papers use tree search?"}

    page = client.get("/topics/agents/ask/", question, **elsewhere)
    stream = client.get("/topics/agents/ask/stream/", question, **elsewhere)

    assert page.status_code == 200
    assert 'value="Which papers use tree search?"' in page.text
    assert "it is asked when you press Ask" in page.text
    assert "Retrieved" not in page.text
    assert stream.status_code == 403
    assert not Question.objects.exists()
    # Pressed on the page, from this site: asked.
    asked = client.get(
        "/topics/agents/ask/", question, HTTP_SEC_FETCH_SITE="same-origin"
    )
    assert "Retrieved" in asked.text
    assert Question.objects.count() == 1


def test_bad_window_is_refused(client, agents):
    response = client.get("/topics/agents/ask/", {"q": "tree", "weeks": "7"})
    streamed = client.get("/topics/agents/ask/stream/", {"q": "tree", "weeks": "7"})

    assert response.status_code == 400
    # The window is at fault, not the question.
    assert streamed.status_code == 400
    assert "Ask a question" not in streamed.text
    assert "7" in streamed.text


def test_unknown_topic_and_paper_are_404(client, agents):
    assert client.get("/topics/nope/ask/", {"q": "x"}).status_code == 404
    assert client.get("/papers/2699.99999/ask/", {"q": "x"}).status_code == 404
    assert client.get("/papers/not-an-id/ask/", {"q": "x"}).status_code == 404


def test_window_keeps_only_recent_papers(client, agents):
    response = client.get(
        "/topics/agents/ask/", {"q": "tree search rollouts", "weeks": "4"}
    )

    html = response.content.decode()
    assert "Tree search agent" in html
    assert "Old agent" not in html  # announced more than four weeks before the rest


@pytest.mark.parametrize(
    ("window", "said"),
    [
        ({"since": "2026-06-01"}, "Papers first announced since Jun 1, 2026."),
        ({"until": "2026-06-30"}, "Papers first announced until Jun 30, 2026."),
        (
            {"since": "2026-06-01", "until": "2026-06-30"},
            "Papers first announced Jun 1, 2026 to Jun 30, 2026.",
        ),
    ],
)
def test_a_window_open_at_one_end_is_said_whole(client, agents, window, said):
    response = client.get(
        "/topics/agents/ask/", {"q": "quantum chromodynamics", **window}
    )

    assert said in response.text
    assert "to .</p>" not in response.text
    assert "or a wider window." in response.text


def test_nothing_matching_says_so(client, agents):
    question = {"q": "quantum chromodynamics"}
    response = client.get("/topics/agents/ask/", question)
    windowed = client.get("/topics/agents/ask/", {**question, "weeks": "4"})

    assert response.status_code == 200
    # A wider window is offered only where there is one.
    said = "No paper of this topic matches the question. Try other words"
    assert f"{said}.<" in response.text
    assert f"{said}, or a wider window." in windowed.text


def test_a_topic_or_window_without_papers_says_so_not_to_try_other_words(
    client, agents
):
    """No words could have matched: the reader was told to try other ones."""
    make_topic("Quantum", rule="ti:qubit", slug="quantum")
    question = {"q": "Which papers use tree search?"}

    empty = client.get("/topics/quantum/ask/", question)
    window = client.get("/topics/agents/ask/", {**question, "since": "2026-07-01"})

    assert "This topic has no papers yet." in empty.text
    assert "No paper of this topic has been first announced in this window. " in (
        window.text
    )
    assert "Try a wider window." in window.text
    assert "Try other words" not in empty.text + window.text


def test_a_question_asked_again_at_once_is_listed_once(client, agents, alice):
    client.force_login(alice)
    for _ in range(2):  # a reload
        client.get("/topics/agents/ask/", {"q": "tree search?"})
    client.get("/papers/2606.00002/ask/", {"q": "tree search?"})  # another scope

    html = client.get("/topics/agents/ask/").content.decode()

    asked = Question.objects.filter(user=alice)
    assert [q.paper_id is None for q in asked] == [False, True]
    assert html.count(">tree search?</a>") == 2
    assert "· now</span>" in html  # not "0 minutes ago"


def test_a_recent_question_asked_of_a_window_reopens_with_it(client, agents, alice):
    """Reopened over all the topic's papers, it was another question."""
    client.force_login(alice)
    asked = client.get("/topics/agents/ask/", {"q": "tree search?", "weeks": "4"})
    scope = asked.context["scope"]

    html = client.get("/topics/agents/ask/").content.decode()
    again = client.get("/topics/agents/ask/", {"q": "tree search?"})  # all weeks

    link = (
        f'href="/topics/agents/ask/?q=tree%20search%3F&amp;since={scope.since}'
        f'&amp;until={scope.until}"'
    )
    assert scope.since is not None
    assert link in html
    assert again.status_code == 200
    # Two questions: the same words over other papers.
    assert Question.objects.filter(user=alice).count() == 2


def test_signed_in_user_sees_own_recent_questions_only(client, agents, alice, bob):
    client.force_login(alice)
    client.get("/topics/agents/ask/", {"q": "tree search?"})
    client.get("/papers/2606.00002/ask/", {"q": "what credit?"})
    client.force_login(bob)
    client.get("/topics/agents/ask/", {"q": "bob's question"})
    client.force_login(alice)

    html = client.get("/topics/agents/ask/").content.decode()

    assert "Your recent questions" in html
    assert "tree search?" in html
    assert "what credit?" in html
    assert "bob&#x27;s question" not in html
    assert list(Question.objects.filter(user=alice).values_list("text", flat=True)) == [
        "what credit?",
        "tree search?",
    ]


def test_askpdf_page_answers_from_the_paper(client, paper):
    response = client.get(
        f"/papers/{paper.arxiv_id}/ask/", {"q": "How are rollouts planned?"}
    )

    assert response.status_code == 200
    html = response.content.decode()
    assert "AskPDF: Tree search agent" in html
    assert "plan rollouts" in html
    assert "[1]" in html


def test_askpdf_without_a_pdf_folder_says_it_reads_the_abstract(
    client, paper, settings
):
    """Titled AskPDF, the page never said that no PDF is read on this site."""
    settings.MOMENTUM_ASK_PDF_DIR = ""

    html = client.get(
        f"/papers/{paper.arxiv_id}/ask/", {"q": "How are rollouts planned?"}
    ).content.decode()

    assert 'data-fulltext="off"' in html
    assert "this answer comes from the abstract" in html


def test_askpdf_works_for_old_style_ids(client, db):

    upsert_records(
        [
            paper_record(
                "math/0601001",
                version=2,
                title="Old style",
                abstract="Sums of squares are studied.",
            )
        ]
    )

    response = client.get("/papers/math/0601001v2/ask/", {"q": "squares"})

    assert response.status_code == 200
    assert b"Sums of squares are studied." in response.content


def test_rate_limit_allows_the_rate_then_refuses(client, agents, settings):
    settings.MOMENTUM_ASK_RATE = "30/hour"
    # Each another question: one asked again is shown as answered, not counted.
    for n in range(30):
        assert client.get("/topics/agents/ask/", {"q": f"tree {n}"}).status_code == 200

    response = client.get("/topics/agents/ask/", {"q": "tree 30"})

    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    assert b"try again in about" in response.content
    # The form alone is never limited.
    assert client.get("/topics/agents/ask/").status_code == 200


def test_rate_limit_is_per_user(client, agents, alice, bob, settings):
    settings.MOMENTUM_ASK_RATE = "1/hour"
    client.force_login(alice)
    client.get("/topics/agents/ask/", {"q": "tree"})
    assert client.get("/topics/agents/ask/", {"q": "rollouts"}).status_code == 429
    client.force_login(bob)
    assert client.get("/topics/agents/ask/", {"q": "rollouts"}).status_code == 200


@pytest.fixture
def behind_a_proxy(settings):
    """The site behind one proxy, which appends the address it saw."""
    settings.MOMENTUM_TRUSTED_PROXIES = 1
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    settings.MOMENTUM_ASK_RATE = "1/hour"


def ask_from(client, forwarded: str, question: str) -> int:
    return client.get(
        "/topics/agents/ask/",
        {"q": question},
        REMOTE_ADDR="10.0.0.1",  # the proxy
        HTTP_X_FORWARDED_FOR=forwarded,
    ).status_code


@pytest.mark.usefixtures("behind_a_proxy")
def test_visitors_behind_the_proxy_each_have_their_own_budget(client, agents):
    assert ask_from(client, "198.51.100.7", "tree") == 200
    assert ask_from(client, "203.0.113.9", "rollouts") == 200
    assert ask_from(client, "198.51.100.7", "tools") == 429


@pytest.mark.usefixtures("behind_a_proxy")
def test_a_visitor_cannot_choose_their_address_with_their_own_header(client, agents):
    # The proxy appends what it saw to what the visitor sent: the right-most
    # entry counts, whatever is written before it.
    assert ask_from(client, "1.1.1.1, 198.51.100.7", "tree") == 200
    assert ask_from(client, "2.2.2.2, 198.51.100.7", "rollouts") == 429


def test_pages_link_to_ask(client, paper):
    topic_page = client.get("/topics/agents/").content.decode()
    paper_page = client.get(f"/papers/{paper.arxiv_id}/").content.decode()

    assert 'href="/topics/agents/ask/">Ask about this topic' in topic_page
    assert f'href="/papers/{paper.arxiv_id}/ask/">AskPDF' in paper_page


def test_ask_page_has_no_inline_script_or_style(client, agents, chat):
    response = client.get("/topics/agents/ask/", {"q": "tree search", "stream": "1"})

    html = response.content.decode()
    assert "script-src 'self'" in response["Content-Security-Policy"]
    assert "<script>" not in html
    assert "style=" not in html
    assert '<script src="/static/js/ask.js" defer></script>' in html


# STREAMING
# ------------------------------------------------------------------------------


def stream_of(response) -> list[tuple[str, dict]]:
    body = b"".join(response.streaming_content).decode()
    return [
        (block.split("\n")[0][7:], json.loads(block.split("\n")[1][6:]))
        for block in body.strip().split("\n\n")
    ]


def test_with_a_provider_the_page_leaves_the_answer_to_the_stream(
    client, agents, chat, alice
):
    client.force_login(alice)
    page = client.get("/topics/agents/ask/", {"q": "tree search", "stream": "1"})
    html = page.content.decode()
    assert (
        'data-stream-url="/topics/agents/ask/stream/?q=tree+search&amp;token=' in html
    )
    assert chat.requests == []  # nothing asked yet: the stream asks
    url = html.split('data-stream-url="')[1].split('"')[0].replace("&amp;", "&")

    response = client.get(url)

    assert response["Content-Type"] == "text/event-stream"
    # A reader's answer as it is written: no cache, shared or the browser's, keeps it.
    assert response["Cache-Control"] == "private, no-store"
    assert stream_of(response)[0] == (
        "claim",
        {"text": "Tree search plans rollouts.", "citations": [1]},
    )
    [asked] = Question.objects.filter(user=alice)  # counted once
    # "Try again" after a stream broke off streams on the same ticket, and
    # does not count the question again.
    client.get(url)
    client.get(url)
    assert Question.objects.get(user=alice).created_at == asked.created_at
    # Past its uses the ticket is spent: the stream counts as asked again
    # (listed once: the same question, moved up).
    client.get(url)
    [again] = Question.objects.filter(user=alice)
    assert again.created_at > asked.created_at


def test_tries_again_on_a_ticket_do_not_count_against_the_limit(
    client, paper, chat, settings
):
    settings.MOMENTUM_ASK_RATE = "1/hour"
    page = client.get(
        f"/papers/{paper.arxiv_id}/ask/", {"q": "tree search", "stream": "1"}
    )
    url = page.content.decode().split('data-stream-url="')[1].split('"')[0]
    url = url.replace("&amp;", "&")

    statuses = [client.get(url).status_code for _ in range(4)]

    # The page counted the one question allowed; three streams ride on its
    # ticket, the fourth is a question of its own.
    assert statuses == [200, 200, 200, 429]


def test_each_event_leaves_as_it_is_written_to_a_browser_that_reads_gzip(
    client, agents, chat
):
    """Compressed, the events were held in gzip's buffer until the answer
    ended (core.compression): the reader saw nothing, then all of it."""
    page = client.get("/topics/agents/ask/", {"q": "tree search", "stream": "1"})
    url = page.text.split('data-stream-url="')[1].split('"')[0].replace("&amp;", "&")

    response = client.get(url, HTTP_ACCEPT_ENCODING="gzip, deflate, br")

    assert "Content-Encoding" not in response
    assert next(iter(response.streaming_content)).startswith(b"event: ")


def test_without_javascript_the_page_fetches_the_provider_answer(client, agents, chat):
    chat.answer = "Rollouts are planned with tree search [1]."

    html = client.get("/topics/agents/ask/", {"q": "tree search"}).content.decode()

    assert "Rollouts are planned with tree search." in html
    assert "Written by a language model" in html


def test_the_answer_without_the_model_does_not_ask_it(client, agents, chat):
    """The link a broken stream offers (ask.js): it asked the model again, and
    waited for it as long as the stream had."""
    question = {"q": "tree search rollouts", "offline": "1"}

    html = client.get("/topics/agents/ask/", question).content.decode()
    streamed = client.get("/topics/agents/ask/", {**question, "stream": "1"})

    assert chat.requests == []
    assert "own sentences; each is followed by the paper it comes from" in html
    assert "Monte Carlo tree search" in html
    assert "data-stream-url" not in streamed.content.decode()


def test_provider_failure_on_the_page_shows_message_and_offline_answer(
    client, agents, chat
):
    chat.status = 500

    html = client.get(
        "/topics/agents/ask/", {"q": "tree search rollouts"}
    ).content.decode()

    assert "The language model could not answer: it failed (HTTP 500)." in html
    assert "model overloaded" not in html
    assert "Monte Carlo tree search" in html


def test_stream_refuses_bad_questions_and_unknown_scopes(client, agents):
    assert client.get("/topics/agents/ask/stream/").status_code == 400
    assert client.get("/topics/agents/ask/stream/", {"q": "x" * 501}).status_code == 400
    assert client.get("/topics/nope/ask/stream/", {"q": "x"}).status_code == 404


def test_stream_without_ticket_counts_against_the_limit(client, paper, chat, settings):
    settings.MOMENTUM_ASK_RATE = "1/hour"
    url = f"/papers/{paper.arxiv_id}/ask/stream/"
    assert client.get(url, {"q": "tree search"}).status_code == 200
    assert client.get(url, {"q": "tree search", "token": "forged"}).status_code == 429


# API
# ------------------------------------------------------------------------------


def test_api_answers_a_topic_question(anonymous, agents):
    response = anonymous.get(
        "/api/v1/topics/agents/ask/", {"q": "tree search for rollouts", "weeks": 4}
    )

    assert response.status_code == 200
    body = response.json()
    assert body["answerer"] == "extractive"
    assert body["claims"][0]["citations"] == [1]
    assert body["sources"][0]["arxiv_id"] == "2606.00001"
    assert body["sources"][0]["url"] == "http://testserver/papers/2606.00001/"
    assert "2606.00005" not in {s["arxiv_id"] for s in body["sources"]}


def test_api_and_page_give_the_lead_and_the_papers_also_relevant(
    anonymous, client, agents
):
    question = {"q": "Which agents plan rollouts with tree search or call tools?"}

    body = anonymous.get("/api/v1/topics/agents/ask/", question).json()
    html = client.get("/topics/agents/ask/", question).content.decode()

    cited = [s["number"] for s in body["cited"]]
    also = [s["number"] for s in body["also_relevant"]]
    assert cited == list(range(1, len(cited) + 1))  # reading order
    assert also == list(range(len(cited) + 1, len(body["sources"]) + 1))
    assert body["lead"].startswith(("Two lines of work:", "Three lines of work:"))
    assert body["text"].startswith(body["lead"])
    assert "lines of work:" in html
    assert also  # the email agent matches "agents" only: retrieved, not quoted
    assert "Also relevant" in html


def test_api_answers_a_paper_question(anonymous, paper):
    response = anonymous.get(
        f"/api/v1/papers/{paper.arxiv_id}v1/ask/", {"q": "rollouts"}
    )

    assert response.status_code == 200
    assert response.json()["sources"][0]["label"] == "Abstract"


def test_api_notice_gives_no_provider_words(anonymous, agents, chat):
    chat.status = 429
    chat.error = "Rate limit reached in organization org-Xq1234567890"

    body = anonymous.get("/api/v1/topics/agents/ask/", {"q": "tree search"}).json()

    assert body["answerer"] == "extractive"
    assert body["notice"].startswith(
        "The language model could not answer: it is busy (HTTP 429)."
    )
    assert "org-" not in body["notice"]


def test_a_question_in_german_or_spanish_is_told_to_ask_in_english(
    anonymous, agents, chat
):
    """German "die" matched the English word: a forecasting sentence about
    the roll of a die was quoted, confidently, with no notice."""
    record = paper_record(
        "2606.00009",
        title="Forecasting agent",
        abstract="Our agent forecasts the roll of a die from past rolls.",
    )
    tag_papers(upsert_records([record]).changed_ids)
    api = "/api/v1/topics/agents/ask/"

    for question, language in [
        ("Wie wird die Belohnung bei Agenten verteilt?", "German"),
        ("¿Cómo se asigna el crédito en agentes de varios pasos?", "Spanish"),
        ("Was ist Monte Carlo tree search?", "German"),
    ]:
        body = anonymous.get(api, {"q": question}).json()

        assert body["answerer"] == "extractive", question
        assert body["notice"] == (
            "Questions are matched against the papers' English text: this one "
            f"seems to be in {language}. Ask it in English."
        )
        assert "roll of a die" not in body["text"]
    # Its English words are still quoted from, and no model is asked.
    assert "Monte Carlo tree search" in body["text"]
    assert not chat.requests
    page = anonymous.get("/topics/agents/ask/", {"q": "Was ist tree search?"})
    assert b"this one seems to be in German" in page.content
    # Nothing matched, but other words are not what the notice asks for.
    german = anonymous.get("/topics/agents/ask/", {"q": "Wie wird die Belohnung?"})
    assert b"seems to be in German" in german.content
    assert b"Try other words" not in german.content

    for question in [
        "Do agents roll a die?",
        'What does "Die Welt als Wille und Vorstellung" say about tree search?',
    ]:
        body = anonymous.get(api, {"q": question}).json()

        assert body["notice"] == "", question
        assert body["answerer"] == "chat"


def test_an_abstracts_own_reference_numbers_are_not_quoted_as_citations(
    anonymous, client, agents
):
    """ "Ettin encoders [1]" read as citing source [1] of the answer, on the
    page, in the stream and in the API: it is the abstract's own reference."""
    record = paper_record(
        "2606.00009",
        title="Encoder agent",
        abstract="Our agents build on the Ettin encoders [12, 13] with 17M "
        "parameters. As shown in [4], Ettin encoders are fast.",
    )
    tag_papers(upsert_records([record]).changed_ids)
    question = {"q": "Ettin encoders"}
    quoted = "Our agents build on the Ettin encoders with 17M parameters."
    left_out = "own sentences, without their own reference numbers such as [12];"

    body = anonymous.get("/api/v1/topics/agents/ask/", question).json()
    page = client.get("/topics/agents/ask/", question).content.decode()
    events = dict(stream_of(client.get("/topics/agents/ask/stream/", question)))

    assert body["claims"] == [{"text": quoted, "citations": [1]}]
    assert body["text"] == f"{quoted} [1]"
    assert quoted in page
    assert left_out in page
    assert events["fallback"]["claims"] == body["claims"]
    assert left_out in events["done"]["attribution"]
    assert left_out in body["attribution"]
    plain = anonymous.get("/api/v1/topics/agents/ask/", {"q": "tree search"})
    assert "[12" not in plain.json()["text"]
    assert "without their own reference" not in plain.json()["attribution"]
    assert (
        "without their own reference"
        not in client.get("/topics/agents/ask/", {"q": "tree search"}).content.decode()
    )


def test_api_records_a_signed_in_users_question(as_alice, agents, alice):
    as_alice.get("/api/v1/topics/agents/ask/", {"q": "tree"})

    assert Question.objects.get(user=alice).topic == agents


def test_api_errors_share_the_error_shape(anonymous, agents, settings):
    missing = anonymous.get("/api/v1/topics/agents/ask/")
    assert missing.status_code == 400
    assert missing.json()["error"]["fields"]["q"][0]["code"] == "required"

    unknown = anonymous.get("/api/v1/topics/agents/ask/", {"q": "x", "colour": "red"})
    assert unknown.json()["error"]["fields"]["colour"][0]["code"] == "unknown_parameter"

    assert (
        anonymous.get("/api/v1/topics/nope/ask/", {"q": "x"}).json()["error"]["code"]
        == "not_found"
    )

    settings.MOMENTUM_ASK_RATE = "1/hour"
    anonymous.get("/api/v1/topics/agents/ask/", {"q": "x"})
    throttled = anonymous.get("/api/v1/topics/agents/ask/", {"q": "x"})
    assert throttled.status_code == 429
    assert throttled.json()["error"]["code"] == "throttled"
    assert int(throttled["Retry-After"]) > 0


def test_pages_and_api_share_the_budget(anonymous, client, agents, settings):
    settings.MOMENTUM_ASK_RATE = "1/hour"
    client.get("/topics/agents/ask/", {"q": "tree"})

    assert anonymous.get("/api/v1/topics/agents/ask/", {"q": "tree"}).status_code == 429


def test_a_reopened_window_stays_chosen_in_the_form(client, agents, alice):
    """The recent question's link gives dates; the form shows them chosen and
    carries them, so that asking again from it asks of the same papers."""
    client.force_login(alice)
    asked = client.get("/topics/agents/ask/", {"q": "tree search?", "weeks": "4"})
    since, until = asked.context["scope"].since, asked.context["scope"].until
    dates = {"since": since.isoformat(), "until": until.isoformat()}

    reopened = client.get("/topics/agents/ask/", {"q": "tree search?", **dates})
    again = client.get(
        "/topics/agents/ask/", {"q": "tree search?", "weeks": "dates", **dates}
    )
    # Dates of a window long past, carried along with another choice.
    old = {"since": "2026-01-05", "until": "2026-02-01"}
    any_time = client.get("/topics/agents/ask/", {"q": "tree", "weeks": "", **old})
    twelve = client.get("/topics/agents/ask/", {"q": "tree", "weeks": "12", **old})

    label = (
        f"{since:%b} {since.day}, {since.year} to {until:%b} {until.day}, {until.year}"
    )
    assert f'<option value="dates" selected>{label}</option>' in reopened.text
    assert f'<input type="hidden" name="since" value="{since}"' in reopened.text
    assert f'<input type="hidden" name="until" value="{until}"' in reopened.text
    assert (again.context["scope"].since, again.context["scope"].until) == (
        since,
        until,
    )
    # Another choice is that window, not the dates carried along.
    assert any_time.context["scope"].since is None
    assert any_time.context["scope"].until is None
    assert twelve.context["scope"].until == until
    assert (until - twelve.context["scope"].since).days == 12 * 7 - 1
    assert '<option value="" selected>Any time</option>' in any_time.text


def test_a_window_open_at_one_end_is_a_choice_too(client, agents):
    response = client.get("/topics/agents/ask/", {"q": "tree", "since": "2026-06-01"})
    up_to = client.get("/topics/agents/ask/", {"q": "tree", "until": "2026-06-30"})

    assert '<option value="dates" selected>Jun 1, 2026 onward</option>' in response.text
    assert '<option value="dates" selected>Up to Jun 30, 2026</option>' in up_to.text


def test_back_or_a_reload_shows_the_answer_given_not_another(
    client, agents, chat, alice, settings
):
    """Back from a cited paper reloaded the page (a signed-in page is kept by
    no browser): the model was asked again, its numbers could cite other
    papers than the one just read, and the question counted again."""
    settings.MOMENTUM_ASK_RATE = "1/hour"
    client.force_login(alice)
    chat.answer = "Rollouts are planned with tree search [1]."
    question = {"q": "tree search rollouts"}

    first = client.get("/topics/agents/ask/", question)
    chat.answer = "Tools are called through an API [1]."  # what asking again gives
    back = client.get("/topics/agents/ask/", question)
    other = client.get("/topics/agents/ask/", {"q": "tool selection"})

    assert len(chat.requests) == 1
    assert "Rollouts are planned with tree search." in back.text
    assert back.context["sources"] == first.context["sources"]
    assert back.status_code == 200  # not counted: the one question allowed
    assert other.status_code == 429  # a new question is
    assert Question.objects.filter(user=alice).count() == 1


def test_a_kept_answer_is_not_shown_once_the_topics_papers_changed(
    client, agents, chat, django_capture_on_commit_callbacks
):
    """A paper tagged into the topic meanwhile is among what the question is
    asked of: the answer kept from before it could not cite it."""
    question = {"q": "tree search rollouts"}
    client.get("/topics/agents/ask/", question)
    record = paper_record(
        "2606.00009",
        title="Planner agent",
        abstract="Tree search plans rollouts for a planner agent.",
        published=datetime(2026, 6, 19, 15, 0, tzinfo=UTC),
    )
    with django_capture_on_commit_callbacks(execute=True):
        # As an ingest run stores, tags and tells pages (papers.ingest.runs).
        changed = upsert_records([record]).changed_ids
        tag_papers(changed)
        content_changed(papers=changed)

    again = client.get("/topics/agents/ask/", question)

    assert len(chat.requests) == 2
    assert "2606.00009" in [s.paper.arxiv_id for s in again.context["sources"]]


def test_a_kept_answer_of_a_paper_is_not_shown_once_the_paper_changed(
    client, paper, chat, django_capture_on_commit_callbacks
):
    """A new version of the paper (its abstract changed) is what the question
    is asked of now."""
    address = f"/papers/{paper.arxiv_id}/ask/"
    question = {"q": "How are rollouts planned?"}
    client.get(address, question)
    with django_capture_on_commit_callbacks(execute=True):
        content_changed(papers=[paper.pk])

    client.get(address, question)

    assert len(chat.requests) == 2


def test_a_kept_answer_is_its_askers_alone(client, agents, chat, alice, bob, settings):
    """Another reader's same question is asked and counted for them: Alice's
    answer would tell Bob what was asked, and pass his limit."""
    settings.MOMENTUM_ASK_RATE = "1/hour"
    client.force_login(bob)
    client.get("/topics/agents/ask/", {"q": "tool selection"})  # Bob's one
    client.force_login(alice)
    client.get("/topics/agents/ask/", {"q": "tree search rollouts"})
    client.force_login(bob)

    response = client.get("/topics/agents/ask/", {"q": "tree search rollouts"})

    assert response.status_code == 429
    assert len(chat.requests) == 2


def test_a_streamed_answer_is_shown_whole_on_a_reload(client, agents, chat):
    question = {"q": "tree search", "stream": "1"}
    page = client.get("/topics/agents/ask/", question).content.decode()
    url = page.split('data-stream-url="')[1].split('"')[0].replace("&amp;", "&")
    stream_of(client.get(url))

    again = client.get("/topics/agents/ask/", question).content.decode()

    assert len(chat.requests) == 1
    assert "data-stream-url" not in again
    assert "Tree search plans rollouts." in again
    assert "Written by a language model" in again


def test_an_answer_in_place_of_a_failed_model_is_not_kept(client, agents, chat):
    """Asking again may get the model's: a reload asks it."""
    chat.status = 500
    client.get("/topics/agents/ask/", {"q": "tree search rollouts"})
    chat.status = 200

    again = client.get("/topics/agents/ask/", {"q": "tree search rollouts"})

    assert len(chat.requests) == 2
    assert "Tree search plans rollouts." in again.text


def test_an_answer_from_the_abstract_is_not_shown_once_the_full_text_is_in(
    client, paper, settings, tmp_path
):
    """The page says to ask again in a minute for the full text's answer."""
    settings.MOMENTUM_ASK_PDF_DIR = str(tmp_path)
    settings.CELERY_TASK_ALWAYS_EAGER = False  # the fetch is queued, not run
    question = {"q": "What does the ablation show about the value head?"}
    address = f"/papers/{paper.arxiv_id}/ask/"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("topics.tasks.fetch_paper_pdf.delay", lambda arxiv_id: None)
        first = client.get(address, question)
    (tmp_path / f"{paper.arxiv_id}.pdf").write_bytes(tiny_pdf(PAGES))

    again = client.get(address, question)

    assert [s.label for s in first.context["sources"]] == ["Abstract"]
    assert "Page 2" in [s.label for s in again.context["sources"]]


def test_asking_about_a_large_collaborations_paper_names_a_few_and_counts(client, db):
    # The header cut the author line at 200 characters, mid-name, no count.
    upsert_records(collaboration(1, 300))

    response = client.get("/papers/2606.00001/ask/")

    # The count says what it counts and links to them all, with no tooltip.
    assert "Member 10, Member 11 +288 more" in visible_text(response.text)
    assert '<a class="more" href="/papers/2606.00001/#authors">' in response.text
    assert "Member 12" not in response.text


def test_a_retrieved_paper_shows_its_abstract_not_what_the_answerer_reads(
    client, paper, settings, tmp_path
):
    # The snippet under [1] began "Title: Tree search agent. Authors: …
    # First announced: …", the facts given to the answerer.
    settings.MOMENTUM_ASK_PDF_DIR = str(tmp_path)  # no PDF: the abstract alone
    asked_paper = client.get(f"/papers/{paper.arxiv_id}/ask/", {"q": "rollouts"})
    asked_topic = client.get("/topics/agents/ask/", {"q": "rollouts"})

    snippet = '<p class="snippet">We use Monte Carlo tree search to plan rollouts'
    assert snippet in asked_paper.text
    assert "Title: " not in asked_paper.text
    assert snippet in asked_topic.text


def test_a_retrieved_paper_without_an_abstract_says_so(
    client, paper, settings, tmp_path
):
    # arXiv has a few papers with an empty abstract: the list showed an empty
    # snippet under the title, under "Abstract" for the paper itself.
    settings.MOMENTUM_ASK_PDF_DIR = str(tmp_path)  # no PDF: the abstract alone
    Paper.objects.filter(pk=paper.pk).update(abstract="")
    asked_paper = client.get(f"/papers/{paper.arxiv_id}/ask/", {"q": "tree search"})
    asked_topic = client.get("/topics/agents/ask/", {"q": "tree search"})

    for response in (asked_paper, asked_topic):
        retrieved = response.text.split('id="retrieved-heading"')[1]
        (item,) = [i for i in retrieved.split("</li>") if "Tree search agent" in i]
        assert '<p class="snippet">' not in item
        assert '<p class="meta">No abstract on arXiv.</p>' in item
    # A paper with one still shows it.
    assert '<p class="snippet">An early agent that plans rollouts' in asked_topic.text
