"""Papers: the list's filters and cursor pages at their edges, the detail, caching."""

from __future__ import annotations

import time
from collections import Counter
from datetime import date
from pathlib import Path
from string import Template

import pytest
from django.core.cache import cache
from django.db.models.signals import post_init
from django.utils.http import http_date
from django.utils.http import parse_http_date

from core.api import caching
from papers.ingest.upsert import upsert_records
from papers.library import set_saved
from papers.models import Affiliation
from papers.models import Author
from papers.models import Authorship
from papers.models import Paper
from papers.models import SavedPaper
from papers.pagination import encode_cursor
from tests.api.conftest import assert_error
from tests.papers.factories import collaboration
from tests.papers.factories import paper_record
from topics.curation import pin_paper

pytestmark = pytest.mark.django_db

LIST = "/api/v1/papers/"


def ids(response) -> list[str]:
    assert response.status_code == 200, response.content
    return [paper["arxiv_id"] for paper in response.json()["results"]]


def walk(client, url: str) -> list[str]:
    """Every arXiv id of every page, following `next`."""
    seen: list[str] = []
    while url:
        response = client.get(url)
        seen += ids(response)
        url = response.json()["next"]
    return seen


def newest_first() -> list[str]:
    return list(
        Paper.objects.order_by("-first_announced", "-id").values_list(
            "arxiv_id", flat=True
        )
    )


def test_lists_papers_newest_first_with_listing_data(anonymous, corpus):
    response = anonymous.get(LIST)

    assert ids(response) == newest_first()
    paper = next(p for p in response.json()["results"] if p["arxiv_id"] == "2606.00100")
    assert paper["authors"] == ["Ada Lovelace", "Alan Turing"]
    assert paper["primary_category"] == "cs.LG"
    assert paper["categories"] == ["cs.AI", "cs.LG"]
    assert [t["slug"] for t in paper["topics"]] == [
        "rl-for-llm-agents",
        "robot-learning",
    ]
    assert paper["links"]["api"] == "http://testserver/api/v1/papers/2606.00100/"
    assert paper["links"]["pdf"] == "https://arxiv.org/pdf/2606.00100v1"
    assert response.json()["next"] is None


@pytest.mark.parametrize("size", [1, 2, 3, 9, 100])
def test_cursor_pages_cover_every_paper_once_in_order(anonymous, corpus, size):
    assert walk(anonymous, f"{LIST}?page_size={size}") == newest_first()


def test_last_page_has_no_next_and_a_full_last_page_too(anonymous, corpus):
    total = Paper.objects.count()
    response = anonymous.get(f"{LIST}?page_size={total}")
    assert len(ids(response)) == total
    assert response.json()["next"] is None

    first = anonymous.get(f"{LIST}?page_size={total - 1}").json()
    last = anonymous.get(first["next"])
    assert len(ids(last)) == 1
    assert last.json()["next"] is None


def test_an_empty_list_is_one_empty_page(anonymous, db):
    response = anonymous.get(LIST)
    assert response.json() == {"next": None, "results": []}


def test_a_cursor_after_the_last_paper_gives_an_empty_page(anonymous, corpus):
    oldest = Paper.objects.order_by("first_announced", "id").first()
    response = anonymous.get(LIST, {"cursor": encode_cursor(oldest)})
    assert response.json() == {"next": None, "results": []}


def test_pages_stay_stable_when_papers_arrive(anonymous, corpus):
    first = anonymous.get(f"{LIST}?page_size=3").json()
    upsert_records([paper_record("2606.09999", title="Brand new")])
    rest = walk(anonymous, first["next"])
    assert [p["arxiv_id"] for p in first["results"]] + rest == [
        i for i in newest_first() if i != "2606.09999"
    ]


