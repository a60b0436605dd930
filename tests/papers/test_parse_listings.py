from __future__ import annotations

from collections import Counter
from datetime import date
from pathlib import Path

import pytest

from papers.ingest.listings import ListingPage
from papers.ingest.listings import parse_listing
from papers.ingest.records import AuthorRecord
from papers.ingest.records import PaperRecord
from papers.ingest.records import ParseError
from papers.ingest.records import Rejected

FIXTURES = Path(__file__).parents[1] / "fixtures" / "arxiv"
RSS = (
    FIXTURES
    / "listing_rss2_2024"
    / "emanuelealiverti-arxiv_rss_stat_2024-03-26.rss.xml"
)
TRUNCATED = (
    FIXTURES / "listing_atom_2024" / "zotero-arxiv-daily_cs.AI_2025-08-20.atom.xml"
)
WEEKEND = (
    FIXTURES / "listing_atom_2024" / "researcharr_cs_EMPTY_weekend_2025-11-23.atom.xml"
)


@pytest.fixture(scope="module")
def stat_listing() -> ListingPage:
    return parse_listing(RSS.read_bytes())


def by_id(page: ListingPage) -> dict[str, PaperRecord]:
    return {r.arxiv_id: r for r in page.records if isinstance(r, PaperRecord)}


def test_reads_every_item_of_an_rss_listing(stat_listing):
    assert len(stat_listing.records) == 123
    assert stat_listing.category == "stat"
    assert stat_listing.records[0].arxiv_id == "2403.15527"
    assert stat_listing.records[-1].arxiv_id == "2403.14050"


def test_keeps_the_announce_types(stat_listing):
    counts = Counter(r.announce_type for r in stat_listing.records)
    assert counts == {"replace": 41, "new": 35, "cross": 27, "replace-cross": 20}


def test_items_without_pubdate_use_the_channels_listing_day(stat_listing):
    # Early-2024 items carry no <pubDate>; the channel says Tue, 26 Mar 2024.
    assert stat_listing.announced == date(2024, 3, 26)
    assert {r.announced for r in stat_listing.records} == {date(2024, 3, 26)}


def test_reads_a_new_item_with_abstract_after_the_announce_line(stat_listing):
    paper = by_id(stat_listing)["2403.15527"]
    assert paper.version == 1
    assert paper.title == "Conformal online model aggregation"
    assert paper.abstract.startswith("Conformal prediction equips machine learning")
    assert "Announce Type" not in paper.abstract
    assert paper.authors == (
        AuthorRecord("Matteo Gasparin"),
        AuthorRecord("Aaditya Ramdas"),
    )
    assert paper.categories == ("stat.ML", "cs.LG")
    assert paper.primary_category == "stat.ML"
    assert paper.license == "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"
    # The feed does not say when a version was submitted.
    assert (paper.published, paper.updated) == (None, None)


def test_reads_replacements_with_their_version_doi_and_journal_ref(stat_listing):
    paper = by_id(stat_listing)["2304.04712"]
    assert (paper.announce_type, paper.version) == ("replace", 2)
    assert paper.doi == "10.1007/s00180-023-01445-2"
    assert paper.journal_ref == "Computational Statistics, 2024"
    # dc:creator holds LaTeX: "Eduardo Garc\'ia-Portugu\'es".
    assert paper.authors[2].name == "Eduardo García-Portugués"


def test_cross_lists_keep_their_own_primary_category(stat_listing):
    paper = by_id(stat_listing)["1902.05605"]
    assert (paper.announce_type, paper.version) == ("replace-cross", 4)
    assert paper.categories == ("cs.LG", "stat.ML")
    assert paper.primary_category == "cs.LG"


def test_keeps_latex_in_titles(stat_listing):
    paper = by_id(stat_listing)["2403.16665"]
    assert paper.title == (
        r"Adaptive Frequency Bin Interval in FFT via Dense Sampling Factor $\alpha$"
    )


def test_an_empty_weekend_feed_is_an_empty_page():
    page = parse_listing(WEEKEND.read_bytes())
    assert page == ListingPage(records=[], announced=date(2025, 11, 23), category="cs")


def test_raises_on_a_truncated_feed():
    with pytest.raises(ParseError, match="not well-formed"):
        parse_listing(TRUNCATED.read_bytes())


def test_reads_an_atom_listing_with_its_listing_day():
    # The complete part of the truncated cs.AI feed, closed again by hand.
    data = TRUNCATED.read_bytes()
    whole = data[: data.rindex(b"</entry>") + len(b"</entry>")] + b"</feed>"
    page = parse_listing(whole)
    assert page.category == "cs.AI"
    assert page.announced == date(2025, 8, 20)
    first = page.records[0]
    assert (first.arxiv_id, first.version, first.announce_type) == (
        "2508.13167",
        1,
        "new",
    )
    assert first.categories == ("cs.AI", "cs.CL")
    assert first.announced == date(2025, 8, 20)
    assert len(first.authors) == 30
    assert first.authors[0].name == "Weizhen Li"
    assert first.authors[-1].name == "Wangchunshu Zhou"
    assert first.license == "http://creativecommons.org/licenses/by-nc-sa/4.0/"


def test_rejects_an_item_without_an_id_and_keeps_the_rest():
    data = RSS.read_bytes().replace(
        b"<item>", b"<item><title>no id</title></item><item>", 1
    )
    page = parse_listing(data)
    assert page.records[0] == Rejected(entry="entry 1", reason="entry has no arXiv id")
    assert len(page.records) == 124
    assert page.records[1].arxiv_id == "2403.15527"


def test_benign_feedparser_warnings_do_not_fail_the_feed():
    # Declared UTF-8 but sent as Latin-1: feedparser falls back and says so.
    data = (
        b'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
        b"<title>stat</title><link>http://rss.arxiv.org/rss/stat</link>"
        b"<pubDate>Tue, 26 Mar 2024 00:00:00 -0400</pubDate><item>"
        b"<title>Caf\xe9 models</title><guid>oai:arXiv.org:2403.15527v1</guid>"
        b"</item></channel></rss>"
    )
    (paper,) = parse_listing(data).records
    assert paper.title == "Café models"


@pytest.mark.parametrize(
    "prolog",
    [
        b'<?xml version="1.0"?>',
        # A comment or a processing instruction holding a "<letter" ended the
        # look for a DTD early: its entities were expanded into titles.
        b'<?xml version="1.0"?><!-- <x -->',
        b'<?xml version="1.0"?><?style <a?>\n',
        # An encoding expat does not read, feedparser does.
        b'<?xml version="1.0" encoding="shift_jis"?>',
    ],
)
def test_refuses_a_feed_with_a_dtd(prolog):
    data = prolog + b'<!DOCTYPE rss [<!ENTITY x "y">]><rss version="2.0"/>'
    with pytest.raises(ParseError, match="DTD"):
        parse_listing(data)


@pytest.mark.parametrize("encoding", ["shift_jis", "x-bogus"])
def test_a_feed_in_an_encoding_the_dtd_check_cannot_read_is_still_parsed(encoding):
    """The check for a DTD reads the prolog with expat, which raised on these
    where feedparser reads them."""
    data = (
        f'<?xml version="1.0" encoding="{encoding}"?>'
        '<rss version="2.0"><channel><title>t</title><item>'
        "<title>Agents</title><link>https://arxiv.org/abs/2606.00001</link>"
        "<guid>oai:arXiv.org:2606.00001v1</guid><description>x</description>"
        "</item></channel></rss>"
    ).encode("ascii")

    (paper,) = parse_listing(data).records

    assert paper.title == "Agents"
