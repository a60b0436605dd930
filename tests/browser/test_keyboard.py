"""Every list of papers from the keyboard, in a real browser: J/K/Enter/S and
+/- (thumbs up and down) on search, saved, the feed and a topic page; the first
row selected on load (not on a touch screen); Back returns to the row that was
opened; J and K turn the page; `?` lists the keys; and on a phone the abstract
opens under the row."""

from __future__ import annotations

import re
import time
from datetime import UTC
from datetime import datetime

import pytest
from playwright.sync_api import Page
from playwright.sync_api import expect

from papers.ingest.upsert import upsert_records
from papers.models import Rating
from papers.models import ShownPaper
from papers.models import SimilarPaper
from tests.browser.conftest import PHONE
from tests.papers.factories import paper_record
from tests.topics.factories import make_topic
from topics.similar import build_all
from topics.tagging import tag_papers

pytestmark = pytest.mark.django_db(transaction=True)

SELECTED = re.compile(r"\bselected\b")
PAPERS = 30  # more than a page (25)


@pytest.fixture
def topic(transactional_db):
    """A topic of 30 agent papers, newest first "Agent paper 30" ... "1"."""
    topic = make_topic("RL for LLM Agents", rule="ti:agent", slug="rl-agents")
    records = [
        paper_record(
            f"2606.{n:05d}",
            title=f"Agent paper {n}",
            abstract=f"Abstract of agent paper {n}.",
            published=datetime(2026, 6, 1 + n % 28, 15, n, tzinfo=UTC),
        )
        for n in range(1, PAPERS + 1)
    ]
    tag_papers(upsert_records(records).changed_ids)
    return topic


@pytest.fixture
def follower(follower, sign_in, page):
    """The follower (papers 1 to 3 saved), signed in on the page."""
    sign_in(page, follower)
    return follower


def rows(page: Page):
    return page.locator("[data-paper-list] [data-paper]")


@pytest.mark.parametrize(
    "address", ["/search/?q=agent", "/saved/", "/", "/topics/rl-agents/"]
)
def test_j_k_enter_and_s_work_on_every_list(page, follower, address):
    page.goto(address)
    first, second = rows(page).nth(0), rows(page).nth(1)
    expect(first).to_have_class(SELECTED)
    expect(page.locator(".key-hint")).to_be_visible()
    expect(page.locator("#paper-panel")).to_contain_text(
        first.locator(".paper-title").inner_text()
    )

    page.keyboard.press("j")
    expect(second).to_have_class(SELECTED)
    expect(second).to_be_focused()
    expect(first).not_to_have_class(SELECTED)
    page.keyboard.press("k")
    expect(first).to_have_class(SELECTED)
    page.keyboard.press("j")

    arxiv_id = second.get_attribute("data-paper")
    was_saved = follower.saved_papers.filter(paper__arxiv_id=arxiv_id).exists()
    page.keyboard.press("s")
    expect(second.locator("form.toggle button")).to_have_text(
        "Save" if was_saved else "Saved"
    )
    assert follower.saved_papers.filter(paper__arxiv_id=arxiv_id).exists() != was_saved

    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/papers/{arxiv_id}/$"))


def test_the_saved_count_follows_what_is_unsaved_and_saved_again_in_place(
    page, follower
):
    """The unsaved row stays (S saves it again): its heading said 3 still."""
    page.goto("/saved/")
    counts = page.locator("[data-saved-count]")
    expect(counts).to_have_text(["3", "3"])

    page.keyboard.press("s")
    expect(rows(page).nth(0).locator("form.toggle button")).to_have_text("Save")
    expect(counts).to_have_text(["2", "2"])
    page.keyboard.press("s")
    expect(counts).to_have_text(["3", "3"])
    assert follower.saved_papers.count() == 3


def thumbs(row):
    form = row.locator("form.rating")
    return form.locator("button[data-rating=up]"), form.locator(
        "button[data-rating=down]"
    )


def rating_of(user, arxiv_id: str) -> int | None:
    found = Rating.objects.filter(user=user, paper__arxiv_id=arxiv_id).first()
    return found.value if found else None


