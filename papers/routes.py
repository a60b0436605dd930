"""Addresses of the routes every row links to, reversed once per process.

`reverse()` walks the URL patterns on every call; a list of 25 papers calls it
for each paper and each topic chip. These routes take one plain argument (an
arXiv id or a slug, whose characters need no quoting), so their address is
reversed once with a stand-in and formatted after.
"""

from __future__ import annotations

import functools

from django.urls import reverse

STAND_IN = "x0standin0x"
# For routes that take a number (an author's id): no address holds this one.
NUMBER_STAND_IN = 4242424242424242


@functools.cache
def _pattern(route: str, param: str) -> str:
    return reverse(route, kwargs={param: STAND_IN}).replace(STAND_IN, "{}")


def address(route: str, param: str, value: str) -> str:
    """reverse(route, kwargs={param: value}) for a value of letters, digits,
    `.`, `-`, `_` and `/` (arXiv ids and slugs)."""
    return _pattern(route, param).format(value)


@functools.cache
def _number_pattern(route: str, param: str) -> str:
    stand_in = str(NUMBER_STAND_IN)
    return reverse(route, kwargs={param: NUMBER_STAND_IN}).replace(stand_in, "{}")


def author_address(author_id: int, action: str = "") -> str:
    """The address of an author's page (or of `action` on it, e.g. "follow")."""
    route = f"author_{action}" if action else "author"
    return _number_pattern(route, "author_id").format(int(author_id))
