"""A shared link's tracking parameters (utm_source, fbclid, ...) are not part of
the page: each would render and cache a copy of its own, and pagination
links would carry them on."""

from __future__ import annotations

import pytest
from django.http import HttpResponse
from django.test import Client
from django.test import RequestFactory

from core.tracking import without_tracking

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("address", "kept"),
    [
        ("/topics/?utm_source=slack&utm_medium=chat", "/topics/"),
        ("/search/?q=agents&fbclid=IwAR0x&page=2", "/search/?q=agents&page=2"),
        ("/?gclid=abc&mc_cid=1&mc_eid=2", "/"),
        ("/authors/%C3%A9/?utm_campaign=x", "/authors/%C3%A9/"),
        # In capitals as some campaign tools write them, and Google's and
        # social networks' own.
        ("/topics/?UTM_SOURCE=x&Utm_Campaign=y", "/topics/"),
        ("/topics/?_gl=1*abc&srsltid=AfmB&ttclid=1&twclid=2&li_fat_id=3", "/topics/"),
        ("/topics/?mkt_tok=x&page=2", "/topics/?page=2"),
        # Never to another host: "//evil.example/" would be one.
        ("/%2Fevil.example/?utm_source=x", "/%2Fevil.example/"),
    ],
)
def test_a_link_with_tracking_parameters_goes_to_the_page_without_them(address, kept):
    response = Client().get(address)

    assert response.status_code == 301
    assert response["Location"] == kept


def test_other_parameters_and_other_methods_are_left_as_they_are():
    client = Client()

    assert client.get("/search/?q=utm_source").status_code == 200
    assert client.post("/topics/?utm_source=x").status_code != 301


def test_a_path_of_two_leading_slashes_is_not_sent_to_another_host():
    request = RequestFactory().get("/", {"utm_source": "x"})
    request.path = request.path_info = "//evil.example/"

    response = without_tracking(lambda request: HttpResponse())(request)

    assert response["Location"] == "/%2Fevil.example/"
