"""Atom feeds, for feed readers: a topic's latest papers, and a reader's own
feed (the new papers of the topics and authors they follow and of their saved
searches) at a secret address."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime
from datetime import time
from functools import wraps
from typing import Any
from urllib.parse import urlsplit
from xml.sax.xmlreader import AttributesImpl

from django.conf import settings
from django.contrib.syndication.views import Feed
from django.db.models import QuerySet
from django.http import Http404
from django.http import HttpRequest
from django.http import HttpResponse
from django.template.defaultfilters import pluralize
from django.utils.feedgenerator import Atom1Feed
from django.utils.html import escape
from django.utils.xmlutils import SimplerXMLGenerator
from django.views.decorators.http import conditional_page

from accounts.feed_tokens import feed_reader
from accounts.sites import site_url
from core.text import shown
from papers.bibtex import author_list
from papers.ingest.schedule import ARXIV_TZ
from papers.latex import latex_to_text
from papers.links import linked
from papers.models import Paper
from papers.pagecache import cached_fragments
from papers.query import AUTHORS_BEFORE_FOLD
from topics.models import Topic
from topics.query import get_active_topic
from topics.reader_feed import Following
from topics.reader_feed import by_followed_authors
from topics.reader_feed import by_saved_searches
from topics.reader_feed import cached_following
from topics.reader_feed import feed_scopes
from topics.reader_feed import newest_feed_papers

FEED_ITEMS = 50
ATOM_CONTENT_TYPE = "application/atom+xml; charset=utf-8"
# What an entry shows of a paper.
ENTRY_FIELDS = (
    "arxiv_id",
    "title",
    "abstract",
    "author_names",
    "published",
    "updated",
    "first_announced",
    "created_at",
    "withdrawn",
)
# Stands for the feed's own (secret) address in the shared render, so that one
# reader's key never reaches another who follows the same topics.
OWN_ADDRESS = "urn:momentum:own-address"


def answers_polls(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A feed reader's poll gets a 304 when the feed is the one it holds (the
    ETag of its body), not the whole feed again. Without Last-Modified, which
    Django's feeds take from the newest entry: a paper leaving the topic or a
    new name changes the feed but not that date."""

    @wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> HttpResponse:
        response = view(*args, **kwargs)
        if response.has_header("Last-Modified"):
            del response["Last-Modified"]
        return response

    return conditional_page(wrapped)


class ShownXMLGenerator(SimplerXMLGenerator):
    """XML without the control characters XML 1.0 forbids (core.text.shown):
    text stored before a release refused them (a topic's description, a saved
    search's name, an author's name as ingest kept it) would make the feed a
    500 or a document no feed reader parses."""

    def characters(self, content: str) -> None:
        super().characters(shown(content))

    def startElement(self, name: str, attrs: Any) -> None:
        values = {key: shown(value) for key, value in (attrs or {}).items()}
        super().startElement(name, AttributesImpl(values))


class PaperAtomFeed(Atom1Feed):
    """Atom whose entries name each of a paper's authors in an <author> of
    their own, as Atom means them (Django's feeds write one, whose name would
    be the whole author line)."""

    def write(self, outfile: Any, encoding: str) -> None:
        # Atom1Feed.write, with the generator that leaves control characters out.
        handler = ShownXMLGenerator(outfile, encoding, short_empty_elements=True)
        handler.startDocument()
        handler.startElement("feed", self.root_attributes())
        self.add_root_elements(handler)
        self.write_items(handler)
        handler.endElement("feed")

    def add_item_elements(
        self, handler: SimplerXMLGenerator, item: dict[str, Any]
    ) -> None:
        super().add_item_elements(handler, item)
        for name in item["authors"][:AUTHORS_BEFORE_FOLD]:
            handler.startElement("author", AttributesImpl({}))
            handler.addQuickElement("name", name)
            handler.endElement("author")


class TopicFeed(Feed):
    """The topic's latest papers as Atom, for feed readers."""

    feed_type = PaperAtomFeed

    def get_object(self, request: HttpRequest, slug: str) -> Topic:
        return get_active_topic(slug)

    def title(self, topic: Topic) -> str:
        return f"{topic.name} · Momentum"

    def subtitle(self, topic: Topic) -> str:
        return topic.description

    def link(self, topic: Topic) -> str:
        return topic.get_absolute_url()

    def feed_guid(self, topic: Topic) -> str:
        return topic_feed_id(topic)

    def items(self, topic: Topic) -> QuerySet[Paper]:
        return (
            Paper.objects.filter(paper_topics__topic=topic)
            .order_by("-first_announced", "-id")
            .only(*ENTRY_FIELDS)[:FEED_ITEMS]
        )

    def item_title(self, paper: Paper) -> str:
        return entry_title(paper)

    def item_description(self, paper: Paper) -> str:
        return summary(paper)

    def item_extra_kwargs(self, paper: Paper) -> dict:
        return {"authors": author_list(paper)}

    def item_pubdate(self, paper: Paper):
        return paper.published

    def item_updateddate(self, paper: Paper):
        return entry_updated(paper)