@pytest.mark.parametrize(
    "address", ["/search/?q=agent", "/saved/", "/", "/topics/rl-agents/"]
)
def test_plus_and_minus_rate_the_selected_paper_in_place(page, follower, address):
    page.goto(address)
    page.keyboard.press("j")
    second = rows(page).nth(1)
    expect(second).to_have_class(SELECTED)
    arxiv_id = second.get_attribute("data-paper")
    up, down = thumbs(second)
    url = page.url

    page.keyboard.press("+")
    expect(up).to_have_attribute("aria-pressed", "true")
    expect(down).to_have_attribute("aria-pressed", "false")
    assert rating_of(follower, arxiv_id) == Rating.UP

    page.keyboard.press("-")  # the two are exclusive
    expect(down).to_have_attribute("aria-pressed", "true")
    expect(up).to_have_attribute("aria-pressed", "false")
    assert rating_of(follower, arxiv_id) == Rating.DOWN

    page.keyboard.press("-")  # again: cleared
    expect(down).to_have_attribute("aria-pressed", "false")
    assert rating_of(follower, arxiv_id) is None
    page.keyboard.press("=")  # + without Shift
    expect(up).to_have_attribute("aria-pressed", "true")
    assert page.url == url  # in place: no reload
    expect(second).to_have_class(SELECTED)

    # The first row was not touched; the rating is there after a reload.
    assert rating_of(follower, rows(page).nth(0).get_attribute("data-paper")) is None
    page.reload()
    expect(thumbs(page.locator(f'[data-paper="{arxiv_id}"]'))[0]).to_have_attribute(
        "aria-pressed", "true"
    )


def test_a_click_on_a_thumb_rates_in_place(page, follower):
    page.goto("/topics/rl-agents/")
    row = rows(page).nth(2)
    up, down = thumbs(row)

    down.click()
    expect(down).to_have_attribute("aria-pressed", "true")
    up.click()
    expect(up).to_have_attribute("aria-pressed", "true")
    expect(down).to_have_attribute("aria-pressed", "false")
    assert rating_of(follower, row.get_attribute("data-paper")) == Rating.UP


def test_a_visitors_plus_goes_to_log_in(page, topic):
    page.goto("/topics/rl-agents/")
    page.keyboard.press("+")

    expect(page).to_have_url(re.compile(r"/accounts/login/\?next="))


def test_the_first_row_is_selected_on_load_without_scrolling_or_taking_focus(
    new_page, topic
):
    page = new_page(viewport={"width": 1280, "height": 500})
    # Hold site.js back until the reader has started typing a search.
    held = []
    page.route("**/js/site.js", lambda route: held.append(route))
    page.goto("/topics/rl-agents/", wait_until="commit")
    search = page.locator("#site-search")
    search.click()
    search.press_sequentially("agen")
    held[0].continue_()

    expect(rows(page).nth(0)).to_have_class(SELECTED)
    expect(search).to_be_focused()
    search.press_sequentially("t")
    expect(search).to_have_value("agent")
    assert page.evaluate("window.scrollY") == 0


def test_back_selects_the_row_that_was_opened(page, topic):
    page.goto("/topics/rl-agents/")
    page.keyboard.press("j")
    page.keyboard.press("j")
    third = rows(page).nth(2).get_attribute("data-paper")
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/papers/{third}/$"))

    page.go_back()
    expect(page.locator(f'[data-paper="{third}"]')).to_have_class(SELECTED)
    # Also when the page is loaded again rather than kept in memory.
    page.reload()
    expect(page.locator(f'[data-paper="{third}"]')).to_have_class(SELECTED)
    expect(rows(page).nth(0)).not_to_have_class(SELECTED)

    # A click on a row's title is remembered as well.
    fifth = rows(page).nth(4)
    fifth_id = fifth.get_attribute("data-paper")
    fifth.locator(".paper-title a").click()
    expect(page).to_have_url(re.compile(rf"/papers/{fifth_id}/$"))
    page.go_back()
    expect(page.locator(f'[data-paper="{fifth_id}"]')).to_have_class(SELECTED)


def test_a_visitors_save_far_down_the_list_comes_back_to_that_row(
    page, topic, verified_alice
):
    """Saving the 20th paper as a visitor: log in, confirm, and the list is
    back at that row, selected, with the panel showing it (not at the top)."""
    page.goto("/topics/rl-agents/")
    twentieth = rows(page).nth(19)
    arxiv_id = twentieth.get_attribute("data-paper")
    twentieth.get_by_role("button", name="Save").click()
    page.fill("#id_login", verified_alice.email)
    page.fill("#id_password", "correct horse battery")
    page.locator("main button[type=submit]").click()
    page.get_by_role("button", name="Yes").click()

    expect(page).to_have_url(re.compile(rf"/topics/rl-agents/#paper-{arxiv_id}$"))
    row = page.locator(f'[data-paper="{arxiv_id}"]')
    expect(row).to_have_class(SELECTED)
    expect(row).to_be_in_viewport()
    expect(row.get_by_role("button", name="Saved")).to_be_visible()
    expect(page.locator("#paper-panel .panel-title")).to_have_text(
        row.locator(".paper-title a").inner_text()
    )


