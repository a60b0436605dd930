from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable
from datetime import date
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.paginator import Paginator
from django.db.models import OuterRef
from django.db.models import QuerySet
from django.db.models import Subquery
from django.http import Http404
from django.http import HttpRequest
from django.http import HttpResponse
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import SafeString
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from accounts.backends import session_user_id
from accounts.requests import signed_in
from accounts.toggles import asks_on
from accounts.toggles import safe_next
from accounts.toggles import toggle
from core.text import shown
from papers.models import Paper
from papers.pagecache import FilledCopy
from papers.pagecache import PageValue
from papers.pagecache import Rendered
from papers.pagecache import cached_fragments
from papers.pagecache import cached_page
from papers.pagecache import render_shared
from papers.query import get_paper_row
from papers.routes import author_address
from papers.rows import paper_rows
from papers.slots import page_response
from papers.versions import LATEST
from papers.versions import NAMES
from papers.versions import SEARCH
from papers.versions import TOPICS
from papers.versions import TRENDING
from papers.versions import Dependencies
from papers.versions import followers_key
from papers.versions import for_you_key
from papers.versions import members_key
from papers.versions import related_key
from topics.flags import FlagResult
from topics.flags import flag_not_relevant
from topics.flags import retry_after
from topics.following import set_following
from topics.models import Follow
from topics.models import PaperTopic
from topics.models import SavedSearch
from topics.models import Topic
from topics.query import active_topic_at
from topics.query import active_topics
from topics.query import get_active_topic
from topics.query import related_topics
from topics.query import suggested_topics
from topics.query import topic_at
from topics.query import topic_papers
from topics.query import topics_by_trend
from topics.query import trending_topics
from topics.query import with_figures
from topics.reader_feed import FEED_CANDIDATES
from topics.reader_feed import Following
from topics.reader_feed import by_followed_authors
from topics.reader_feed import by_saved_searches
from topics.reader_feed import cached_following
from topics.reader_feed import feed_scopes
from topics.reader_feed import kept_following
from topics.reader_feed import newest_feed_papers
from topics.recommend import WINDOW
from topics.recommend import reasons
from topics.recommend import recommended
from topics.saved_searches import searches_for_nothing
from topics.topic_text import topic_text

PAPERS_PER_PAGE = 25
# The home feed's orders (`?order=`).
FOR_YOU, NEWEST = "for-you", "newest"


def home(request: HttpRequest) -> HttpResponse:
    signed_in_as = session_user_id(request)
    if signed_in_as is not None:
        feed = _reader_feed(request, signed_in_as)
        if feed is not None:
            return feed
    page = cached_page(request, [LATEST, TRENDING, NAMES], lambda deps: _home(request))
    return page_response(request, page)


def _home(request: HttpRequest) -> tuple[str, dict]:
    newest = Paper.objects.order_by("-first_announced", "-id").values_list(
        "arxiv_id", flat=True
    )[:PAPERS_PER_PAGE]
    context = {"topics": trending_topics(limit=12), "rows": paper_rows(list(newest))}
    return render_shared(request, "topics/home.html", context), {}


def _reader_feed(request: HttpRequest, user_id: Any) -> HttpResponse | None:
    """New papers from the topics and authors the user follows, shared by every
    reader who follows the same ones; those this reader had on screen in it
    before (site.js reports them: papers.views.seen) are marked seen. None when
    the session no longer signs them in."""
    # What they follow as this process last read it, checked with the page;
    # else read first, with the user.
    page = None
    if kept := kept_following(user_id):
        followed, read_under = kept
        page = _feed_page(request, user_id, followed, read_under)
    if page is None:
        followed = cached_following(user_id, reader_of=request)
        if not request.user.is_authenticated:
            return None
        # Nothing assumed ({}): always a page.
        page = _feed_page(request, user_id, followed, {})
        assert page is not None
    return page_response(request, page)


def _feed_page(
    request: HttpRequest,
    user_id: Any,
    followed: Following,
    assumes: dict[str, int | None],
) -> Rendered | FilledCopy | HttpResponse | None:
    """The reader's feed page from what they follow (cached_page; None when
    `assumes`, if any, no longer holds)."""
    if _for_you_order(request, followed):
        return cached_page(
            request,
            # Its papers are of any topic, not only the newest, and its reasons
            # name the reader's own: any paper's change may show (`search`).
            [TRENDING, SEARCH, NAMES, for_you_key(user_id)],
            lambda deps: _for_you_feed(request, user_id, followed),
            # Theirs alone, listing beside it what they follow.
            variant=f"foryou:{user_id}|{followed.variant}",
            assumes=assumes,
        )
    # Readers with a model see the order switch: their render is apart.
    switch = "|for-you" if followed.for_you else ""
    return cached_page(
        request,
        [TRENDING, *feed_scopes(followed)],
        lambda deps: _feed(request, followed),
        variant="feed:" + followed.variant + switch,
        assumes=assumes,
    )