def test_papers_without_announcement_day_come_first_and_page_through(anonymous, corpus):
    Paper.objects.filter(arxiv_id__in=["2606.00003", "2606.00005"]).update(
        first_announced=None
    )
    assert walk(anonymous, f"{LIST}?page_size=1")[:2] == ["2606.00005", "2606.00003"]
    assert walk(anonymous, f"{LIST}?page_size=2") == newest_first()


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"topic": "robot-learning"}, ["2606.00100"]),
        ({"category": "cs.AI", "topic": "robot-learning"}, ["2606.00100"]),
        ({"q": "robot"}, ["2606.00100"]),
        ({"q": "nothing-matches-this"}, []),
        ({"q": ""}, None),
        # An id, in any form the site's search takes, lists that paper, as the
        # site's search opens it.
        ({"q": "2606.00100"}, ["2606.00100"]),
        ({"q": "arXiv:2606.00100v2"}, ["2606.00100"]),
        ({"q": "https://arxiv.org/abs/2606.00100"}, ["2606.00100"]),
        ({"q": "2606.00100", "topic": "rl-for-llm-agents"}, ["2606.00100"]),
        ({"q": "2606.00002", "category": "cs.LG"}, []),
    ],
)
def test_filters(anonymous, corpus, params, expected):
    got = ids(anonymous.get(LIST, params))
    assert got == (newest_first() if expected is None else expected)


@pytest.mark.parametrize("slug", ["no-such-topic", "robot-learning"])
def test_a_topic_filter_naming_no_active_topic_is_a_404(anonymous, corpus, slug):
    corpus["robots"].is_active = False
    corpus["robots"].save()

    error = assert_error(anonymous.get(LIST, {"topic": slug}), 404, "not_found")

    assert error["fields"]["topic"][0]["code"] == "does_not_exist"
    # As the topic's own endpoints answer.
    assert_error(anonymous.get(f"/api/v1/topics/{slug}/"), 404, "not_found")
    assert_error(anonymous.get(f"/api/v1/topics/{slug}/papers/"), 404, "not_found")


def test_a_topic_deactivated_after_a_read_is_a_404_on_the_next(
    anonymous, corpus, django_capture_on_commit_callbacks
):
    url = LIST + "?topic=robot-learning"
    assert ids(anonymous.get(url)) == ["2606.00100"]

    # The cached page goes stale with the content version, after commit.
    with django_capture_on_commit_callbacks(execute=True):
        corpus["robots"].is_active = False
        corpus["robots"].save()

    assert_error(anonymous.get(url), 404, "not_found")


def test_category_filter_is_case_sensitive_as_arxiv_writes_it(anonymous, corpus):
    assert "2606.00100" in ids(anonymous.get(LIST, {"category": "cs.LG"}))
    error = assert_error(anonymous.get(LIST, {"category": "CS.lg"}), 404, "not_found")
    assert error["fields"]["category"][0]["code"] == "does_not_exist"


@pytest.mark.parametrize("code", ["cs.ZZ", "xx.YY", "astro-ph"])
def test_a_category_no_paper_has_is_a_404_not_an_empty_list(anonymous, corpus, code):
    error = assert_error(anonymous.get(LIST, {"category": code}), 404, "not_found")

    [problem] = error["fields"]["category"]
    assert problem == {
        "code": "does_not_exist",
        "message": f"No paper held has the category “{code}” (arXiv writes them "
        "like cs.LG).",
    }


def test_category_filter_matches_any_category_of_a_paper(anonymous, corpus):
    got = set(ids(anonymous.get(LIST, {"category": "cs.LG", "page_size": 100})))
    expected = set(
        Paper.objects.filter(categories__code="cs.LG").values_list(
            "arxiv_id", flat=True
        )
    )
    assert got == expected
    assert "2606.00002" not in got


def test_announced_range_is_inclusive(anonymous, corpus):
    day = Paper.objects.get(arxiv_id="2606.00001").first_announced
    expected = set(
        Paper.objects.filter(first_announced=day).values_list("arxiv_id", flat=True)
    )
    params = {"announced_from": day.isoformat(), "announced_to": day.isoformat()}
    assert set(ids(anonymous.get(LIST, params))) == expected
    assert len(expected) >= 2