@answers_polls
def reader_feed(request: HttpRequest, key: str) -> HttpResponse:
    """The reader's feed as Atom at their secret address (accounts.feed_tokens),
    without a session. A key never made, rotated away or revoked is the same 404.
    The Atom is rendered once for everyone who follows the same topics and
    cached under those topics' versions; only the feed's own address is filled
    in per request."""
    user_id = feed_reader(key)
    if user_id is None:
        raise Http404("No such feed.")
    followed = cached_following(user_id)
    # Its links name the site: a render for another site address is not read.
    shared = f"{settings.MOMENTUM_SITE_URL} {followed.variant}"
    item = "atom:followed:" + hashlib.sha256(shared.encode()).hexdigest()
    atom = cached_fragments(
        {item: tuple(feed_scopes(followed))},
        lambda missing: {item: _reader_atom(followed)},
    )[item]
    own = escape(site_url(request.path))
    response = HttpResponse(atom.replace(OWN_ADDRESS, own), ATOM_CONTENT_TYPE)
    # The address is a credential: no shared cache keeps it, no search engine.
    response["Cache-Control"] = "private"
    response["X-Robots-Tag"] = "noindex"
    return response


def _reader_atom(followed: Following) -> str:
    topics = ", ".join(
        Topic.objects.filter(pk__in=[pk for pk, _ in followed.topics])
        .order_by("name")
        .values_list("name", flat=True)
    )
    authors = ", ".join(name for _, name in followed.authors)
    search_names = ", ".join(f'"{name}"' for _, name, _ in followed.searches)
    search_word = "search" + pluralize(len(followed.searches), "es")
    sources = [
        *([f"in {topics}"] if topics else []),
        *([f"by {authors}"] if authors else []),
        *([f"matching your {search_word} {search_names}"] if search_names else []),
    ]
    site = settings.MOMENTUM_SITE_NAME
    about = (
        f"New papers {'; '.join(sources)}"
        if sources
        else f"You follow no topics yet: choose some at {site_url('/topics/')}"
    )
    feed = PaperAtomFeed(
        title=f"Your feed · {site}",
        link=site_url("/"),
        description=about,
        subtitle=about,
        feed_url=OWN_ADDRESS,
        # Its own address names it: readers' feeds are told apart by their id.
        feed_guid=OWN_ADDRESS,
        language=settings.LANGUAGE_CODE,  # as Django's Feed gives the topic feed
    )
    shown, _ = (
        newest_feed_papers(followed, FEED_ITEMS) if followed.anything else ([], False)
    )
    by_id = Paper.objects.only(*ENTRY_FIELDS).in_bulk([pk for pk, _ in shown])
    papers = [by_id[pk] for pk, _ in shown if pk in by_id]
    searches = by_saved_searches(followed, [paper.pk for paper in papers])
    written_by = by_followed_authors(followed, [paper.pk for paper in papers])
    for paper in papers:
        link = site_url(paper.get_absolute_url())
        feed.add_item(
            title=entry_title(paper),
            link=link,
            unique_id=link,
            description=summary(paper),
            authors=author_list(paper),
            pubdate=paper.published,
            updateddate=entry_updated(paper),
            # Why it is here, when a saved search or a followed author brought
            # it, as the home feed's rows say.
            categories=[
                *(
                    f'Matches your search "{name}"'
                    for name in searches.get(paper.pk, ())
                ),
                *(
                    f"By {name}, whom you follow"
                    for _, name in written_by.get(paper.pk, ())
                ),
            ],
        )
    return feed.writeString("utf-8")


def topic_feed_id(topic: Topic) -> str:
    """The topic feed's <id>, which Atom wants permanent: a tag URI (RFC 4151)
    of the topic's key, not its address, which a new slug moves. (Entries' ids
    are the papers' addresses, which no rename moves.)"""
    host = urlsplit(settings.MOMENTUM_SITE_URL).hostname
    return f"tag:{host},{topic.created_at:%Y-%m-%d}:topic:{topic.pk}"


def entry_title(paper: Paper) -> str:
    """An entry's title: the paper's TeX read as text, "(withdrawn)" after a
    withdrawn paper's, as the digest says it (its row on the site has a badge)."""
    title = latex_to_text(paper.title)
    return f"{title} (withdrawn)" if paper.withdrawn else title


def entry_updated(paper: Paper) -> datetime:
    """An entry's <updated>, which Atom requires: when the paper's current
    version was submitted; for a paper read only from a daily listing, which
    names no submission time, its listing's stamp (midnight in New York on its
    announcement day), not none, which a feed reader fills in with the time it
    fetched the feed; for one first read there as a replacement, which names
    no day either, when it was stored."""
    if paper.updated is not None:
        return paper.updated
    if paper.first_announced is not None:
        return datetime.combine(paper.first_announced, time(), tzinfo=ARXIV_TZ)
    return paper.created_at


def summary(paper: Paper) -> str:
    """An entry's summary, which Atom marks as HTML: the abstract's TeX read as
    text, escaped, its web addresses linked (as on the paper's page); then the
    count of the authors the entry does not name."""
    text: str = linked(latex_to_text(paper.abstract))
    unnamed = len(author_list(paper)) - AUTHORS_BEFORE_FOLD
    if unnamed > 0:
        text += f"<p>And {unnamed:,} more authors, named on the paper's page.</p>"
    return text