def _for_you_order(request: HttpRequest, followed: Following) -> bool:
    """Whether the feed is in For you order: asked for (`?order=for-you`), or
    the reader's first order and Newest not asked for."""
    if not followed.for_you:
        return False
    asked = request.GET.get("order")
    return asked == FOR_YOU or (asked != NEWEST and followed.for_you_first)


def _for_you_feed(
    request: HttpRequest, user_id: int, followed: Following
) -> tuple[str, dict]:
    """The papers the reader's model ranks highest among the newest, each with
    the paper of theirs it is most like."""
    ids = [pk for pk, _ in recommended(user_id)]
    page = Paginator(ids, PAPERS_PER_PAGE).get_page(request.GET.get("page"))
    shown = list(page.object_list)
    like = reasons(user_id, shown)
    arxiv_ids = dict(Paper.objects.filter(pk__in=shown).values_list("pk", "arxiv_id"))
    shown = [pk for pk in shown if pk in arxiv_ids]  # deleted since it was scored
    rows = paper_rows([arxiv_ids[pk] for pk in shown])
    context = _feed_context(followed, FOR_YOU) | {
        "page": page,
        "window": WINDOW,
        "rows": [
            (row, [], [], like.get(pk)) for pk, row in zip(shown, rows, strict=True)
        ],
    }
    meta = {"seen": True}
    return render_shared(request, "topics/feed.html", context), meta


def _feed(request: HttpRequest, followed: Following) -> tuple[str, dict]:
    papers, capped = newest_feed_papers(followed, FEED_CANDIDATES)
    page = _page(request, papers)
    shown = list(page.object_list)
    by_authors = by_followed_authors(followed, [pk for pk, _ in shown])
    by_searches = by_saved_searches(followed, [pk for pk, _ in shown])
    rows = paper_rows([arxiv_id for _, arxiv_id in shown])
    context = _feed_context(followed, NEWEST) | {
        "page": page,
        "capped": capped,
        "rows": [
            (
                row,
                _authors_linked(by_authors.get(pk, ())),
                by_searches.get(pk, []),
                None,
            )
            for (pk, _), row in zip(shown, rows, strict=True)
        ],
    }
    meta = {"seen": True}
    return render_shared(request, "topics/feed.html", context), meta


def _feed_context(followed: Following, order: str) -> dict:
    """What both orders of the feed show beside their papers."""
    topic_ids = [pk for pk, _ in followed.topics]
    # Their figures, not their paper counts, which cost a count of every tag
    # of theirs (80 ms for a reader following 150 topics at 100,000 papers).
    topics = (
        Topic.objects.filter(is_active=True, pk__in=topic_ids)
        .select_related("momentum")
        .order_by("name")
    )
    return {
        "order": order if followed.for_you else "",
        "for_you_first": followed.for_you_first,
        "followed": with_figures(topics) if topic_ids else [],
        "followed_authors": _authors_linked(followed.authors),
        "searches": _searches_linked(followed),
        "anything": followed.anything,
        "paused": followed.paused,
        "suggested": [] if followed.anything else suggested_topics(limit=8),
    }


def _searches_linked(followed: Following) -> list[tuple[str | None, str, str | None]]:
    """(address of its results, name, address of its settings if it searches
    for nothing) of the reader's saved searches: one in words goes back
    further on the search page; a rule's (no address) has its papers only in
    the feed; one of common words only, saved before they were refused, finds
    nothing and leads to where it is changed."""
    if not followed.searches:
        return []
    queries = dict(
        SavedSearch.objects.filter(
            pk__in=[pk for pk, _, _ in followed.searches],
            syntax=SavedSearch.Syntax.SEARCH,
        ).values_list("pk", "query")
    )
    linked: list[tuple[str | None, str, str | None]] = []
    for pk, name, _ in followed.searches:
        if pk in queries and searches_for_nothing(
            queries[pk], SavedSearch.Syntax.SEARCH
        ):
            settings = f"{reverse('accounts:settings')}#saved-search-{pk}"
            linked.append((None, name, settings))
        else:
            address = _search_address(queries[pk]) if pk in queries else None
            linked.append((address, name, None))
    return linked


def _search_address(query: str) -> str:
    return f"{reverse('search')}?{urlencode({'q': query})}"


