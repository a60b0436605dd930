"""Thumbs up and down: the one writer, the reader's signal (saves count as up),
the rate view with and without JavaScript, and the buttons in every shared page
showing each reader their own rating."""

from __future__ import annotations

import re
from datetime import timedelta
from urllib.parse import parse_qs
from urllib.parse import urlsplit

import pytest
from django.db.models import QuerySet
from django.utils import timezone

from papers.library import reader_signal
from papers.library import set_rating
from papers.library import set_saved
from papers.models import Paper
from papers.models import Rating
from tests.clients import signed_in
from topics.models import Follow

pytestmark = pytest.mark.django_db

PAPER = "/papers/2606.00001/"
RATE = PAPER + "rate/"
TOPIC = "/topics/rl-for-llm-agents/"
# A page rendered anew, as tests/test_pages.py allows it.
MAX_PAGE_QUERIES = 12


def get(arxiv_id: str) -> Paper:
    return Paper.objects.get(arxiv_id=arxiv_id)


def ratings(html: str) -> dict[str, str]:
    """{arXiv id: "up" | "down"} of the pressed thumbs in a page."""
    pressed = {}
    for form in re.findall(r'<form [^>]*class="rating[^"]*".*?</form>', html, re.S):
        arxiv_id = re.search(r'action="/papers/([^"]+)/rate/"', form).group(1)
        for kind in re.findall(
            r'data-rating="(up|down)"[^>]*aria-pressed="true"', form
        ):
            pressed[arxiv_id] = kind
    return pressed


def rating_forms(html: str) -> list[str]:
    return re.findall(
        r'<form method="(?:get|post)" action="/papers/([^"]+)/rate/"', html
    )


# --- The writer and the signal ----------------------------------------------------


def test_set_rating_rates_changes_and_clears_and_says_what_it_replaced(alice, corpus):
    paper = get("2606.00001")

    assert set_rating(alice, paper, Rating.UP) is None
    assert set_rating(alice, paper, Rating.UP) == Rating.UP  # again: no change
    assert Rating.objects.get(user=alice, paper=paper).value == Rating.UP
    assert set_rating(alice, paper, Rating.DOWN) == Rating.UP
    assert Rating.objects.get(user=alice, paper=paper).value == Rating.DOWN
    assert set_rating(alice, paper, None) == Rating.DOWN
    assert set_rating(alice, paper, None) is None
    assert not Rating.objects.exists()


def test_a_changed_rating_is_dated_anew_and_a_repeated_one_is_not(alice, corpus):
    paper = get("2606.00001")
    set_rating(alice, paper, Rating.UP)
    long_ago = timezone.now() - timedelta(days=30)
    Rating.objects.update(created_at=long_ago)

    set_rating(alice, paper, Rating.UP)
    assert Rating.objects.get().created_at == long_ago
    set_rating(alice, paper, Rating.DOWN)
    assert Rating.objects.get().created_at > long_ago


def test_set_rating_refuses_what_is_no_rating(alice, corpus):
    with pytest.raises(ValueError, match="not 0"):
        set_rating(alice, get("2606.00001"), 0)
    assert not Rating.objects.exists()


@pytest.mark.parametrize(
    ("value", "before"), [(Rating.UP, Rating.UP), (Rating.DOWN, Rating.UP)]
)
def test_a_rating_that_loses_the_race_to_store_its_row_changes_that_row(
    alice, corpus, monkeypatch, value, before
):
    """Two thumbs at once on a paper not rated: both find no row, the other
    stores its own first; this one changes it rather than failing."""
    paper = get("2606.00001")
    Rating.objects.create(user=alice, paper=paper, value=Rating.UP)  # the other's
    unseen = iter([None])
    read = QuerySet.first

    def misses_it_once(queryset):
        found = read(queryset)
        return next(unseen, found) if queryset.model is Rating else found

    monkeypatch.setattr(QuerySet, "first", misses_it_once)

    assert set_rating(alice, paper, value) == before
    assert list(Rating.objects.values_list("value", flat=True)) == [value]


def test_only_a_change_moves_the_readers_state(alice, corpus, monkeypatch):
    moved = []
    monkeypatch.setattr("papers.library.reader_changed", moved.append)
    paper = get("2606.00001")

    set_rating(alice, paper, Rating.UP)
    set_rating(alice, paper, Rating.UP)
    set_rating(alice, paper, None)
    set_rating(alice, paper, None)
    set_saved(alice, paper, True)  # a save is signal too

    assert moved == [[alice.pk]] * 3


