"""A topic's own text on its page (summary, introduction, definition, rule): a
page value (papers.pagecache.PageValue) under the topic's version, so that an
edit of the text renders no page, only this; and rendered by the edit itself
once it commits, so that the next reader finds it rendered."""

from __future__ import annotations

from collections.abc import Callable

from django.template.loader import render_to_string

from papers.pagecache import PageValue
from papers.pagecache import store_value
from papers.versions import topic_key
from topics.models import Topic

# The parts of a topic page that are the topic's own text (topics/topic_text.html).
TOPIC_TEXT = ("summary", "intro", "definition", "rule")


def topic_text(slug: str, topic: Callable[[], Topic]) -> PageValue:
    """The text of the topic at `slug`; `topic` reads it, when it must be rendered."""
    return PageValue(
        f"topic-text:{slug}",
        topic_key(slug),
        lambda: {
            part: render_to_string(
                "topics/topic_text.html", {"topic": topic(), "part": part}
            ).strip()
            for part in TOPIC_TEXT
        },
    )


def topic_text_changed(slug: str) -> None:
    """Render the topic's text anew under its version (after the edit's commit)."""
    topic = Topic.objects.filter(slug=slug, is_active=True).first()
    if topic is not None:
        store_value(topic_text(slug, lambda: topic))
