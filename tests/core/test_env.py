"""config.env's readers: an empty value is no value, and a malformed one fails
at start-up with ImproperlyConfigured naming its variable."""

from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import choice
from config.env import given
from config.env import integer
from config.env import log_level
from config.env import number
from config.env import rate


def test_an_empty_value_is_no_value(monkeypatch):
    monkeypatch.setenv("MOMENTUM_TEST", "")

    assert given("MOMENTUM_TEST", "the default") == "the default"
    assert integer("MOMENTUM_TEST", 7) == 7
    assert rate("MOMENTUM_TEST", "3/hour") == "3/hour"


@pytest.mark.parametrize(
    ("value", "read"),
    [
        ("60/minute", "60/minute"),
        ("60/min", "60/minute"),
        ("60/m", "60/minute"),
        ("1/second", "1/second"),
        ("30/hours", "30/hour"),
        (" 100/Day ", "100/day"),
    ],
)
def test_a_rate_is_read_in_the_words_every_limit_takes(monkeypatch, value, read):
    monkeypatch.setenv("MOMENTUM_TEST_RATE", value)

    assert rate("MOMENTUM_TEST_RATE", "1/hour") == read


@pytest.mark.parametrize(
    "value", ["60 per minute", "lots", "x", "60", "60/", "/hour", "0/hour", "5/10m"]
)
def test_a_malformed_rate_is_refused_by_name(monkeypatch, value):
    monkeypatch.setenv("MOMENTUM_TEST_RATE", value)

    with pytest.raises(ImproperlyConfigured, match="MOMENTUM_TEST_RATE must be"):
        rate("MOMENTUM_TEST_RATE", "1/hour")


def test_a_log_level_is_read_in_any_case(monkeypatch):
    monkeypatch.setenv("DJANGO_LOG_LEVEL", "debug")

    assert log_level("DJANGO_LOG_LEVEL", "INFO") == "DEBUG"

    monkeypatch.setenv("DJANGO_LOG_LEVEL", "loud")
    with pytest.raises(ImproperlyConfigured, match="DJANGO_LOG_LEVEL must be"):
        log_level("DJANGO_LOG_LEVEL", "INFO")


@pytest.mark.parametrize("value", ["abc", "1.5", "-1", ""])
def test_an_integer_is_whole_and_not_negative(monkeypatch, value):
    monkeypatch.setenv("MOMENTUM_TEST_DAYS", value)

    if value:
        with pytest.raises(ImproperlyConfigured, match="MOMENTUM_TEST_DAYS must be"):
            integer("MOMENTUM_TEST_DAYS", 180)
    else:
        assert integer("MOMENTUM_TEST_DAYS", 180) == 180


@pytest.mark.parametrize("value", ["fast", "nan", "inf", "-0.5"])
def test_a_number_is_finite_and_not_negative(monkeypatch, value):
    monkeypatch.setenv("MOMENTUM_TEST_SECONDS", value)

    with pytest.raises(ImproperlyConfigured, match="MOMENTUM_TEST_SECONDS must be"):
        number("MOMENTUM_TEST_SECONDS", 3.0)


def test_numbers_are_read(monkeypatch):
    monkeypatch.setenv("MOMENTUM_TEST_DAYS", "30")
    monkeypatch.setenv("MOMENTUM_TEST_SECONDS", "2.5")

    assert integer("MOMENTUM_TEST_DAYS", 180) == 30
    assert number("MOMENTUM_TEST_SECONDS", 3.0) == 2.5


def test_a_choice_is_read_in_any_case(monkeypatch):
    choices = ("mandatory", "optional", "none")
    monkeypatch.setenv("MOMENTUM_TEST_CHOICE", "Mandatory")

    assert choice("MOMENTUM_TEST_CHOICE", "none", choices) == "mandatory"

    monkeypatch.setenv("MOMENTUM_TEST_CHOICE", "sometimes")
    with pytest.raises(
        ImproperlyConfigured,
        match="MOMENTUM_TEST_CHOICE must be one of mandatory, optional, none",
    ):
        choice("MOMENTUM_TEST_CHOICE", "none", choices)