def test_the_signal_counts_saves_as_up_and_a_rating_over_a_save(alice, bob, corpus):
    saved, saved_and_down, up, down = (get(f"2606.0000{n}") for n in range(1, 5))
    set_saved(alice, saved, True)
    set_saved(alice, saved_and_down, True)
    set_rating(alice, saved_and_down, Rating.DOWN)
    set_rating(alice, up, Rating.UP)
    set_rating(alice, down, Rating.DOWN)
    set_rating(bob, get("2606.00005"), Rating.UP)

    assert reader_signal(alice) == {
        saved.pk: 1,
        saved_and_down.pk: -1,
        up.pk: 1,
        down.pk: -1,
    }
    set_rating(alice, saved_and_down, None)  # cleared: the save counts again
    assert reader_signal(alice)[saved_and_down.pk] == 1
    set_saved(alice, saved, False)
    assert saved.pk not in reader_signal(alice)
    assert reader_signal(bob) == {get("2606.00005").pk: 1}


# --- The rate view ------------------------------------------------------------------


def test_rating_without_javascript_is_a_form_that_returns_to_the_page(
    reader, alice, corpus
):
    response = reader.post(RATE, {"rating": "up", "next": TOPIC})

    assert response.status_code == 302
    assert response["Location"] == TOPIC
    assert Rating.objects.get(user=alice).value == Rating.UP
    assert ratings(reader.get(TOPIC).text) == {"2606.00001": "up"}

    reader.post(RATE, {"rating": "down", "next": TOPIC})
    assert ratings(reader.get(TOPIC).text) == {"2606.00001": "down"}
    reader.post(RATE, {"rating": "clear", "next": TOPIC})
    assert ratings(reader.get(TOPIC).text) == {}
    assert not Rating.objects.exists()


def test_rating_in_place_answers_the_rating_now(reader, alice, corpus):
    def rate(choice: str):
        return reader.post(
            RATE, {"rating": choice}, headers={"accept": "application/json"}
        )

    assert rate("up").json() == {"rating": "up"}
    assert rate("up").json() == {"rating": "up"}  # explicit: no flip back
    assert rate("down").json() == {"rating": "down"}
    assert rate("clear").json() == {"rating": None}
    assert not Rating.objects.exists()


@pytest.mark.parametrize("choice", ["", "1", "UP", "sideways"])
def test_a_rating_that_is_none_is_refused_clearly(reader, corpus, choice):
    plain = reader.post(RATE, {"rating": choice})
    in_place = reader.post(
        RATE, {"rating": choice}, headers={"accept": "application/json"}
    )

    assert plain.status_code == 400
    assert "rating must be up, down or clear" in plain.text
    assert in_place.status_code == 400
    assert in_place.json() == {"error": "rating must be up, down or clear."}
    assert not Rating.objects.exists()


@pytest.mark.parametrize("query", ["", "?rating=sideways"])
def test_the_rating_address_opened_as_a_page_leads_to_the_paper(
    reader, client, corpus, query
):
    for who in (reader, client):
        response = who.get(RATE + query)

        assert (response.status_code, response["Location"]) == (302, PAPER)
    assert not Rating.objects.exists()


def test_rating_an_unknown_paper_is_404(reader, corpus):
    assert reader.post("/papers/2606.99999/rate/", {"rating": "up"}).status_code == 404


def test_rating_needs_csrf(alice, corpus):
    client = signed_in(alice, enforce_csrf_checks=True)

    assert client.post(RATE, {"rating": "up"}).status_code == 403
    assert not Rating.objects.exists()


def test_next_never_leaves_the_site(reader, corpus):
    response = reader.post(RATE, {"rating": "up", "next": "https://evil.example/"})

    assert response["Location"] == "/papers/2606.00001/"


def test_a_visitors_thumb_logs_in_then_comes_back_to_finish(client, alice, corpus):
    # The visitor's button is a GET form (no CSRF token in a shared page).
    response = client.get(RATE, {"rating": "down", "next": TOPIC})
    login = urlsplit(response["Location"])
    assert login.path == "/accounts/login/"
    come_back = parse_qs(login.query)["next"][0]

    client.force_login(alice)
    confirm = client.get(come_back)
    assert "Thumbs down for “Agent 1”?" in confirm.text
    assert 'name="rating" value="down"' in confirm.text
    assert not Rating.objects.exists()  # a GET changes nothing

    finished = client.post(come_back.split("?")[0], {"rating": "down", "next": TOPIC})
    assert finished["Location"] == TOPIC
    assert Rating.objects.get(user=alice).value == Rating.DOWN
    assert "Already done." in client.get(come_back).text


