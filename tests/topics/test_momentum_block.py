"""The momentum block of a topic page: the sentence, its formula, the chart with
its marks and its table; and the digest's momentum line."""

from __future__ import annotations

import re
from datetime import date

import pytest
from django.template.loader import render_to_string

from papers.ingest.upsert import upsert_records
from tests.clients import signed_in
from tests.topics.factories import announced_papers
from tests.topics.factories import make_topic
from topics.coverage import CHART_WEEKS
from topics.models import Follow
from topics.models import Topic
from topics.momentum import refresh_momentum
from topics.query import get_active_topic
from topics.query import with_figures
from topics.tagging import retag_all
from topics.templatetags.momentum import weeks_of

pytestmark = pytest.mark.django_db

AS_OF = date(2026, 7, 24)
MAY_30 = date(2026, 5, 30)  # the oldest week of the two windows
URL = "/topics/agents/"
MAX_PAGE_QUERIES = 10


def load(corpus: list[int], agents: list[int]):
    """All new papers and the topic's per week, for the last len(corpus) weeks."""
    topic = make_topic("Agents", rule="ti:agent", slug="agents")
    records = announced_papers(AS_OF, corpus, title="other", series=2)
    records += announced_papers(AS_OF, agents, title="agent")
    upsert_records(records)
    retag_all()
    refresh_momentum()
    return with_figures([get_active_topic(topic.slug)])[0].figures


@pytest.fixture
def falling():
    """The harvest's first week (May 30) a tenth of the rest; the topic's share
    falls while its count rises."""
    return load([20, *[200] * 3, *[300] * 4], [1, 20, 20, 20, 25, 25, 25, 25])


def test_the_sentence_states_the_change_of_the_share_over_complete_weeks(
    client, falling, django_assert_max_num_queries
):
    with django_assert_max_num_queries(MAX_PAGE_QUERIES):
        page = client.get(URL).text

    assert falling.recent > falling.previous
    # 60 of 660 papers before, 100 of 1,300 in the last four weeks.
    assert (falling.previous_share, falling.share) == pytest.approx((9.09, 7.69), 0.01)
    assert (
        "<strong>100 papers</strong> in the last four weeks, 7.69% of new papers, "
        "down 15% on the 9.09% of the four weeks before, a change chance alone "
        "could make at these numbers."
    ) in page
    assert "Not fully harvested, so left out: the week of May 30." in page


def test_the_formula_shows_the_real_numbers_on_hover_and_in_how_it_is_computed(
    client, falling
):
    page = client.get(URL).text

    formula = (
        "Last four weeks (Jun 27 \N{EN DASH} Jul 24, 4 of 4 weeks fully "
        "harvested): 100 ÷ 1,300 = 7.69%. Four weeks before (May 30 \N{EN DASH} "
        "Jun 26, 3 of 4): 60 ÷ 660 = 9.09%. "
        "Change = (7.69 \N{MINUS SIGN} 9.09) ÷ 9.09 = -15%. Chance: had the topic "
        "kept its share, about 106 of its 160 papers in both would fall in the "
        "last four weeks, give or take 6 (one standard deviation); 100 did, -1.02 "
        "standard deviations off, so the change is within the 2 that chance alone "
        "passes about one time in twenty."
    )
    assert re.search(r'class="momentum-line" title="[^"]*' + re.escape(formula), page)
    details = page[page.index("How this is computed") :]
    assert formula in details[: details.index("</details>")]


def test_partial_weeks_are_hatched_with_a_title_and_a_legend(client, falling):
    page = client.get(URL).text
    chart = page[page.index('<svg class="chart"') : page.index("</svg>")]

    partial = re.findall(r'<rect [^>]*class="partial"', chart)
    assert len(partial) == CHART_WEEKS - 7  # the harvest's first and all before
    assert (
        "Week of May 30: 1 paper of 21 new; not fully harvested, left out of the "
        "comparison</title>"
    ) in chart
    assert "Week of May 23: 0 papers of 0 new; not fully harvested</title>" in chart
    assert "Week of Jun 6: 20 papers of 220 new</title>" in chart
    assert "a week not fully harvested, left out of the comparison" in page


