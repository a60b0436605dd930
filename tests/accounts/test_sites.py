"""The Sites record names this site, so no page, feed or mail names example.com."""

from __future__ import annotations

import re
from datetime import date

import pytest
from django.contrib.sites.models import Site
from django.core import mail
from django.core.signals import request_started

from accounts.sites import check_on_first_request
from accounts.sites import site_domain
from accounts.sites import sync_site
from tests.notifications.factories import add_papers
from tests.topics.factories import make_topic

pytestmark = pytest.mark.django_db

OTHER_SITE = "http://127.0.0.1:8151"


def test_migrations_name_the_site_from_the_settings(settings):
    site = Site.objects.get_current()

    assert site.domain == site_domain() == settings.MOMENTUM_SITE_URL.split("//")[1]
    assert site.name == "Momentum"


def test_sync_follows_a_changed_site_url_and_name(settings):
    settings.MOMENTUM_SITE_URL = OTHER_SITE
    settings.MOMENTUM_SITE_NAME = "Momentum Lab"

    assert sync_site() is True
    assert sync_site() is False
    site = Site.objects.get_current()
    assert (site.domain, site.name) == ("127.0.0.1:8151", "Momentum Lab")


def test_a_process_puts_a_stale_record_right_on_its_first_request(client, settings):
    Site.objects.filter(pk=settings.SITE_ID).update(
        domain="example.com", name="example.com"
    )
    request_started.connect(check_on_first_request)

    client.get("/healthz")

    assert Site.objects.get(pk=settings.SITE_ID).domain == site_domain()
    # Once per process: a later request reads nothing more.
    Site.objects.filter(pk=settings.SITE_ID).update(domain="example.com")
    client.get("/healthz")
    assert Site.objects.get(pk=settings.SITE_ID).domain == "example.com"


def test_atom_feed_links_name_the_site(client, settings):
    settings.MOMENTUM_SITE_URL = OTHER_SITE
    sync_site()
    topic = make_topic()
    add_papers(topic, date(2026, 7, 20), 3)

    feed = client.get(f"/topics/{topic.slug}/feed/").text

    links = re.findall(r'href="([^"]+)"', feed)
    assert len(links) >= 4
    assert all(link.startswith(f"{OTHER_SITE}/") for link in links)
    assert "example.com" not in feed


def test_signup_mail_names_momentum_not_example_com(client):
    client.post(
        "/accounts/signup/",
        {
            "email": "new@example.org",
            "password1": "correct horse battery",
            "password2": "correct horse battery",
        },
    )

    (message,) = mail.outbox
    assert message.subject.startswith("[Momentum] ")
    assert "Hello from Momentum!" in message.body
    assert "example.com" not in message.subject + message.body
