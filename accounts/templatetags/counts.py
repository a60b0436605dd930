"""Counts in words, for pages that list what a reader has."""

from __future__ import annotations

from django import template
from django.contrib.humanize.templatetags.humanize import intcomma

register = template.Library()


@register.filter
def counted(count: int, nouns: str) -> str:
    """`count` with its noun: 1|counted:"paper" is "1 paper", 0 is "no papers",
    3|counted:"search,searches" is "3 searches"."""
    singular, _, plural = nouns.partition(",")
    noun = singular if count == 1 else plural or f"{singular}s"
    return f"{intcomma(count) if count else 'no'} {noun}"