def test_the_chart_is_a_figure_whose_table_carries_the_week_links(client, falling):
    page = client.get(URL).text
    block = page[page.index('<section class="momentum"') :]
    block = block[: block.index("</section>")]

    assert 'role="img"' not in block
    assert '<svg class="chart"' in block
    assert 'aria-hidden="true" focusable="false"' in block
    # A figure's caption is its first or last child: the table comes after it.
    assert re.search(
        r"</figcaption>\s*</figure>\s*<details class=\"chart-table\">", block
    )
    bar_links = re.findall(r'<a href="[^"]*\?week=[^"]*" tabindex="-1">', block)
    assert len(bar_links) == CHART_WEEKS
    table = block[block.index("<table>") : block.index("</table>")]
    week_links = re.findall(r'<a href="/topics/agents/\?week=([\d-]+)">', table)
    assert len(week_links) == CHART_WEEKS
    assert week_links[-8] == "2026-05-30"
    assert "no, left out" in table


def test_a_week_link_lists_that_weeks_papers(client, falling):
    page = client.get(URL, {"week": "2026-05-30"})

    assert page.context["page"].paginator.count == 1


def test_without_two_complete_weeks_before_there_is_not_enough_history(client):
    figures = load([20, 30, 40, 300, 300, 300, 300, 300], [2, 3, 4, *[30] * 5])

    page = client.get(URL).text

    assert figures.previous_window.weeks == 1
    assert (
        "<strong>120 papers</strong> in the last four weeks; not enough fully "
        "harvested weeks yet to compare with the four weeks before."
    ) in page
    assert "each window needs 2 fully harvested weeks" in page


def test_papers_before_only_in_weeks_left_out_are_not_said_to_be_none(client):
    """The four weeks before hold 5 of the topic's papers, all in the weeks
    left out (May 30, Jun 6): its chart shows them, so "none" was untrue."""
    figures = load([20, 20, *[300] * 6], [3, 2, 0, 0, 4, 4, 4, 4])

    page = client.get(URL).text

    assert (figures.direction, figures.previous) == ("new", 5)
    assert (
        "<strong>16 papers</strong> in the last four weeks, 1.32% of new papers; "
        "none in the fully harvested weeks of the four before. Not fully "
        "harvested, so left out: the weeks of May 30 and Jun 6."
    ) in page
    assert "No change is given: the topic had no papers in the fully" in page


def test_the_digest_line_is_the_same_sentence_as_text(falling):
    line = render_to_string("emails/momentum_line.txt", {"momentum": falling})

    assert line == (
        "100 papers in the last four weeks, 7.69% of new papers, down 15% on the "
        "9.09% of the four weeks before, a change chance alone could make at these "
        "numbers. As of Jul 24."
    )


def test_a_digest_names_the_weeks_left_out_once_not_in_every_section(falling, alice):
    """The weeks are the corpus's, the same for every topic: a digest of 34
    topics said the same sentence 34 times."""
    Follow.objects.create(user=alice, topic=Topic.objects.get())

    page = signed_in(alice).get("/digest/preview/").text

    assert "As of Jul 24." in page  # the section's line
    assert page.count("the week of May 30") == 1
    assert (
        "How fast each topic grows leaves out the weeks not fully harvested: "
        "the week of May 30."
    ) in page


def test_weeks_left_out_are_named_in_a_list():
    days = [date(2026, 5, 23), date(2026, 5, 30), date(2026, 6, 6)]

    assert weeks_of(days) == "the weeks of May 23, May 30 and Jun 6"
    assert weeks_of(days[:1]) == "the week of May 23"
    assert weeks_of([]) == ""


def test_a_topic_lists_sparkline_says_its_shape_in_words(client, falling):
    """Every sparkline was "Papers per week over 16 weeks": the same words
    for a topic rising and one falling."""
    page = client.get("/topics/").text

    [label] = re.findall(r'class="sparkline"[^>]*aria-label="([^"]*)"', page)
    assert label.startswith(
        "Papers per week over 16 weeks: 0 in the first, 25 in the latest, 25 at most"
    )