def _authors_linked(authors: Iterable[tuple[int, str]]) -> list[tuple[str, str]]:
    """(address, name) of these (id, name) authors."""
    return [(author_address(pk), name) for pk, name in authors]


def topic_list(request: HttpRequest) -> HttpResponse:
    def render(deps: Dependencies) -> tuple[str, dict]:
        topics = with_figures(active_topics().order_by("name"))
        return render_shared(request, "topics/list.html", {"topics": topics}), {}

    return page_response(
        request, cached_page(request, [TOPICS, TRENDING, NAMES], render)
    )


def trending(request: HttpRequest) -> HttpResponse:
    """Every active topic by how its share of new papers changes."""
    return page_response(
        request,
        cached_page(request, [TRENDING, NAMES], lambda deps: _trending(request)),
    )


def _trending(request: HttpRequest) -> tuple[str, dict]:
    topics = topics_by_trend()
    groups: dict[str | None, list[Topic]] = {
        trend: [] for trend in ("up", "steady", "down", None)
    }
    for topic in topics:
        groups[topic.figures.trend if topic.figures else None].append(topic)  # type: ignore[attr-defined]
    context = {
        "groups": [
            ("Rising", groups["up"]),
            ("Within chance", groups["steady"]),
            ("Falling", groups["down"]),
            ("Too little to rank", groups[None]),
        ],
    }
    # Coverage is the corpus's: every topic's figures share it.
    figures = next((t.figures for t in topics if t.figures), None)  # type: ignore[attr-defined]
    if figures is not None:
        context.update(as_of=figures.as_of, left_out=figures.left_out)
    return render_shared(request, "topics/trending.html", context), {}


def topic_detail(request: HttpRequest, slug: str) -> HttpResponse:
    week, week_error = _week(request)
    # Read once, whichever of the page and its values needs it.
    topic = functools.cache(lambda: get_active_topic(slug))

    def render(deps: Dependencies) -> tuple[str, dict]:
        context = {
            "topic": topic(),
            "week": week,
            "week_error": week_error,
            "blocks": _topic_blocks(request, topic(), week),
            "address": _address(topic(), week, _shown_page(request, topic(), week)),
        }
        return render_shared(request, "topics/detail.html", context), {}

    # An edit of the topic's text moves only its value, which shows it: it
    # renders no page. Its name and address move `names`, which renders it anew.
    text = topic_text(slug, topic)
    # A follow moves only the follower count: it renders nothing else.
    followers = PageValue(
        f"topic-followers:{slug}",
        followers_key(slug),
        lambda: render_to_string(
            "topics/follower_count.html",
            {"count": Follow.objects.filter(topic__slug=slug).count()},
        ),
    )
    values = {"text": text, "followers": followers}
    # What its fragments are cached under (_topic_blocks): the page holds them.
    scopes = [members_key(slug), related_key(slug), TRENDING, NAMES]
    return page_response(request, cached_page(request, scopes, render, values=values))


def _shown_page(request: HttpRequest, topic: Topic, week: date | None) -> int:
    """The number of the page of the topic's papers the address shows, as
    Paginator reads its ?page= ("02" and "٢": 2; "x": 1; 0 or past the end:
    the last), counted only when it names one."""
    if "page" not in request.GET:
        return 1
    return _page(request, topic_papers(topic, week)).number


def _address(topic: Topic, week: date | None, page: int) -> str:
    """The page's own address, for link previews and search engines: a week
    and a later page are pages of their own, other parameters are not."""
    query = {"week": week.isoformat()} if week else {}
    if page > 1:
        query["page"] = str(page)
    return topic.get_absolute_url() + (f"?{urlencode(query)}" if query else "")


def _topic_blocks(
    request: HttpRequest, topic: Topic, week: date | None
) -> dict[str, SafeString]:
    """The parts of a topic page cached apart from it, read in one round trip:
    a new paper renders the page anew, not all of these. Its momentum moves
    with the momentum refresh (`trending`), related topics with its curated
    relations and the refresh's shared counts (`related:<slug>`), and its
    papers (this page of them, with their count) with which papers it holds
    (`members:<slug>`, which a change to any of them moves too; names move when
    a topic goes, so a topic made anew under its slug does not read the old
    list)."""
    slug = topic.slug
    # The list's links keep the page's query string: one list per address.
    address = hashlib.sha256(request.get_full_path().encode()).hexdigest()
    parts = {
        "momentum": (f"topic-momentum:{slug}", (TRENDING,)),
        "related": (f"topic-related:{slug}", (related_key(slug), NAMES)),
        "papers": (f"topic-papers:{address}", (members_key(slug), NAMES)),
    }
    renderers = {
        "momentum": lambda: render_shared(
            request,
            "topics/momentum_block.html",
            {"topic": topic, "momentum": with_figures([topic])[0].figures},  # type: ignore[attr-defined]
        ),
        "related": lambda: render_shared(
            request, "topics/related_block.html", {"related": related_topics(topic)}
        ),
        "papers": lambda: _topic_papers_block(request, topic, week),
    }
    name_of = {key: name for name, (key, _) in parts.items()}
    found = cached_fragments(
        dict(parts.values()),
        lambda missing: {key: renderers[name_of[key]]() for key in missing},
    )
    return {name: mark_safe(found[key]) for name, (key, _) in parts.items()}