def test_j_at_the_last_row_goes_on_to_the_next_page_and_k_comes_back(page, topic):
    page.goto("/topics/rl-agents/")
    expect(rows(page)).to_have_count(25)
    for _ in range(24):
        page.keyboard.press("j")
    expect(rows(page).nth(24)).to_have_class(SELECTED)

    page.keyboard.press("j")
    expect(page).to_have_url(re.compile(r"\?page=2$"))
    expect(rows(page)).to_have_count(PAPERS - 25)
    expect(rows(page).nth(0)).to_have_class(SELECTED)
    expect(rows(page).nth(0)).to_be_focused()
    page.keyboard.press("j")
    expect(rows(page).nth(1)).to_have_class(SELECTED)
    page.keyboard.press("k")

    page.keyboard.press("k")  # before the first row: the previous page's last
    expect(page).to_have_url(re.compile(r"\?page=1$"))
    expect(rows(page).nth(24)).to_have_class(SELECTED)
    expect(rows(page).nth(24)).to_be_in_viewport()


def test_back_after_j_turned_the_page_selects_the_row_it_left(page, topic):
    """The selection is written 300 ms after it settles: J pressed quicker
    than that (held, or tapped while skimming) turned the page before the last
    row was written, and Back selected an earlier row (or the first), far
    above the rows the browser scrolled back to."""
    page.goto("/topics/rl-agents/")
    for _ in range(25):
        page.keyboard.press("j")
    expect(page).to_have_url(re.compile(r"\?page=2$"))

    page.go_back()
    expect(page).to_have_url(re.compile(r"/topics/rl-agents/$"))
    expect(rows(page).nth(24)).to_have_class(SELECTED)


def test_question_mark_lists_every_key(page, topic):
    page.goto("/topics/rl-agents/")
    page.keyboard.press("?")

    keys = page.locator("#keys")
    expect(keys).to_be_visible()
    # J/K and the rest act on a list's rows: the list says so, as pages without
    # one (a settings page) show it too.
    assert keys.locator("h3").all_inner_texts() == [
        "In a list of papers",
        "On a paper's page",
        "On every page",
    ]
    listed = keys.locator("dt").all_inner_texts()
    assert [key.replace(" ", "") for key in listed] == [
        "J/K",
        "Enter",
        "S",
        "+/-",
        "/",
        "?",
        "Esc",
    ]
    page.keyboard.press("Escape")
    expect(keys).to_be_hidden()


@pytest.mark.parametrize("reached_by", ["/", "click"])
def test_esc_in_the_search_box_gives_the_keys_back_to_the_list(page, topic, reached_by):
    """After a / pressed by mistake, Esc stayed in the box, and the next J or S
    was typed into it."""
    page.goto("/topics/rl-agents/")
    page.keyboard.press("j")
    second = rows(page).nth(1)
    search = page.locator("#site-search")
    if reached_by == "/":
        page.keyboard.press("/")
    else:
        search.click()
    expect(search).to_be_focused()

    page.keyboard.press("Escape")

    expect(second).to_be_focused()
    expect(second).to_have_class(SELECTED)
    page.keyboard.press("j")
    expect(rows(page).nth(2)).to_have_class(SELECTED)
    expect(search).to_have_value("")


def test_on_a_phone_the_abstract_opens_under_the_row(phone, topic):
    page = phone
    page.goto("/topics/rl-agents/")
    first, second = rows(page).nth(0), rows(page).nth(1)
    expect(page.locator("#paper-panel")).to_be_hidden()
    expect(first.locator(".drawer .abstract")).to_be_hidden()

    first.get_by_text("Abstract", exact=True).click()
    expect(first.locator(".drawer .abstract")).to_be_visible()
    expect(first.locator(".drawer .abstract")).to_have_text(
        re.compile(r"Abstract of agent paper \d+\.")
    )

    # Moving with the keys opens the selected row's abstract.
    page.keyboard.press("j")
    expect(second).to_have_class(SELECTED)
    expect(second.locator(".drawer .abstract")).to_be_visible()


def long_abstracts(count: int) -> None:
    """RL for LLM Agents with `count` papers whose abstracts run to a screen or
    more on a phone, as real ones do."""
    make_topic("RL for LLM Agents", rule="ti:agent", slug="rl-agents")
    long = "We study agents that plan, act and learn from feedback. " * 25
    records = [
        paper_record(
            f"2606.{n:05d}",
            title=f"Agent paper {n}",
            abstract=long,
            published=datetime(2026, 6, 1 + n, 15, tzinfo=UTC),
        )
        for n in range(1, count + 1)
    ]
    tag_papers(upsert_records(records).changed_ids)