def test_a_visitors_thumb_in_place_gets_the_login_address(client, corpus):
    response = client.post(
        RATE, {"rating": "up"}, headers={"accept": "application/json"}
    )

    assert response.status_code == 401
    assert response.json()["login_url"].startswith("/accounts/login/?next=")


# --- The buttons in shared pages ----------------------------------------------------


@pytest.fixture
def rated(alice, corpus):
    """alice: 2606.00001 up, 2606.00002 down, 2606.00003 saved (not rated)."""
    set_rating(alice, get("2606.00001"), Rating.UP)
    set_rating(alice, get("2606.00002"), Rating.DOWN)
    set_saved(alice, get("2606.00003"), True)
    Follow.objects.create(user=alice, topic=corpus["agents"])
    return alice


PAGES = [
    "/",  # the feed: alice follows the agents
    TOPIC,
    "/search/?q=agent",
    "/papers/2606.00001/",
    "/papers/2606.00002/",
]


@pytest.mark.parametrize("address", PAGES)
def test_every_page_shows_each_reader_their_own_thumbs(
    address, rated, bob, client, django_assert_max_num_queries
):
    as_bob = signed_in(bob)
    set_rating(bob, get("2606.00001"), Rating.DOWN)
    Follow.objects.create(user=bob, topic=rated.follows.get().topic)
    alice_page = signed_in(rated).get(address).text  # rendered for everyone
    with django_assert_max_num_queries(MAX_PAGE_QUERIES):
        bob_page = as_bob.get(address).text
    visitor_page = client.get(address).text

    arxiv_ids = rating_forms(alice_page)
    assert arxiv_ids, "no thumbs on the page"
    assert rating_forms(bob_page) == arxiv_ids
    # (A visitor's home is the latest papers, not a feed.)
    assert rating_forms(visitor_page) == arxiv_ids or address == "/"
    assert rating_forms(visitor_page)
    mine = {"2606.00001": "up", "2606.00002": "down"}
    assert ratings(alice_page) == {k: v for k, v in mine.items() if k in arxiv_ids}
    bobs = {"2606.00001": "down"}
    assert ratings(bob_page) == {k: v for k, v in bobs.items() if k in arxiv_ids}
    # A visitor's thumbs are GET forms to log in: nothing pressed, no token.
    assert ratings(visitor_page) == {}
    assert 'method="get" action="/papers/' in visitor_page
    assert "csrfmiddlewaretoken" not in visitor_page


def test_the_saved_page_shows_the_saved_papers_ratings(rated, reader):
    set_saved(rated, get("2606.00001"), True)

    page = reader.get("/saved/").text

    assert sorted(rating_forms(page)) == ["2606.00001", "2606.00003"]
    assert ratings(page) == {"2606.00001": "up"}


def test_the_two_thumbs_are_exclusive_and_say_what_they_do(rated, reader):
    page = reader.get("/papers/2606.00001/").text
    (form,) = re.findall(r'<form [^>]*class="rating up".*?</form>', page, re.S)

    # The pressed one clears; the other rates down (replacing the up).
    assert re.search(r'value="clear" data-rating="up"[^>]*aria-pressed="true"', form)
    assert re.search(r'value="down" data-rating="down"[^>]*aria-pressed="false"', form)


def test_a_rating_shows_at_once_in_a_page_cached_for_the_reader(
    rated, reader, django_capture_on_commit_callbacks
):
    reader.get(TOPIC)
    with django_capture_on_commit_callbacks(execute=True):
        reader.post(RATE, {"rating": "down"})

    assert ratings(reader.get(TOPIC).text)["2606.00001"] == "down"


def test_thumbs_cost_no_query_of_their_own(
    rated, bob, reader, django_assert_max_num_queries
):
    reader.get(TOPIC)  # renders the page for everyone
    as_bob = signed_in(bob)
    as_bob.get(TOPIC)  # (bob's session is read into the cache)
    set_saved(bob, get("2606.00004"), True)
    set_rating(bob, get("2606.00005"), Rating.UP)

    # The page from the cache, and bob's saves and ratings in one query.
    with django_assert_max_num_queries(2):
        page = as_bob.get(TOPIC).text

    assert ratings(page) == {"2606.00005": "up"}