def _topic_papers_block(request: HttpRequest, topic: Topic, week: date | None) -> str:
    """This page of the topic's papers (that week), with their count."""
    page = _page(request, topic_papers(topic, week).values_list("arxiv_id", flat=True))
    rows = paper_rows(
        list(page.object_list),
        topic=topic,
        prepare=lambda papers: _with_model_score(papers, topic),
    )
    context = {"topic": topic, "week": week, "page": page, "rows": rows}
    return render_shared(request, "topics/papers_block.html", context)


def _with_model_score(papers: QuerySet[Paper], topic: Topic) -> QuerySet[Paper]:
    """Each paper with `model_score` where the topic's model put it in the topic
    (None otherwise), for its row; a subquery, not a query per row."""
    tags = PaperTopic.objects.filter(
        topic=topic, paper=OuterRef("pk"), source=PaperTopic.Source.MODEL
    )
    return papers.annotate(model_score=Subquery(tags.values("score")[:1]))


def follow(request: HttpRequest, slug: str) -> HttpResponse:
    # A topic the curators paused is followed no more, but can be left by its
    # followers (from the settings page, which lists it as paused); to anyone
    # else it is gone, its name too. A former slug (a page open from before a
    # rename or a merge) names the topic it leads to.
    leaving = not asks_on(request)
    topic = topic_at(slug)
    if not topic.is_active and not (
        leaving
        and request.user.is_authenticated
        and Follow.objects.filter(user=request.user, topic=topic).exists()
    ):
        raise Http404(f"No active topic {slug}.")
    return toggle(
        request,
        is_on=lambda: Follow.objects.filter(
            user=signed_in(request), topic=topic
        ).exists(),
        set_on=lambda on: set_following(signed_in(request), topic, on),
        question=f"Unfollow {topic.name}?" if leaving else f"Follow {topic.name}?",
        # After leaving a paused topic, not to its page, which is gone.
        fallback=topic.get_absolute_url() if topic.is_active else reverse("home"),
    )


@require_POST
def flag(request: HttpRequest, slug: str, arxiv_id: str) -> HttpResponse:
    """A reader's "Not relevant?" button: a flag for the curators, then back to
    the paper with a message. A visitor signs in and comes back to the paper."""
    topic = active_topic_at(slug)
    paper = get_paper_row(arxiv_id)
    next_url = safe_next(request, paper.get_absolute_url())
    if not request.user.is_authenticated:
        return redirect_to_login(next_url)
    result = flag_not_relevant(request.user, topic, paper)
    if result == FlagResult.FLAGGED:
        messages.success(
            request,
            "Thanks — a curator will review whether this paper belongs in "
            f"{topic.name}.",
        )
    elif result == FlagResult.ALREADY:
        messages.info(request, "You already flagged this.")
    elif result == FlagResult.NOT_TAGGED:
        messages.warning(request, "Only papers in the topic can be flagged.")
    else:
        minutes = max(1, round(retry_after(request.user) / 60))
        unit = "minute" if minutes == 1 else "minutes"
        messages.warning(request, f"Too many flags; try again in {minutes} {unit}.")
    # A redirect (302) even when limited: the reader lands back on the paper,
    # where the message says why.
    return redirect(next_url)


def _page(request: HttpRequest, papers: QuerySet | list):
    return Paginator(papers, PAPERS_PER_PAGE).get_page(request.GET.get("page"))


def _week(request: HttpRequest) -> tuple[date | None, str]:
    """The `?week=YYYY-MM-DD` filter, or None and why it could not be read."""
    raw = request.GET.get("week", "")
    if not raw:
        return None, ""
    try:
        week = date.fromisoformat(raw)
    except ValueError:
        return (
            None,
            f"“{shown(raw[:40])}” is not a date (YYYY-MM-DD); showing all weeks.",
        )
    # Its seven days must be dates too (9999-12-31 has no next day).
    if week > date.max - timedelta(days=7):
        return (
            None,
            f"“{shown(raw[:40])}” is not a week papers are announced in; showing all "
            "weeks.",
        )
    return week, ""