def test_on_a_phone_j_brings_the_next_papers_title_into_view(phone, transactional_db):
    """The previous abstract closing above moved the row after it was scrolled
    to: its title ended above the screen, its abstract's end showing. Real
    abstracts run to a screen or more on a phone."""
    long_abstracts(5)
    page = phone
    page.goto("/topics/rl-agents/")

    for n in (1, 2, 3):
        page.keyboard.press("j")
        title = rows(page).nth(n).locator(".paper-title")
        expect(title).to_be_in_viewport()


def test_a_touch_screen_is_not_told_of_keys_it_has_not(touch_phone, topic):
    """A phone's reader was told "J/K move · Enter open · S save" under the
    papers, with no keyboard to press them."""
    touch_phone.goto("/topics/rl-agents/")
    expect(touch_phone.locator("html")).to_have_class("js")  # site.js ran

    expect(touch_phone.locator(".key-hint")).to_be_hidden()


def test_a_touch_screen_selects_no_row_until_a_key_or_a_tap(touch_phone, topic):
    """The first row was selected on load for the keys, which a phone has not:
    it stood highlighted, as if picked out, until the reader tapped another.
    A key (a keyboard plugged into a tablet) selects it, and a tap the row
    tapped."""
    page = touch_phone
    page.goto("/topics/rl-agents/")
    expect(page.locator("html")).to_have_class("js")  # site.js ran

    expect(page.locator(".paper-row.selected")).to_have_count(0)
    expect(page.locator(".paper-row[aria-current]")).to_have_count(0)

    page.keyboard.press("j")
    expect(rows(page).nth(0)).to_have_class(SELECTED)
    rows(page).nth(2).locator("time").tap()
    expect(rows(page).nth(2)).to_have_class(SELECTED)
    expect(page.locator(".paper-row.selected")).to_have_count(1)


def test_on_a_phone_a_tapped_paper_stays_under_the_finger(
    touch_phone, transactional_db
):
    """A tap on a row opens its abstract and closes the one a tap opened above
    it: the row jumped up by that abstract's height (a screen or more), its
    title far above the screen, the reader left in the middle of an abstract."""
    long_abstracts(3)
    page = touch_phone
    page.goto("/topics/rl-agents/")
    first, second = rows(page).nth(0), rows(page).nth(1)
    first.locator("time").tap()
    expect(first.locator(".drawer .abstract")).to_be_visible()
    second.scroll_into_view_if_needed()
    title = second.locator(".paper-title")
    before = title.bounding_box()

    second.locator("time").tap()

    expect(second.locator(".drawer .abstract")).to_be_visible()
    expect(first.locator(".drawer .abstract")).to_be_hidden()
    expect(title).to_be_in_viewport()
    after = title.bounding_box()
    assert before is not None
    assert after is not None
    assert abs(after["y"] - before["y"]) < 1


def test_the_keys_act_on_the_paper_tabbed_to(page, follower):
    """Not on a row selected out of sight: Tab to a paper's title, and S saves
    that paper and J goes on from it."""
    page.goto("/topics/rl-agents/")
    fourth = rows(page).nth(3)
    arxiv_id = fourth.get_attribute("data-paper")

    fourth.locator(".paper-title a").focus()
    page.keyboard.press("s")

    expect(fourth).to_have_class(SELECTED)
    expect(fourth.locator("form.toggle button")).to_have_text("Saved")
    assert follower.saved_papers.filter(paper__arxiv_id=arxiv_id).exists()
    page.keyboard.press("j")
    expect(rows(page).nth(4)).to_have_class(SELECTED)
    # The row J focuses is named by its title, for a screen reader to say.
    title = rows(page).nth(4).locator(".paper-title").inner_text()
    expect(rows(page).nth(4)).to_have_accessible_name(title)


def test_tab_goes_from_a_papers_title_to_its_buttons_named_by_it(page, follower):
    """They sat after the abstract in the page, so Tab jumped back up to them."""
    page.goto("/topics/rl-agents/")
    row = rows(page).nth(2)
    row.locator(".paper-title a").focus()

    page.keyboard.press("Tab")

    expect(row.locator("form.toggle button")).to_be_focused()
    title = row.locator(".paper-title").inner_text()
    expect(row.locator(".row-actions")).to_have_accessible_name(title)