def test_saved_filter_is_the_callers_own(as_alice, as_bob, alice, corpus):
    set_saved(alice, Paper.objects.get(arxiv_id="2606.00002"), True)

    assert ids(as_alice.get(LIST, {"saved": "true"})) == ["2606.00002"]
    assert "2606.00002" not in ids(as_alice.get(LIST, {"saved": "false"}))
    assert ids(as_bob.get(LIST, {"saved": "true"})) == []


def test_saved_filter_needs_authentication(anonymous, corpus):
    assert_error(anonymous.get(LIST, {"saved": "true"}), 401, "not_authenticated")


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"page_size": "0"}, "page_size"),
        ({"page_size": "101"}, "page_size"),
        ({"page_size": "1000000000000000000000"}, "page_size"),
        ({"page_size": "ten"}, "page_size"),
        ({"page_size": "5.0"}, "page_size"),
        ({"page_size": " 5"}, "page_size"),
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"cursor": "MjAyNi0xMy0wMXwx"}, "cursor"),  # the old, base64 form
        ({"cursor": "739821.5\n"}, "cursor"),
        ({"cursor": "1234567.5"}, "cursor"),
        ({"announced_from": "yesterday"}, "announced_from"),
        ({"announced_from": "20260601"}, "announced_from"),
        ({"announced_from": "2026-02-30"}, "announced_from"),
        ({"announced_from": "2026-06-01 "}, "announced_from"),
        (
            {"announced_from": "2026-06-05", "announced_to": "2026-06-01"},
            "announced_to",
        ),
        ({"category": "cs.LG; drop table"}, "category"),
        ({"category": "cs.LG\n"}, "category"),
        ({"topic": "not a slug"}, "topic"),
        ({"topic": "robot-learning "}, "topic"),
        ({"q": "x" * 201}, "q"),
        ({"q": "x" * 200 + " "}, "q"),
        ({"q": "nul\x00byte"}, "q"),
        ({"saved": "maybe"}, "saved"),
        ({"saved": "1"}, "saved"),
        ({"saved": "True"}, "saved"),
        ({"sort": "title"}, "sort"),
        ({"Topic": "agents"}, "Topic"),
    ],
)
def test_bad_parameters_are_refused_with_the_field(anonymous, corpus, params, field):
    error = assert_error(anonymous.get(LIST, params), 400, "invalid")
    assert field in error["fields"], error
    assert error["fields"][field][0]["message"]


@pytest.mark.parametrize(
    "day", ["0001-01-01", "2026-06-02", "2738-11-27", None], ids=str
)
def test_every_cursor_the_schema_allows_is_a_position(anonymous, corpus, day):
    ordinal = date.fromisoformat(day).toordinal() if day else 0
    for pk in (0, 999999999999999999):
        response = anonymous.get(LIST, {"cursor": f"{ordinal:06d}.{pk}"})
        assert response.status_code == 200, response.content


def test_blank_text_search_lists_everything(anonymous, corpus):
    assert ids(anonymous.get(LIST, {"q": "   "})) == newest_first()


@pytest.mark.parametrize("size", [1, 3, 100])
def test_a_text_search_lists_matches_newest_first_in_cursor_pages(
    anonymous, corpus, size
):
    found = walk(anonymous, f"{LIST}?q=agents+-robot&page_size={size}")

    # Every paper's abstract is about agents; one title names a robot.
    assert found == [i for i in newest_first() if i != "2606.00100"]


def test_a_text_search_page_neither_ranks_nor_counts(
    anonymous, corpus, django_assert_max_num_queries
):
    cache.clear()
    with django_assert_max_num_queries(6) as queries:
        response = anonymous.get(LIST, {"q": "agent", "page_size": 2})

    assert len(ids(response)) == 2
    sql = " ".join(query["sql"] for query in queries.captured_queries).lower()
    assert "count(" not in sql
    assert "ts_rank" not in sql
    assert "bm25" not in sql
    # One page and one more row, to know whether there is a next page.
    assert "limit 3" in sql


