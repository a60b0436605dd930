"""What a reader types, shown back on a phone: a name or a question with no
space in it (a run of letters, a URL, a language written without spaces)
wraps inside the screen instead of widening the page, which then scrolls
sideways and is shown zoomed out."""

from __future__ import annotations

import pytest
from allauth.account.models import EmailAddress
from playwright.sync_api import expect

from accounts.models import User
from notifications.tokens import masked
from notifications.tokens import unsubscribe_token
from papers.ingest.upsert import upsert_records
from tests.browser.conftest import PHONE
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.models import Follow
from topics.models import Question
from topics.models import SavedSearch
from topics.saved_searches import NAME_LENGTH
from topics.saved_searches import create_search
from topics.tagging import tag_papers

pytestmark = pytest.mark.django_db(transaction=True)

# As long as a saved search's name may be, without a space.
NAME = ("Robotpolicies" * 10)[:NAME_LENGTH]
QUESTION = "Whichrobotpolicieslearnfromvideo" * 10


@pytest.fixture
def reader(alice):
    """alice, following a topic with a robot paper, with a long question asked
    about it."""
    topic = make_topic("Robot Learning", rule="ti:robot", slug="robot-learning")
    tag_papers(
        upsert_records(
            [paper_record("2607.04713", title="Robot policies from video")]
        ).changed_ids
    )
    Follow.objects.create(user=alice, topic=topic)
    Question.objects.create(user=alice, topic=topic, text=QUESTION)
    return alice


def test_a_long_saved_search_name_and_question_stay_inside_a_phones_screen(
    phone, sign_in, reader
):
    sign_in(phone, reader)
    phone.goto("/settings/")
    new = phone.locator("details:has(> summary:text-is('New saved search'))")
    new.locator("summary").click()
    new.get_by_label("Name").fill(NAME)
    new.get_by_label("Query").fill("robot")
    new.get_by_role("button", name="Save search").click()
    # The settings again, with the message naming it.
    expect(phone.locator(".messages")).to_contain_text(NAME)
    assert_within_the_screen(phone, "the settings, saved")

    for address in (
        "/settings/",  # the search listed, with its Delete button
        "/",  # the row it matched, and the searches beside the feed
        "/search/?q=robot",  # "Saved as …"
        "/topics/robot-learning/ask/",  # the recent questions
    ):
        phone.goto(address)
        assert_within_the_screen(phone, address)


def assert_within_the_screen(page, where: str) -> None:
    shown = page.get_by_text(NAME).or_(page.get_by_text(QUESTION))
    expect(shown.first).to_be_attached()
    for details in page.locator("details").all():
        details.evaluate("d => d.open = true")  # what they hold laid out too
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"{where}: {width}px wide"


def test_a_long_saved_search_name_stays_inside_a_phones_screen_in_the_digest(
    phone, sign_in, reader
):
    """The digest's HTML, as a mail app on a phone lays it out (here, as the
    browser shows the next one): the name, in a section's heading or beside a
    paper it matched, made the mail as wide as itself and every line of it ran
    off the screen."""
    create_search(reader, name=NAME, query="robot", syntax=SavedSearch.Syntax.SEARCH)
    sign_in(phone, reader)
    phone.goto("/digest/preview/")

    # Its paper, in the topic's section, says which search it matches.
    expect(phone.get_by_text(f"Matches your search “{NAME}”")).to_be_visible()
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the digest: {width}px wide"


# As long as an address may be without a space: a local part of 64 letters,
# a domain label of 63.
ADDRESS = ("longreaderaddress" * 4)[:64] + "@" + ("verylongdomain" * 5)[:63] + ".org"


def test_a_long_address_stays_inside_a_phones_screen(phone, sign_in, db):
    """The reader's address, shown back on their settings ("Logged in as"),
    on the page that deletes the account, on the page of their addresses and,
    only hinted at, on a digest's unsubscribe page."""
    long = User.objects.create_user(ADDRESS, "correct horse battery")
    EmailAddress.objects.create(user=long, email=ADDRESS, verified=True, primary=True)
    EmailAddress.objects.create(user=long, email="new" + ADDRESS[3:], verified=False)
    sign_in(phone, long)

    for address, shown in (
        ("/settings/", ADDRESS),
        ("/settings/delete/", ADDRESS),
        ("/accounts/email/", ADDRESS),
        (f"/unsubscribe/{unsubscribe_token(long)}/", masked(ADDRESS)),
    ):
        phone.goto(address)
        expect(phone.get_by_text(shown).first).to_be_attached()
        width = phone.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], f"{address}: {width}px wide"