def test_a_button_pressed_from_the_keyboard_keeps_the_focus(page, follower):
    """A button disabled during its request dropped the focus to the page: the
    change went unannounced, and Enter again opened the paper."""
    page.goto("/topics/rl-agents/")
    row = rows(page).nth(5)
    button = row.locator("form.toggle button")
    button.focus()

    page.keyboard.press("Enter")
    expect(button).to_have_attribute("aria-pressed", "true")
    expect(button).to_be_focused()
    page.keyboard.press("Enter")  # again: the toggle, not the paper
    expect(button).to_have_attribute("aria-pressed", "false")
    expect(page).to_have_url(re.compile(r"/topics/rl-agents/$"))


def test_after_ticking_a_box_the_keys_still_move(page, follower):
    page.goto("/saved/")
    page.locator(".saved-row input[type=checkbox]").first.check()

    page.keyboard.press("j")

    expect(rows(page).nth(1)).to_have_class(SELECTED)


def test_on_a_phone_a_rows_controls_are_a_fingers_size(phone, follower, sign_in):
    """At least 24 px each way (WCAG 2.5.8): the thumbs were 21 high, the
    Abstract toggle too, and the Saved page's tick boxes 13 square."""
    page = phone
    sign_in(page, follower)
    page.goto("/saved/")
    row = rows(page).nth(0)
    controls = [
        row.locator("form.toggle button"),
        *thumbs(row),
        row.locator(".drawer summary"),
        page.locator(".saved-row input[type=checkbox]").first,
    ]

    for control in controls:
        box = control.bounding_box()
        assert box is not None
        assert min(box["width"], box["height"]) >= 24, (control, box)


def test_on_a_touch_screen_the_page_turns_are_a_fingers_size(
    touch_phone, new_page, topic
):
    """44 px tall, as a finger needs: "Older →" was a line of text, 19 px; on
    a computer, whose pointer is fine, it stays a line of text."""
    touch_phone.goto("/topics/rl-agents/?page=2")
    computer = new_page()
    computer.goto("/topics/rl-agents/?page=2")

    newer = box(touch_phone.get_by_role("link", name="← Newer"))
    touch_phone.goto("/topics/rl-agents/")
    older = box(touch_phone.get_by_role("link", name="Older →"))
    on_a_computer = box(computer.get_by_role("link", name="← Newer"))

    assert min(newer["height"], older["height"]) >= 44, (newer, older)
    assert min(newer["width"], older["width"]) >= 44, (newer, older)
    assert on_a_computer["height"] < 30


def box(locator) -> dict[str, float]:
    found = locator.bounding_box()
    assert found is not None, locator
    return found


def test_the_drawer_works_without_javascript(new_page, topic):
    page = new_page(viewport=PHONE, java_script_enabled=False)
    page.goto("/topics/rl-agents/")
    first = rows(page).nth(0)

    first.get_by_text("Abstract", exact=True).click()
    expect(first.locator(".drawer .abstract")).to_be_visible()


def test_on_a_desktop_the_side_panel_shows_the_paper_and_the_drawer_is_hidden(
    page, topic
):
    page.goto("/topics/rl-agents/")

    expect(page.locator("#paper-panel")).to_be_visible()
    expect(page.locator("#paper-panel")).to_contain_text("Abstract of agent paper")
    expect(rows(page).nth(0).locator(".drawer")).to_be_hidden()


# Each of the aside's other parts, at every scroll position where its middle
# is in view: whether something else (the sticky panel) lies over it there.
COVERED_IN_ASIDE = """() => {
  const panel = document.getElementById("paper-panel");
  const parts = [...panel.closest("aside").children].filter(e => e !== panel);
  const covered = new Set();
  for (let y = 0; y < document.documentElement.scrollHeight; y += 100) {
    window.scrollTo(0, y);
    for (const part of parts) {
      const box = part.getBoundingClientRect();
      const middle = box.top + box.height / 2;
      if (box.height === 0 || middle < 0 || middle >= innerHeight) continue;
      const found = document.elementFromPoint(box.left + 4, middle);
      if (found && !part.contains(found)) covered.add(part.outerHTML.slice(0, 60));
    }
  }
  return [...covered];
}"""


@pytest.mark.parametrize(
    "address", ["/", "/topics/rl-agents/", "/search/?q=agent", "/saved/"]
)
def test_the_side_panel_never_covers_the_rest_of_its_aside(page, follower, address):
    """The panel is sticky: placed first in its aside it slid over the related
    topics, the reader's topics and the rest, which no scroll then showed."""
    page.goto(address)
    expect(page.locator("#paper-panel")).to_be_visible()

    assert page.evaluate(COVERED_IN_ASIDE) == []


