"""Playwright driving Debian's Chromium (never a downloaded browser) against the
live test server."""

from __future__ import annotations

import os
import shutil

import pytest
from django.conf import settings

from papers.library import set_saved
from papers.models import Paper
from tests.clients import signed_in
from topics.models import Follow

CHROMIUM = "/usr/bin/chromium"
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="session")
def browser():
    if not shutil.which(CHROMIUM):
        message = f"{CHROMIUM} is missing: `make test` installs it (bin/ensure-browser)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the test's own
    # database calls are still plain synchronous ones.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox"]
        )
        yield browser
        browser.close()


@pytest.fixture(autouse=True)
def site_is_the_live_server(settings, live_server):
    """Mails name the site (MOMENTUM_SITE_URL), as deployed: here, the live
    server, whose links a test follows."""
    settings.MOMENTUM_SITE_URL = live_server.url


# The feed reports the rows a reader had on screen with navigator.sendBeacon
# (site.js), which a page also sends as it closes: after its test, to a live
# server whose test database is gone by then. Pages send none unless asked.
NO_BEACONS = "navigator.sendBeacon = () => true;"


@pytest.fixture
def new_page(browser, live_server):
    """Open a page in a browser context of its own on the live server, with
    Playwright's context options (viewport, java_script_enabled, color_scheme)
    and, with `seen_reports`, the feed's reports of rows seen sent; every
    context is closed after the test."""
    contexts = []

    def new_page(*, seen_reports: bool = False, **options):
        context = browser.new_context(base_url=live_server.url, **options)
        if not seen_reports:
            context.add_init_script(NO_BEACONS)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(10_000)
        return page

    yield new_page
    for context in contexts:
        for page in context.pages:
            if not page.is_closed():
                page.evaluate(NO_BEACONS)  # none as it closes
        context.close()


@pytest.fixture
def page(new_page):
    return new_page()


@pytest.fixture
def page_without_js(new_page):
    return new_page(java_script_enabled=False)


@pytest.fixture
def sign_in(live_server):
    """Sign a user in to a page's browser context, through a session made by the
    test client (the login form has its own test in test_journey)."""

    def sign_in(page, user) -> None:
        client = signed_in(user)
        cookie = client.cookies[settings.SESSION_COOKIE_NAME]
        page.context.add_cookies(
            [{"name": cookie.key, "value": cookie.value, "url": live_server.url}]
        )

    return sign_in


@pytest.fixture
def phone(new_page):
    """A page 390 px wide, as on a phone."""
    return new_page(viewport=PHONE)


@pytest.fixture
def touch_phone(new_page):
    """A phone as its reader holds it: 390 px wide, a touch screen and no
    keyboard (is_mobile: laid out as a phone's browser does, with a coarse
    pointer that cannot hover)."""
    return new_page(viewport=PHONE, has_touch=True, is_mobile=True)


@pytest.fixture
def follower(alice, topic):
    """alice, following the module's topic, with its first three papers (by
    arXiv id) saved."""
    Follow.objects.create(user=alice, topic=topic)
    for paper in Paper.objects.order_by("arxiv_id")[:3]:
        set_saved(alice, paper, True)
    return alice