def test_unknown_parameter_has_its_own_code(anonymous, corpus):
    error = assert_error(anonymous.get(LIST, {"sort": "title"}), 400, "invalid")
    assert error["fields"]["sort"] == [
        {"code": "unknown_parameter", "message": "Unknown query parameter."}
    ]


def test_detail_by_id_with_or_without_version(anonymous, corpus):
    plain = anonymous.get("/api/v1/papers/2606.00100/")
    versioned = anonymous.get("/api/v1/papers/2606.00100v1/")
    old_style = anonymous.get("/api/v1/papers/math/0601001v2/")

    assert plain.status_code == versioned.status_code == 200
    assert plain.json() == versioned.json()
    assert old_style.json()["versioned_id"] == "math/0601001v2"
    paper = plain.json()
    assert [a["name"] for a in paper["authors"]] == ["Ada Lovelace", "Alan Turing"]
    assert paper["authors"][0]["affiliations"] == []
    assert paper["topics"] == [
        {
            "slug": "rl-for-llm-agents",
            "name": "RL for LLM Agents",
            "source": "rule",
            "matched_terms": paper["topics"][0]["matched_terms"],
            "score": None,
        },
        {
            "slug": "robot-learning",
            "name": "Robot Learning",
            "source": "rule",
            "matched_terms": paper["topics"][1]["matched_terms"],
            "score": None,
        },
    ]
    assert paper["topics"][0]["matched_terms"]
    assert paper["bibtex"].startswith("@misc{arxiv:2606.00100,")
    assert "Ada Lovelace and Alan Turing" in paper["bibtex"]


def test_detail_shows_a_pinned_topic_as_pinned(anonymous, corpus):
    pin_paper(corpus["robots"], Paper.objects.get(arxiv_id="2606.00001"))
    topics = anonymous.get("/api/v1/papers/2606.00001/").json()["topics"]
    assert {"slug": "robot-learning", "source": "pin"}.items() <= topics[1].items()


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/papers/2606.99999/",
        "/api/v1/papers/not-an-id/",
        "/api/v1/papers/2606.00100v/",
        "/api/v1/papers/%00/",
        "/api/v1/papers/2606.00100/extra/",
    ],
)
def test_unknown_or_malformed_ids_are_404s(anonymous, corpus, path):
    assert_error(anonymous.get(path), 404, "not_found")


def test_list_and_detail_answer_conditional_requests_without_queries(
    anonymous, corpus, django_assert_num_queries
):
    for url in (LIST + "?topic=rl-for-llm-agents", "/api/v1/papers/2606.00100/"):
        first = anonymous.get(url)
        assert first["ETag"]
        assert first["Last-Modified"]
        with django_assert_num_queries(0):
            again = anonymous.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
        assert again.status_code == 304
        assert again["ETag"] == first["ETag"]
        since = anonymous.get(url, HTTP_IF_MODIFIED_SINCE=first["Last-Modified"])
        assert since.status_code == 304


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/papers/2606.99999/",
        "/api/v1/papers/2606.99999/similar/",
        "/api/v1/topics/no-such-topic/",
        "/api/v1/topics/no-such-topic/papers/",
        LIST + "?topic=no-such-topic",
    ],
)
def test_validators_do_not_make_an_address_that_names_nothing_a_304(
    anonymous, corpus, url
):
    """A poller that sends the time of its last poll (or `*`) at a mistyped
    address is told that it names nothing, not that nothing changed there."""
    now = http_date(time.time())

    by_date = anonymous.get(url, HTTP_IF_MODIFIED_SINCE=now)
    by_any = anonymous.get(url, HTTP_IF_NONE_MATCH="*")

    assert by_date.status_code == by_any.status_code == 404
    assert_error(by_date, 404, "not_found")
    # `*` matches whatever is there: here, nothing (a 412, not a 200).
    assert_error(anonymous.get(url, HTTP_IF_MATCH="*"), 404, "not_found")