def test_on_a_papers_page_the_keys_act_on_that_paper_until_j(page, follower):
    """Its similar papers are a list below it: S saved the first of them, out of
    sight, while the reader read the paper above."""
    build_all()
    listed = SimilarPaper.objects.exclude(paper__saves__user=follower)
    arxiv_id = listed.values_list("paper__arxiv_id", flat=True).first()
    page.goto(f"/papers/{arxiv_id}/")
    similar = rows(page)
    expect(similar.first).to_be_visible()
    expect(similar.first).not_to_have_class(SELECTED)

    page.keyboard.press("s")
    page.keyboard.press("+")

    own = page.locator("[data-page-paper] .actions")
    expect(own.locator("form.toggle button")).to_have_text("Saved")
    expect(thumbs(own)[0]).to_have_attribute("aria-pressed", "true")
    assert follower.saved_papers.filter(paper__arxiv_id=arxiv_id).exists()
    assert rating_of(follower, arxiv_id) == Rating.UP

    page.keyboard.press("j")  # into the similar papers: the keys act there
    expect(similar.first).to_have_class(SELECTED)
    page.keyboard.press("-")
    first_similar = similar.first.get_attribute("data-paper")
    expect(thumbs(similar.first)[1]).to_have_attribute("aria-pressed", "true")
    assert rating_of(follower, first_similar) == Rating.DOWN

    page.keyboard.press("k")  # and back to the paper
    expect(similar.first).not_to_have_class(SELECTED)
    page.keyboard.press("-")
    expect(thumbs(own)[1]).to_have_attribute("aria-pressed", "true")
    assert rating_of(follower, arxiv_id) == Rating.DOWN


def test_on_a_papers_page_tabbing_back_to_it_gives_it_the_keys_again(page, follower):
    """Shift+Tab from a similar paper to the paper's own Save button: S saved
    the similar paper, out of sight. And K before any J stays on the paper."""
    build_all()
    listed = SimilarPaper.objects.exclude(paper__saves__user=follower)
    arxiv_id = listed.values_list("paper__arxiv_id", flat=True).first()
    page.goto(f"/papers/{arxiv_id}/")
    similar = rows(page)
    own = page.locator("[data-page-paper] .actions")
    before = saved(follower)

    page.keyboard.press("k")
    expect(similar.first).not_to_have_class(SELECTED)
    page.keyboard.press("j")
    expect(similar.first).to_have_class(SELECTED)
    own.locator("form.toggle button").focus()
    page.keyboard.press("s")

    expect(similar.first).not_to_have_class(SELECTED)
    expect(own.locator("form.toggle button")).to_have_text("Saved")
    assert saved(follower) == before | {arxiv_id}


def saved(user) -> set[str]:
    return set(user.saved_papers.values_list("paper__arxiv_id", flat=True))


def test_a_tick_box_beside_a_row_gives_the_keys_to_that_row(page, follower):
    page.goto("/saved/")
    third = rows(page).nth(2)
    arxiv_id = third.get_attribute("data-paper")

    page.locator(".saved-row input[type=checkbox]").nth(2).focus()
    page.keyboard.press("+")

    expect(third).to_have_class(SELECTED)
    expect(thumbs(third)[0]).to_have_attribute("aria-pressed", "true")
    assert rating_of(follower, arxiv_id) == Rating.UP
    assert rating_of(follower, rows(page).nth(0).get_attribute("data-paper")) is None


def test_what_a_key_did_is_said_to_a_screen_reader(page, follower):
    """The button a key presses has no focus: its change was silent."""
    page.goto("/topics/rl-agents/")
    page.keyboard.press("j")
    second = rows(page).nth(1)
    title = second.locator(".paper-title").inner_text()
    status = page.locator("#status-message")
    was_saved = "Saved" in second.locator("form.toggle button").inner_text()

    page.keyboard.press("s")
    expect(status).to_have_text(
        f"{'No longer saved' if was_saved else 'Saved'}: {title}"
    )
    page.keyboard.press("+")
    expect(status).to_have_text(f"Thumbs up: {title}")
    expect(status).to_have_attribute("role", "status")


def test_s_pressed_again_while_the_save_is_on_its_way_is_not_lost(page, follower):
    """S, then S at once (save, then a change of mind): the second press was
    dropped while the first was on its way, and the paper stayed saved."""
    page.goto("/topics/rl-agents/")
    row = unsaved_row(page)
    title = row.locator(".paper-title").inner_text()
    held = []  # the first save, answered 0.6 s late
    page.route(
        "**/save/", lambda route: route.continue_() if held else held.append(route)
    )
    row.locator(".paper-title a").focus()

    page.keyboard.press("s")
    page.wait_for_timeout(100)
    page.keyboard.press("s")
    page.wait_for_timeout(500)
    held[0].continue_()

    expect(page.locator("#status-message")).to_have_text(f"No longer saved: {title}")
    expect(row.locator("form.toggle button")).to_have_text("Save")
    assert row.get_attribute("data-paper") not in saved(follower)


