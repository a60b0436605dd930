"""Playwright driving Debian's Chromium (never a downloaded browser) against the
live test server."""

from __future__ import annotations

import os
import shutil

import pytest
from django.conf import settings
from django.test import Client

CHROMIUM = "/usr/bin/chromium"


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


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(base_url=live_server.url)
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


@pytest.fixture
def page_without_js(browser, live_server):
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


@pytest.fixture
def sign_in(live_server):
    """Sign a user in to a page's browser context, through a session made by the
    test client (the login form has its own test in test_journey)."""

    def sign_in(page, user) -> None:
        client = Client()
        client.force_login(user)
        cookie = client.cookies[settings.SESSION_COOKIE_NAME]
        page.context.add_cookies(
            [{"name": cookie.key, "value": cookie.value, "url": live_server.url}]
        )

    return sign_in


@pytest.fixture
def phone(browser, live_server):
    """A page 390 px wide, as on a phone."""
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": 390, "height": 844}
    )
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()