def test_a_304_needs_no_queries_once_the_body_was_built(
    anonymous, corpus, django_assert_num_queries
):
    """The body at this version was built, so the address names something: a
    client's date is answered from the cache, as its ETag is."""
    url = "/api/v1/papers/2606.00100/"
    first = anonymous.get(url)
    with django_assert_num_queries(0):
        later = anonymous.get(url, HTTP_IF_MODIFIED_SINCE=http_date(time.time()))
        any_body = anonymous.get(url, HTTP_IF_NONE_MATCH="*")
    assert later.status_code == any_body.status_code == 304
    assert later["ETag"] == first["ETag"]
    cache.clear()  # built bodies forgotten (evicted): built again, then a 304
    assert anonymous.get(url, HTTP_IF_NONE_MATCH="*").status_code == 304


def test_a_precondition_that_does_not_hold_is_a_412_the_schema_declares(
    anonymous, corpus
):
    response = anonymous.get(LIST, HTTP_IF_MATCH='"not-this-version"')
    schema = anonymous.get("/api/schema/", {"format": "json"}).json()

    assert_error(response, 412, "precondition_failed")
    assert "412" in schema["paths"]["/api/v1/papers/"]["get"]["responses"]


def test_a_new_release_answers_conditional_requests_anew(
    anonymous, corpus, monkeypatch
):
    """A deploy may change what a body shows: a client's validators from the
    last release get the new body, not a 304 (core.release)."""
    url = "/api/v1/papers/2606.00100/"
    first = anonymous.get(url)

    deployed = time.time_ns() + 5 * 10**9  # the next release, seconds later
    monkeypatch.setattr(caching, "RELEASE", "the-next-release")
    monkeypatch.setattr(caching, "release_first_seen", lambda: deployed)
    by_etag = anonymous.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
    by_date = anonymous.get(url, HTTP_IF_MODIFIED_SINCE=first["Last-Modified"])

    assert by_etag.status_code == 200
    assert by_etag["ETag"] != first["ETag"]
    assert by_date.status_code == 200
    assert by_date["Last-Modified"] == http_date(deployed // 10**9)
    again = anonymous.get(url, HTTP_IF_NONE_MATCH=by_etag["ETag"])
    assert again.status_code == 304


def test_repeated_reads_cost_no_queries_until_content_changes(
    anonymous, corpus, django_assert_num_queries, django_capture_on_commit_callbacks
):
    url = LIST + "?topic=robot-learning"
    first = anonymous.get(url)
    with django_assert_num_queries(0):
        assert anonymous.get(url).json() == first.json()

    # A curator pins a paper: the same function admin calls moves the version on.
    with django_capture_on_commit_callbacks(execute=True):
        pin_paper(corpus["robots"], Paper.objects.get(arxiv_id="2606.00001"))
    changed = anonymous.get(url, HTTP_IF_NONE_MATCH=first["ETag"])

    assert changed.status_code == 200
    assert changed["ETag"] != first["ETag"]
    assert "2606.00001" in ids(changed)


def test_ingesting_a_new_version_changes_the_detail(
    anonymous, corpus, django_capture_on_commit_callbacks
):
    from papers.ingest.runs import ingest_entries
    from papers.models import IngestRun

    url = "/api/v1/papers/2606.00100/"
    first = anonymous.get(url)
    run = IngestRun.objects.create(source="test")
    with django_capture_on_commit_callbacks(execute=True):
        ingest_entries(run, [paper_record("2606.00100", 2, title="Renamed agent")])
    changed = anonymous.get(url, HTTP_IF_NONE_MATCH=first["ETag"])

    assert changed.status_code == 200
    assert changed.json()["title"] == "Renamed agent"
    assert changed.json()["version"] == 2


@pytest.mark.parametrize("named", ["author", "affiliation"])
def test_a_name_corrected_in_admin_reaches_the_api_and_the_paper_page(
    admin_client, anonymous, client, corpus, django_capture_on_commit_callbacks, named
):
    url = "/api/v1/papers/2606.00001/"
    authorship = Paper.objects.get(arxiv_id="2606.00001").authorships.first()
    if named == "affiliation":
        authorship.affiliations.add(Affiliation.objects.create(name="Analytical Soc."))
    record = authorship.author if named == "author" else authorship.affiliations.get()
    first = anonymous.get(url)
    client.get("/papers/2606.00001/")  # in the page cache

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(
            f"/admin/papers/{named}/{record.pk}/change/", {"name": "Corrected Name"}
        )

    assert response.status_code == 302
    changed = anonymous.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
    assert changed.status_code == 200
    assert "Corrected Name" in changed.text
    assert "Corrected Name" in client.get("/papers/2606.00001/").text


def test_affiliations_deleted_from_the_admin_list_move_the_papers_versions(
    admin_client, anonymous, corpus, django_capture_on_commit_callbacks
):
    """Admin's "Delete selected" deletes a queryset, never calling delete()."""
    url = "/api/v1/papers/2606.00001/"
    authorship = Paper.objects.get(arxiv_id="2606.00001").authorships.first()
    affiliation = Affiliation.objects.create(name="Analytical Soc.")
    authorship.affiliations.add(affiliation)
    first = anonymous.get(url)

    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(
            "/admin/papers/affiliation/",
            {
                "action": "delete_selected",
                "_selected_action": [affiliation.pk],
                "post": "yes",
            },
        )

    assert not Affiliation.objects.exists()
    changed = anonymous.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
    assert changed.status_code == 200
    assert "Analytical Soc." not in changed.text


def test_saved_filter_etag_moves_when_the_caller_saves(as_alice, alice, corpus):
    url = LIST + "?saved=true"
    first = as_alice.get(url)
    assert first["Cache-Control"] == "private, no-cache"
    set_saved(alice, Paper.objects.get(arxiv_id="2606.00003"), True)
    changed = as_alice.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
    assert ids(changed) == ["2606.00003"]


def test_last_modified_never_goes_back_when_a_change_is_undone(
    as_alice, alice, corpus, monkeypatch
):
    """Unsaving the newest save brings the library's earlier fingerprint back:
    its first stamp, an earlier Last-Modified, answered the changed list with
    a 304 to a client that kept the date."""
    # Ten seconds a reading, after the content version and the release's.
    start = time.time_ns() + 10**12
    clock = iter(range(start, start + 10**15, 10 * 10**9))
    monkeypatch.setattr(caching.time, "time_ns", lambda: next(clock))
    url = LIST + "?saved=true"
    paper = Paper.objects.get(arxiv_id="2606.00003")
    as_alice.get(url)
    set_saved(alice, paper, True)
    saved = as_alice.get(url)
    set_saved(alice, paper, False)

    undone = as_alice.get(url, HTTP_IF_MODIFIED_SINCE=saved["Last-Modified"])

    assert undone.status_code == 200
    assert ids(undone) == []
    assert parse_http_date(undone["Last-Modified"]) > parse_http_date(
        saved["Last-Modified"]
    )


def test_list_costs_a_fixed_number_of_queries(
    anonymous, corpus, django_assert_num_queries
):
    # The page, its authors, tags and categories (a list shows no affiliations).
    cache.clear()
    with django_assert_num_queries(4):
        anonymous.get(LIST + "?page_size=100")
    upsert_records(
        [paper_record(f"2606.0{n}00", title=f"More {n}") for n in range(2, 9)]
    )
    cache.clear()
    with django_assert_num_queries(4):
        anonymous.get(LIST + "?page_size=100")


def test_a_date_written_right_that_is_no_day_says_so(anonymous, corpus):
    error = assert_error(
        anonymous.get(LIST, {"announced_from": "2026-02-30"}), 400, "invalid"
    )

    assert error["fields"]["announced_from"][0] == {
        "code": "no_such_day",
        "message": "2026-02-30 is written as a date, but there is no such day.",
    }


@pytest.mark.parametrize("name", ["category", "page_size"])
def test_a_parameter_given_twice_is_refused_not_half_read(anonymous, corpus, name):
    values = {"category": ["cs.MA", "cs.RO"], "page_size": ["101", "5"]}[name]

    error = assert_error(anonymous.get(LIST, {name: values}), 400, "invalid")

    assert error["fields"] == {
        name: [{"code": "repeated_parameter", "message": "Given more than once."}]
    }


def models_built(client, address: str) -> Counter[str]:
    """The authorships and authors built as models to answer this address."""
    built: Counter[str] = Counter()

    def count(sender, **kwargs):  # type: ignore[no-untyped-def]
        built[sender.__name__] += 1

    for model in (Authorship, Author):
        post_init.connect(count, sender=model, weak=False)
    try:
        assert client.get(address).status_code == 200
    finally:
        for model in (Authorship, Author):
            post_init.disconnect(count, sender=model)
    return built


def test_a_large_collaborations_papers_list_every_author_read_as_values(
    as_alice, alice, django_assert_max_num_queries
):
    """25 papers of 300 authors each (7,500 author places): every author, in
    order, with no Authorship or Author model built for any of them."""
    upsert_records(collaboration(25, 300))
    for paper in Paper.objects.all():
        SavedPaper.objects.create(user=alice, paper=paper)
    everyone = ["Spokesperson", "Deputy", *[f"Member {k}" for k in range(2, 300)]]
    cache.clear()

    # The caller's token, the page, its authors, tags and categories.
    with django_assert_max_num_queries(5):
        assert models_built(as_alice, f"{LIST}?page_size=25") == {}
    assert models_built(as_alice, "/api/v1/me/saved/?page_size=25") == {}

    listed = as_alice.get(f"{LIST}?page_size=25").json()["results"]
    saved = as_alice.get("/api/v1/me/saved/?page_size=25").json()["results"]
    assert len(listed) == len(saved) == 25
    assert all(paper["authors"] == everyone for paper in listed)
    assert all(entry["paper"]["authors"] == everyone for entry in saved)


def test_a_large_collaborations_detail_gives_every_author_with_affiliations(
    anonymous, db
):
    upsert_records(collaboration(1, 300))
    ids = dict(Author.objects.values_list("name", "pk"))

    assert models_built(anonymous, "/api/v1/papers/2606.00001/") == {}
    authors = anonymous.get("/api/v1/papers/2606.00001/").json()["authors"]

    assert len(authors) == 300
    assert authors[:3] == [
        {"id": ids["Spokesperson"], "name": "Spokesperson", "affiliations": []},
        # One author's affiliations by name, not as given.
        {
            "id": ids["Deputy"],
            "name": "Deputy",
            "affiliations": ["Alpha Lab", "Zeta Lab"],
        },
        {"id": ids["Member 2"], "name": "Member 2", "affiliations": ["Lab 2"]},
    ]
    assert authors[-1] == {
        "id": ids["Member 299"],
        "name": "Member 299",
        "affiliations": ["Lab 19"],
    }


# The detail's body as served, byte for byte; $ada and $alan for the authors'
# ids, which the database gives.
DETAIL = Path(__file__).parent.parent / "fixtures" / "api" / "paper_2606.00100.txt"


def test_the_detail_reads_its_tags_once(anonymous, corpus, django_assert_num_queries):
    """Its topics are the tags read with it (get_paper's active_tags), and its
    body is as it was when it read them again."""
    cache.clear()
    # The paper, its tags, its categories, its authors and their affiliations.
    with django_assert_num_queries(5) as queries:
        response = anonymous.get("/api/v1/papers/2606.00100/")

    tags = [
        sql for sql in queries.captured_queries if "topics_papertopic" in sql["sql"]
    ]
    assert len(tags) == 1
    ids = dict(Author.objects.values_list("name", "pk"))
    expected = Template(DETAIL.read_text().rstrip("\n")).substitute(
        ada=ids["Ada Lovelace"], alan=ids["Alan Turing"]
    )
    assert response.content.decode() == expected