# A press whose answer never comes, or is not Momentum's


def test_a_save_that_cannot_reach_the_server_says_so_and_changes_nothing(
    page, follower
):
    """It fell back to the plain form post: the reader landed on the browser's
    own error page, away from the list."""
    page.goto("/topics/rl-agents/")
    row = unsaved_row(page)
    saved = follower.saved_papers.count()
    page.route("**/save/", lambda route: route.abort("internetdisconnected"))
    row.locator(".paper-title a").focus()

    page.keyboard.press("s")

    status = page.locator("#status-message")
    # Shown to everyone, not only said to a screen reader.
    expect(status).to_have_class("failure")
    expect(status).to_contain_text("could not be reached, nothing changed")
    expect(row.locator("form.toggle button")).to_have_text("Save")
    expect(page).to_have_url(re.compile(r"/topics/rl-agents/$"))
    assert follower.saved_papers.count() == saved
    # The same key tries again, once the server answers.
    page.unroute("**/save/")
    page.keyboard.press("s")
    expect(row.locator("form.toggle button")).to_have_text("Saved")
    expect(status).to_have_class("visually-hidden")
    assert follower.saved_papers.count() == saved + 1


def test_a_failure_tried_again_is_said_again_and_at_once(page, follower):
    """Offline, S twice on one paper set the same text twice: neither seen nor
    read out again, and said politely (role=status) where the pages' own
    errors are alerts."""
    page.goto("/topics/rl-agents/")
    row = unsaved_row(page)
    title = row.locator(".paper-title").inner_text()
    page.route("**/save/", lambda route: route.abort("internetdisconnected"))
    row.locator(".paper-title a").focus()
    status = page.locator("#status-message")

    page.keyboard.press("s")
    told = f"Momentum could not be reached, nothing changed; try again: {title}"
    expect(status).to_have_text(told)
    expect(status).to_have_attribute("role", "alert")
    page.keyboard.press("s")
    expect(status).to_have_text(f"Tried 2 times: {told}")
    page.keyboard.press("s")
    expect(status).to_have_text(f"Tried 3 times: {told}")
    expect(status).to_have_attribute("role", "alert")

    # Once it answers, what a press did is said politely again, and counted anew.
    page.unroute("**/save/")
    page.keyboard.press("s")
    expect(status).to_have_text(f"Saved: {title}")
    expect(status).to_have_attribute("role", "status")


@pytest.mark.parametrize("key", ["j", "Escape"])
def test_a_failures_message_goes_once_the_reader_moves_on_or_presses_esc(
    page, follower, key
):
    """It stayed for the rest of the visit, naming the old paper, over the
    bottom of every row J brought into view."""
    page.goto("/topics/rl-agents/")
    row = unsaved_row(page)
    page.route("**/save/", lambda route: route.abort("internetdisconnected"))
    row.locator(".paper-title a").focus()
    page.keyboard.press("s")
    status = page.locator("#status-message")
    expect(status).to_have_class("failure")

    page.keyboard.press(key)

    expect(status).to_have_class("visually-hidden")
    expect(status).not_to_have_class("failure")


@pytest.mark.parametrize("key", ["+", "s"])
def test_an_answer_that_is_not_momentums_is_shown_not_taken_for_done(
    page, follower, key
):
    """A Wi-Fi sign-in page answering the post turned the button "Saved" (or
    cleared the thumbs) for a change the server never got."""
    page.goto("/topics/rl-agents/")
    row = unsaved_row(page)
    saved = follower.saved_papers.count()
    portal = "<h1>Sign in to the train's Wi-Fi</h1>"
    page.route(
        re.compile(r"/(save|rate)/$"),
        lambda route: route.fulfill(status=200, content_type="text/html", body=portal),
    )
    row.locator(".paper-title a").focus()

    page.keyboard.press(key)

    expect(page.locator("h1")).to_have_text("Sign in to the train's Wi-Fi")
    assert follower.saved_papers.count() == saved
    assert not Rating.objects.exists()


def unsaved_row(page: Page):
    """The first row not saved, found again by its paper whatever it shows."""
    unsaved = rows(page).filter(has=page.get_by_role("button", name="Save", exact=True))
    arxiv_id = unsaved.first.get_attribute("data-paper")
    return page.locator(f'[data-paper-list] [data-paper="{arxiv_id}"]')


@pytest.fixture
def reader_page(new_page, follower, sign_in):
    """The follower's page, sending the feed's reports of rows seen."""
    page = new_page(seen_reports=True)
    sign_in(page, follower)
    return page


