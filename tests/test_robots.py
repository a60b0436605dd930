"""robots.txt: crawlers find topics and papers, and the sitemap, and leave
searches, accounts, readers' own pages, Ask and the API alone."""

from __future__ import annotations

from urllib.robotparser import RobotFileParser

import pytest


@pytest.fixture
def robots(client):
    response = client.get("/robots.txt")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain"
    rules = RobotFileParser()
    rules.parse(response.text.splitlines())
    return rules, response.text


@pytest.mark.parametrize(
    "path", ["/", "/topics/", "/topics/agentic-rl/", "/papers/2606.00001/"]
)
def test_topics_and_papers_may_be_crawled(robots, path):
    rules, _ = robots

    assert rules.can_fetch("AnyBot", path)


@pytest.mark.parametrize(
    "path",
    [
        "/search/?q=agents",
        "/accounts/login/?next=/saved/",
        "/saved/",
        "/settings/",
        "/feed/key.atom",
        "/digest/preview/",
        "/admin/",
        "/api/v1/papers/",
    ],
)
def test_searches_accounts_own_pages_and_the_api_may_not(robots, path):
    rules, _ = robots

    assert not rules.can_fetch("AnyBot", path)


def test_ask_is_left_alone_by_pattern(robots):
    # RFC 9309's `*`, which the standard library's parser reads literally.
    _, text = robots

    assert "Disallow: /topics/*/ask/" in text.splitlines()
    assert "Disallow: /papers/*/ask/" in text.splitlines()


def test_the_sitemap_is_named_on_the_sites_address(client, settings):
    # Not the test client's host (testserver): MOMENTUM_SITE_URL's.
    settings.MOMENTUM_SITE_URL = "https://momentum.example.org"
    response = client.get("/robots.txt")
    rules = RobotFileParser()
    rules.parse(response.text.splitlines())

    assert rules.site_maps() == ["https://momentum.example.org/sitemap.xml"]
    assert rules.can_fetch("AnyBot", "/sitemap-papers.xml?p=2")
