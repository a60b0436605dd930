from __future__ import annotations

import re
from collections.abc import Iterator
from html import escape
from typing import Any

from django import forms
from django.forms.utils import flatatt
from django.forms.widgets import Input
from django.utils.choices import BaseChoiceIterator
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString
from django.utils.safestring import mark_safe

from papers.models import Category
from papers.models import Paper
from papers.search import MAX_QUERY_LENGTH

CATEGORY_CODE = re.compile(r"^[a-z-]+(\.[a-z-]+)?$", re.IGNORECASE)
DATE_MESSAGE = "Enter the date as YYYY-MM-DD."
# The active topics' (slug, name), kept in this process with the version of
# topics' names (papers.versions.NAMES) it was read under: every change to a
# topic's name, slug or activity moves it.
_topics: tuple[int, list[tuple[str, str]]] | None = None


def topic_choices(names_version: int | None) -> list[tuple[str, str]]:
    """The active topics as (slug, name), by name; read again when the names'
    version moved or is unknown (the cache down)."""
    global _topics
    kept = _topics
    if kept is not None and names_version is not None and kept[0] == names_version:
        return kept[1]
    # Topics come from the topics app, which builds on this one: reached
    # through the relation, not imported.
    topic_model = Paper._meta.get_field("topics").related_model
    active = topic_model._default_manager.filter(is_active=True).order_by("name")
    choices = list(active.values_list("slug", "name"))
    if names_version is not None:
        _topics = (names_version, choices)
    return choices


def renamed_topic(slug: str) -> str | None:
    """The active topic's slug now, for a former one of it (renamed, or merged
    into it: topics.TopicAlias), so that links made before, an old digest's
    searches among them, keep working."""
    topic_model = Paper._meta.get_field("topics").related_model
    topics = topic_model._default_manager.filter(is_active=True, aliases__slug=slug)
    return topics.values_list("slug", flat=True).first()


class WrittenInput(Input):
    """An input written in Python as Django's input.html and attrs.html write
    it (the attributes in their order, each escaped alike): through those two
    templates, the search form's four inputs were a twentieth of the CPU time
    of a search."""

    def render(
        self,
        name: str,
        value: Any,
        attrs: dict[str, Any] | None = None,
        renderer: Any = None,
    ) -> SafeString:
        widget = self.get_context(name, value, attrs)["widget"]
        html = [
            f'<input type="{conditional_escape(widget["type"])}" '
            f'name="{conditional_escape(widget["name"])}"'
        ]
        if widget["value"] is not None:
            html.append(f' value="{conditional_escape(widget["value"])}"')
        for attr, attr_value in widget["attrs"].items():
            if attr_value is not False:
                html.append(f" {conditional_escape(attr)}")
                if attr_value is not True:
                    html.append(f'="{conditional_escape(attr_value)}"')
        html.append(">")
        return mark_safe("".join(html))


class TextInput(WrittenInput, forms.TextInput):
    pass


class DateInput(WrittenInput, forms.DateInput):
    pass


def date_field(label: str) -> forms.DateField:
    return forms.DateField(
        label=label,
        required=False,
        input_formats=["%Y-%m-%d"],
        widget=DateInput(attrs={"type": "date"}, format="%Y-%m-%d"),
        error_messages={"invalid": f"{label}: {DATE_MESSAGE}"},
    )


class ListSelect(forms.Select):
    """A select whose options are written in Python: Django renders each option
    through two templates, which for hundreds of topics was most of the CPU time
    of a search page; format_html per option was still a tenth of it, so they
    are escaped as plain strings (html.escape is what Django's escape calls)."""

    def render(
        self,
        name: str,
        value: Any,
        attrs: dict[str, Any] | None = None,
        renderer: Any = None,
    ) -> SafeString:
        chosen = set(self.format_value(value))
        options = "".join(
            f'<option value="{escape(str(option))}"'
            f"{' selected' if str(option) in chosen else ''}>{escape(str(label))}"
            "</option>"
            for option, label in self.choices
        )
        return mark_safe(
            f'<select name="{escape(name)}"'
            f"{flatatt(self.build_attrs(self.attrs, attrs))}>{options}</select>"
        )


class Normalized(BaseChoiceIterator):
    """Choices already (value, label) strings: a field and its widget take
    them as they are, where Django would normalise hundreds of topics again
    for each form (a tenth of a search's CPU time)."""

    def __init__(self, choices: list[tuple[str, str]]) -> None:
        self.choices = choices

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self.choices)


class SearchForm(forms.Form):
    """The search page's GET parameters: q, topic, category, from and to."""

    q = forms.CharField(
        label="Search",
        required=False,
        max_length=MAX_QUERY_LENGTH,
        widget=TextInput(attrs={"type": "search", "placeholder": "Search papers"}),
        error_messages={
            "max_length": "Search text is limited to %(limit_value)d characters "
            "(it has %(show_value)d)."
        },
    )
    topic = forms.ChoiceField(
        required=False,
        widget=ListSelect,
        error_messages={"invalid_choice": "There is no topic “%(value)s”."},
    )
    category = forms.CharField(
        required=False,
        max_length=32,
        widget=TextInput(attrs={"placeholder": "e.g. cs.LG"}),
    )

    def __init__(self, *args: Any, names_version: int | None = None, **kwargs: Any):
        """`names_version`: the topics' names' version the page is rendered
        under, which lets the topics be read once for all its renders."""
        super().__init__(*args, **kwargs)
        self.fields["topic"].choices = Normalized(  # type: ignore[attr-defined]
            [("", "Any topic"), *topic_choices(names_version)]
        )
        # "from" is a Python keyword, so these two cannot be class attributes.
        self.fields["from"] = date_field("From")
        self.fields["to"] = date_field("To")

    def clean_category(self) -> str:
        code = self.cleaned_data["category"]
        if not code:
            return ""
        stored = None
        if CATEGORY_CODE.match(code):
            stored = (
                Category.objects.filter(code__iexact=code)
                .values_list("code", flat=True)
                .first()
            )
        if stored is None:
            raise forms.ValidationError(
                "There is no arXiv category “%(code)s”; write it like cs.LG.",
                params={"code": code},
            )
        return stored

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        assert cleaned is not None  # Form.clean returns cleaned_data
        start, end = cleaned.get("from"), cleaned.get("to")
        if start and end and start > end:
            self.add_error("to", "The “to” date is before the “from” date.")
        return cleaned

    def filters(self) -> dict[str, Any]:
        """Keyword arguments for papers.search.search_papers, from valid data."""
        return {
            "topic": self.cleaned_data["topic"] or None,
            "category": self.cleaned_data["category"] or None,
            "date_from": self.cleaned_data["from"],
            "date_to": self.cleaned_data["to"],
        }

    def has_criteria(self) -> bool:
        """Whether there is anything to search for: text or at least one filter."""
        return bool(self.cleaned_data["q"]) or any(self.filters().values())