def test_the_feed_marks_seen_only_the_rows_that_were_on_screen(reader_page):
    page = reader_page
    page.set_viewport_size({"width": 1280, "height": 700})
    page.goto("/")
    on_screen = page.eval_on_selector_all(
        "[data-paper-list] [data-paper]",
        """rows => rows.filter(row => {
            const title = row.querySelector(".paper-title").getBoundingClientRect();
            return title.top >= 0 && title.bottom <= window.innerHeight;
        }).map(row => row.dataset.paper)""",
    )
    assert 0 < len(on_screen) < rows(page).count()

    # Read a moment (site.js: SEEN_AFTER_MS), then reported (SEEN_BATCH_MS).
    with page.expect_request_finished(lambda request: "/feed/seen/" in request.url):
        pass
    page.reload()

    seen = page.locator("[data-paper-list] .paper-row.seen")
    expect(seen).to_have_count(len(on_screen))
    assert [row.get_attribute("data-paper") for row in seen.all()] == on_screen


def test_rows_read_just_before_leaving_the_feed_are_kept_as_seen(reader_page, follower):
    page = reader_page
    page.goto("/")
    first = rows(page).nth(0).get_attribute("data-paper")
    page.wait_for_timeout(1500)  # on screen long enough; its batch not sent yet

    page.goto("/saved/")  # leaving sends it

    seen = ShownPaper.objects.filter(user=follower)
    for _ in range(50):
        if seen.exists():
            break
        time.sleep(0.1)
    assert first in set(seen.values_list("paper__arxiv_id", flat=True))


def seen_reports(page: Page) -> list[str]:
    """The arXiv ids each report of rows seen names, as the page sends them."""
    reports: list[str] = []

    def sent(request) -> None:
        if "/feed/seen/" in request.url:
            fields = re.findall(r'name="paper"\r\n\r\n([^\r]+)', request.post_data)
            reports.extend(fields)

    page.on("request", sent)
    return reports


def test_a_half_shown_title_and_a_tab_in_the_background_mark_nothing(reader_page):
    page = reader_page
    # The tab opens in the background (a link opened in a new tab).
    page.add_init_script(
        """window.hiddenTab = true;
        Object.defineProperty(document, "hidden", {get: () => window.hiddenTab});
        Object.defineProperty(document, "visibilityState",
            {get: () => window.hiddenTab ? "hidden" : "visible"});"""
    )
    reports = seen_reports(page)
    page.goto("/")
    # A window whose bottom cuts the fourth row's title in half.
    title = rows(page).nth(3).locator(".paper-title").bounding_box()
    page.set_viewport_size(
        {"width": 1280, "height": round(title["y"] + title["height"] / 2)}
    )
    page.reload()
    ids = [rows(page).nth(n).get_attribute("data-paper") for n in range(4)]
    page.wait_for_timeout(4500)  # SEEN_AFTER_MS and SEEN_BATCH_MS, and more
    assert reports == []

    page.evaluate(
        """() => { window.hiddenTab = false;
        document.dispatchEvent(new Event("visibilitychange")); }"""
    )
    with page.expect_request_finished(lambda request: "/feed/seen/" in request.url):
        pass

    assert sorted(reports) == sorted(ids[:3])  # the half-shown fourth is not


@pytest.mark.parametrize(
    ("keys", "expected"), [("+-", Rating.DOWN), ("++", None), ("+-+", Rating.UP)]
)
def test_thumbs_pressed_again_while_the_rating_is_on_its_way_are_not_lost(
    page, follower, keys, expected
):
    """+ then - at once (a change of mind): the second press was dropped while
    the first was on its way, and the paper kept the first rating."""
    page.goto("/topics/rl-agents/")
    row = rows(page).nth(1)
    arxiv_id = row.get_attribute("data-paper")
    held = []  # the first rating, answered 0.6 s late
    page.route(
        "**/rate/", lambda route: route.continue_() if held else held.append(route)
    )
    page.keyboard.press("j")

    for key in keys:
        page.keyboard.press(key)
        page.wait_for_timeout(100)
    page.wait_for_timeout(400)
    held[0].continue_()

    up, down = thumbs(row)
    expect(up).to_have_attribute("aria-pressed", str(expected == Rating.UP).lower())
    expect(down).to_have_attribute("aria-pressed", str(expected == Rating.DOWN).lower())
    told = {Rating.UP: "Thumbs up", Rating.DOWN: "Thumbs down", None: "Rating cleared"}
    title = row.locator(".paper-title").inner_text()
    expect(page.locator("#status-message")).to_have_text(f"{told[expected]}: {title}")
    assert rating_of(follower, arxiv_id) == expected
