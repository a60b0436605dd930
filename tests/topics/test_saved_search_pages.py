"""Saved searches on the site, without JavaScript: "Save this search" on the
search page, and the settings page's list to edit, delete and run them."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.clients import signed_in
from topics.models import SavedSearch
from topics.saved_searches import create_search

pytestmark = pytest.mark.django_db

# A search page rendered anew (tests/papers/test_search.py), its windows included.
MAX_SEARCH_QUERIES = 13
# The settings page: the session's user, digest preferences and panel (with the
# authors followed, and whether any search is saved), tokens, the private feed,
# and the saved searches with their match counts.
MAX_SETTINGS_QUERIES = 14


def test_search_page_offers_a_reader_to_save_it_and_a_visitor_to_log_in(
    alice, corpus, django_assert_max_num_queries
):
    reader = signed_in(alice)
    with django_assert_max_num_queries(MAX_SEARCH_QUERIES):
        page = reader.get("/search/", {"q": "robot"}).text
    visitor = Client().get("/search/", {"q": "robot"}).text

    assert '<summary id="save-search-summary">Save this search</summary>' in page
    assert 'name="query" required value="robot"' in page
    assert '<option value="rule">' in page
    assert '<summary id="save-search-summary">Save this search</summary>' not in visitor
    assert "/accounts/login/?next=/search/%3Fq%3Drobot" in visitor
    # The shared render holds no one's form: the visitor's came from the cache.
    assert "csrfmiddlewaretoken" not in visitor.split("save-search")[1]


def test_the_name_offered_is_the_search_without_its_quotes(alice, corpus):
    page = signed_in(alice).get("/search/", {"q": ' "tool  use" -robot '}).text

    form = page.split('class="save-search"')[1]
    assert 'name="name" maxlength="80" required value="tool use -robot"' in form
    assert 'name="query" required value="&quot;tool  use&quot; -robot"' in form


def test_the_form_says_the_pages_filters_are_not_kept(alice, corpus):
    reader = signed_in(alice)
    filtered = reader.get("/search/", {"q": "robot", "category": "cs.LG"}).text
    plain = reader.get("/search/", {"q": "robot"}).text

    said = "It keeps its words, not this page's topic, category and date filters"
    assert said in filtered.split('class="save-search"')[1]
    assert said not in plain


def test_a_save_posted_after_the_session_ended_logs_in_back_to_the_search(db):
    """Logged out in another tab: back to the search page after logging in, not
    to /searches/, which a GET answers with a 405."""
    form = {"name": "Lost", "query": "diffusion", "next": "/search/?q=diffusion"}

    response = Client().post("/searches/", form)
    elsewhere = Client().post("/searches/", {**form, "next": "https://evil.example/"})

    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/search/%3Fq%3Ddiffusion"
    assert elsewhere["Location"] == "/accounts/login/?next=/settings/"
    assert not SavedSearch.objects.exists()


def test_saving_from_the_search_page_and_a_refusal_with_its_position(alice, corpus):
    reader = signed_in(alice)

    saved = reader.post(
        "/searches/",
        {
            "name": "Robots",
            "query": "robot",
            "syntax": "search",
            "next": "/search/?q=robot",
        },
        follow=True,
    )
    refused = reader.post(
        "/searches/",
        {
            "name": "Rule",
            "query": "ti:robot AND",
            "syntax": "rule",
            "next": "/search/?q=x",
        },
        follow=True,
    )

    assert saved.redirect_chain[-1][0] == "/search/?q=robot"
    # Said once, by the results: not a second time in a message above them.
    assert "Saved “Robots”" not in saved.text
    # Saved with its words edited in the form: the results are another
    # search's, so the message says it.
    edited = reader.post(
        "/searches/",
        {"name": "Arms", "query": "robot arm", "next": "/search/?q=robot"},
        follow=True,
    )
    assert "Saved “Arms”: its new papers will come to your feed" in edited.text
    assert (
        "Saved as “Robots”: its new papers come to your feed and digest." in saved.text
    )
    assert SavedSearch.objects.get(user=alice, query="robot").name == "Robots"
    assert refused.redirect_chain[-1][0] == "/search/?q=x"
    assert "Not saved: Invalid rule: " in refused.text
    assert "at position 9" in refused.text
    # The form comes back open with what was typed, once.
    form = refused.text.split('class="save-search"')[1]
    assert "<details open>" in form
    assert 'role="alert">Not saved: Invalid rule: ' in form
    assert 'name="name" maxlength="80" required value="Rule"' in form
    assert 'name="query" required value="ti:robot AND"' in form
    assert '<option value="rule" selected>' in form
    again = reader.get("/search/?q=x").text.split('class="save-search"')[1]
    assert "<details open>" not in again
    assert 'required value="x"' in again


def test_a_search_typed_with_a_phones_quotes_is_named_without_them(alice, corpus):
    page = signed_in(alice).get("/search/", {"q": "“robot arms” \u2212survey"}).text

    form = page.split('class="save-search"')[1]
    assert 'name="name" maxlength="80" required value="robot arms -survey"' in form


def test_search_page_says_under_which_name_it_is_already_saved(alice, corpus):
    create_search(alice, name="Robots", query="robot", syntax="search")
    reader = signed_in(alice)

    saved = reader.get("/search/", {"q": " robot "}).text.split('class="save-search"')[
        1
    ]
    other = reader.get("/search/", {"q": "robots"}).text.split('class="save-search"')[1]

    assert "Saved as “Robots”: its new papers come to your feed and digest." in saved
    assert 'href="/settings/#searches-heading"' in saved
    assert '<summary id="save-search-summary">Save this search</summary>' not in saved
    assert '<summary id="save-search-summary">Save this search</summary>' in other
    # A second search of that name is refused with the name quoted once.
    refused = reader.post(
        "/searches/",
        {
            "name": "Robots",
            "query": "robots",
            "syntax": "search",
            "next": "/search/?q=robots",
        },
        follow=True,
    )
    assert "Not saved: You already have a search named “Robots”" in refused.text


def test_a_search_saved_from_settings_with_spaces_around_is_run_as_saved(alice, corpus):
    reader = signed_in(alice)
    # Pasted into the settings form with spaces around it.
    reader.post("/searches/", {"name": "Robots", "query": " robot "})

    settings_page = reader.get("/settings/").text
    run = settings_page.split('<a href="/search/?q=')[1].split('"')[0]
    results = reader.get(f"/search/?q={run}").text.split('class="save-search"')[1]

    assert "Saved as “Robots”" in results
    assert '<summary id="save-search-summary">Save this search</summary>' not in results
    search = SavedSearch.objects.get()
    assert search.query == "robot"
    reader.post(f"/searches/{search.pk}/", {"name": "Arms", "query": "robot arm "})
    assert SavedSearch.objects.get().query == "robot arm"


def test_a_refused_edit_comes_back_open_with_what_was_typed(alice, corpus):
    search = create_search(alice, name="Robots", query="robot", syntax="search")
    reader = signed_in(alice)

    refused = reader.post(
        f"/searches/{search.pk}/",
        {"name": "Robots", "query": "ti:robot OR", "syntax": "rule"},
        follow=True,
    )
    new = reader.post(
        "/searches/",
        {"name": "", "query": "agent", "syntax": "search", "next": "/settings/"},
        follow=True,
    )

    assert "Not changed: Invalid rule" in refused.text
    edit = refused.text.split(f'action="/searches/{search.pk}/"')[0]
    assert edit.rsplit("<details", 1)[1].startswith(" open>\n        <summary>Edit")
    assert 'required value="ti:robot OR"' in refused.text
    assert SavedSearch.objects.get(pk=search.pk).query == "robot"  # unchanged
    assert "Not saved:" in new.text
    assert 'id="search-new-query" name="query" required value="agent"' in new.text
    assert 'required value="ti:robot OR"' not in new.text  # taken once


def test_settings_list_edit_and_delete_saved_searches(
    alice, bob, corpus, django_assert_max_num_queries
):
    search = create_search(alice, name="Robots", query="robot", syntax="search")
    create_search(alice, name="Agents", query="ti:agent", syntax="rule")
    create_search(bob, name="Bob's own", query="agent", syntax="search")
    reader = signed_in(alice)
    reader.get("/settings/")

    with django_assert_max_num_queries(MAX_SETTINGS_QUERIES):
        page = reader.get("/settings/").text

    assert "Saved searches" in page
    # Each name isolated: one written right to left keeps its count after it.
    assert '<bdi>Robots</bdi> <span class="count">1 paper</span>' in page
    assert '<bdi>Agents</bdi> <span class="count">8 papers</span>' in page
    assert 'href="/search/?q=robot">Run it</a>' in page
    assert "Bob&#x27;s own" not in page

    reader.post(
        f"/searches/{search.pk}/",
        {"name": "Old", "query": '"old style"', "syntax": "search"},
    )
    search.refresh_from_db()
    assert (search.name, search.matches.count()) == ("Old", 1)
    # Asked first, by its name: one click no longer deletes it.
    settings = reader.get("/settings/").text
    assert "<summary>Delete</summary>" in settings
    assert 'class="danger small">Delete “Old”</button>' in settings
    assert signed_in(bob).post(f"/searches/{search.pk}/delete/").status_code == 404
    reader.post(f"/searches/{search.pk}/delete/")
    assert not SavedSearch.objects.filter(pk=search.pk).exists()


def test_a_search_holding_its_newest_matches_only_says_more_may_match(
    alice, corpus, monkeypatch
):
    """It keeps its newest MATCHES_KEPT matches: "8 papers" of a search that
    matches more would be a count it does not have."""
    monkeypatch.setattr("topics.saved_searches.MATCHES_KEPT", 3)
    monkeypatch.setattr("topics.templatetags.saved_searches.MATCHES_KEPT", 3)
    create_search(alice, name="Agents", query="ti:agent", syntax="rule")

    page = signed_in(alice).get("/settings/").text

    # Said, not only on hover, which a phone has not.
    assert ">3+ papers</span>" in page
    assert "it kept the newest 3 when it was saved, and keeps each new one" in page
    assert 'title="It keeps' not in page


@pytest.mark.parametrize("query", ["the", "of the", "the or +"])
def test_a_search_of_common_words_saved_before_they_were_refused_says_so(
    alice, corpus, query
):
    """Saving refuses it now (topics.saved_searches.check_query); one saved
    before matches nothing, and says why rather than seem to wait for papers."""
    search = SavedSearch.objects.create(
        user=alice, name="Common", query=query, syntax="search"
    )
    create_search(alice, name="Robots", query="robot", syntax="search")

    page = signed_in(alice).get("/settings/").text
    common = page.split("<bdi>Common</bdi>")[1].split("</article>")[0]
    robots = page.split("<bdi>Robots</bdi>")[1].split("</article>")[0]

    assert f'<article class="saved-search" id="saved-search-{search.pk}">' in page
    assert "Nothing to search for: words as common as “the” or “of”" in common
    assert "Run it" not in common
    assert "<summary>Edit</summary>" in common
    assert "Nothing to search for" not in robots
    assert "Run it" in robots
