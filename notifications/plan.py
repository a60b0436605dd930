"""Planning digests: which new papers of a user's followed topics each digest
holds, as plain JSON (`Digest.sections`), so retries and "view in browser" show
exactly the papers the first attempt chose.

Planning works on a batch of users with a fixed number of queries (follows of
topics and of authors, last sent periods, recent tags of the followed topics,
recent papers of the followed authors, recent matches of saved searches, papers
already sent, those the readers saved or rated, their models), so the cost per
batch does not grow with the number of users in it.

Rules: for each followed, unmuted, active topic, in the order followed, the
papers first announced since the period of the last digest the user received,
and those that joined the topic since that digest's send time though announced
before (harvested late, or included by a curator from the review queue; at
most MAX_LOOKBACK back), never one already sent to them nor one they saved or
rated; a paper in several
followed topics appears once, under the first, naming the others. Then the new
papers by followed authors that no topic section holds (announced since that
period, or ingested since that digest's send time), in a section of their
own ("topic": None), newest first. A paper by a followed author names them, in
whichever section it is (a third item: their ids), so a paper both in a
followed topic and by a followed author appears once, with both reasons. Then,
for each saved search (oldest first), its new matches that no earlier section
holds (announced since that period, or found by an ingest since that
digest's send time: harvested late, or a new version that now matches), in a
section of its own ("topic": None, "search": its id), newest first; a paper a
saved search matches names it in whichever section it is (a fourth item: their
ids). For a reader with a For you model (topics.recommend), each
section's papers are in its order instead, the papers most like theirs first
("ranked": true). Past the cap, sections share the slots evenly and each says
how many more it has: those it leaves out are the newest's oldest or the
model's least liked.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from datetime import date
from datetime import datetime
from datetime import timedelta
from typing import Any

from django.db.models import Max
from django.db.models import Min
from django.db.models import Q

from notifications.models import Digest
from notifications.models import DigestPaper
from papers.library import rated_papers
from papers.models import AuthorFollow
from papers.models import Authorship
from topics.models import Follow
from topics.models import PaperTopic
from topics.models import SavedSearchMatch
from topics.momentum import latest_announcement_day
from topics.recommend import scores_for

# A user who has not had a digest for a long time gets the last four weeks, not
# everything since their last one.
MAX_LOOKBACK = timedelta(days=28)


@dataclass(frozen=True)
class PlanRequest:
    """One digest to plan: whose, for which period, and how many papers at most."""

    user_id: int
    period_start: date
    step: timedelta
    max_papers: int
    # The last announcement day it may hold: its send time's day in UTC, when
    # arXiv's announcements come (a digest built later, a past one replayed,
    # holds what it would have; later papers are the next one's).
    until: date
    # The digest being planned: its own papers do not count as already sent.
    digest_id: int | None = None
    # The papers of the latest week harvested, sent before or not (test digests:
    # real papers even when nothing is new by the wall clock).
    fresh: bool = False
    # Its send time: a paper that joined a followed topic after the last
    # digest's and by this one's is new to the reader, whatever its day.
    due: datetime | None = None


@dataclass
class Plan:
    # The first announcement day of its period; a section holding a paper
    # announced before it (harvested late) has its own, "since".
    since: date
    sections: list[dict[str, Any]] = field(default_factory=list)
    # The papers of each section past the cap, counted and linked, not shown:
    # (paper id, topic id), recorded as sent with the shown ones (not stored).
    counted: list[tuple[int, int | None]] = field(default_factory=list)

    @property
    def paper_count(self) -> int:
        return sum(len(section["papers"]) for section in self.sections)


def planned_authors(entry: Sequence[Any]) -> list[int]:
    """The followed authors a planned paper ([id, other topics, authors]) names;
    entries planned before authors could be followed have two items."""
    return list(entry[2]) if len(entry) > 2 else []


def planned_searches(entry: Sequence[Any]) -> list[int]:
    """The saved searches a planned paper ([id, other topics, authors,
    searches]) matches; entries planned before saved searches have fewer items."""
    return list(entry[3]) if len(entry) > 3 else []


def plan_digests(requests: Sequence[PlanRequest]) -> dict[int, Plan]:
    """Plan each request's digest (keyed by user id); reads only, in a fixed
    number of queries."""
    user_ids = [request.user_id for request in requests]
    follows = _follows(user_ids)
    author_follows = _author_follows(user_ids)
    last_sent, never_sent = _last_sent_periods(user_ids)
    latest_week = (
        latest_week_start() if any(request.fresh for request in requests) else None
    )
    since = {
        request.user_id: _since(
            request,
            last_sent[request.user_id][0] if request.user_id in last_sent else None,
            latest_week,
            never_sent.get(request.user_id),
        )
        for request in requests
    }
    joined_between = {
        request.user_id: (last_sent[request.user_id][1], request.due)
        for request in requests
        if request.due and not request.fresh and request.user_id in last_sent
    }
    topic_ids = {topic_id for ids in follows.values() for topic_id in ids}
    author_ids = {pk for ids in author_follows.values() for pk in ids}
    earliest = min(since.values())
    # How far back a paper that joined a topic late may have been announced.
    floor = min(request.period_start - MAX_LOOKBACK for request in requests)
    joined_after = min((after for after, _ in joined_between.values()), default=None)
    late = (joined_after, floor) if joined_after else None
    searches, by_search, searches_of, found = _recent_matches(user_ids, earliest, late)
    if not topic_ids and not author_ids and not searches:
        return {user_id: Plan(since[user_id]) for user_id in user_ids}
    by_topic, topics_of, joined = _recent_tags(topic_ids, earliest, late)
    by_author, authors_of, ingested = _recent_authorships(author_ids, earliest, late)
    sent = _already_sent(requests, floor if joined_after else earliest)
    candidates = sorted(
        {pk for papers in by_topic.values() for pk, _ in papers}
        | {pk for papers in by_author.values() for pk, _ in papers}
        | {pk for papers in by_search.values() for pk, _ in papers}
    )
    rated = rated_papers(candidates, user_ids)
    scores = scores_for(user_ids, candidates)
    return {
        request.user_id: _plan_one(
            request,
            since[request.user_id],
            Followed(
                follows.get(request.user_id, []),
                author_follows.get(request.user_id, []),
                searches.get(request.user_id, []),
            ),
            Recent(
                by_topic,
                topics_of,
                by_author,
                authors_of,
                by_search,
                searches_of,
                joined,
                found,
                ingested,
            ),
            (set() if request.fresh else sent.get(request.user_id, set()))
            | set(rated.get(request.user_id, ())),
            scores.get(request.user_id),
            joined_between.get(request.user_id),
        )
        for request in requests
    }


@dataclass(frozen=True)
class Followed:
    """One reader's followed topics and authors (ids), in the order followed,
    and their saved searches with new matches, oldest first."""

    topics: list[int]
    authors: list[int]
    searches: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Recent:
    """The recent papers of every followed topic and author and saved search of
    a batch, newest first, and each such paper's topics, authors and searches."""

    by_topic: dict[int, list[tuple[int, date]]]
    topics_of: dict[int, set[int]]
    by_author: dict[int, list[tuple[int, date]]]
    authors_of: dict[int, set[int]]
    by_search: dict[int, list[tuple[int, date]]] = field(default_factory=dict)
    searches_of: dict[int, set[int]] = field(default_factory=dict)
    # When each (topic, paper) of by_topic joined the topic.
    joined: dict[tuple[int, int], datetime] = field(default_factory=dict)
    # When an ingest found each (search, paper) of by_search, where it did.
    found: dict[tuple[int, int], datetime] = field(default_factory=dict)
    # When each paper of by_author was first ingested.
    ingested: dict[int, datetime] = field(default_factory=dict)


def _follows(user_ids: list[int]) -> dict[int, list[int]]:
    follows: dict[int, list[int]] = defaultdict(list)
    rows = (
        Follow.objects.filter(user_id__in=user_ids, muted=False, topic__is_active=True)
        .order_by("created_at", "pk")
        .values_list("user_id", "topic_id")
    )
    for user_id, topic_id in rows:
        follows[user_id].append(topic_id)
    return follows


def _author_follows(user_ids: list[int]) -> dict[int, list[int]]:
    follows: dict[int, list[int]] = defaultdict(list)
    rows = (
        AuthorFollow.objects.filter(user_id__in=user_ids)
        .order_by("created_at", "pk")
        .values_list("user_id", "author_id")
    )
    for user_id, author_id in rows:
        follows[user_id].append(author_id)
    return follows


def _last_sent_periods(
    user_ids: list[int],
) -> tuple[dict[int, tuple[date, datetime]], dict[int, date]]:
    """The period and the send time of each user's last digest sent; and for
    a user never sent one, the first day their failed digests held, whose
    papers (freed) are still owed."""
    sent = Q(status=Digest.Status.SENT)
    rows = (
        Digest.objects.filter(
            user_id__in=user_ids,
            kind=Digest.Kind.SCHEDULED,
            status__in=[Digest.Status.SENT, Digest.Status.FAILED],
        )
        .values("user_id")
        .annotate(
            last=Max("period_start", filter=sent),
            due=Max("due_at", filter=sent),
            failed_since=Min("since", filter=Q(status=Digest.Status.FAILED)),
        )
        .values_list("user_id", "last", "due", "failed_since")
    )
    last_sent, never_sent = {}, {}
    for user_id, last, due, failed_since in rows:
        if last is not None:
            last_sent[user_id] = (last, due)
        elif failed_since is not None:
            never_sent[user_id] = failed_since
    return last_sent, never_sent


def latest_week_start() -> date | None:
    """The first day of the seven ending at the latest announcement day stored."""
    latest = latest_announcement_day()
    return latest - timedelta(days=6) if latest else None


def _since(
    request: PlanRequest,
    last_sent: date | None,
    latest_week: date | None,
    failed_since: date | None = None,
) -> date:
    """The first announcement day the digest covers: the day of the last period
    received (overlap is harmless, sent papers are left out), else one period,
    or from the first day of the failed digests of a reader never sent one;
    for a fresh plan, the latest week harvested."""
    floor = request.period_start - MAX_LOOKBACK
    if request.fresh:
        return latest_week or floor
    if last_sent is None or last_sent >= request.period_start:
        one_period = request.period_start - request.step
        return max(min(one_period, failed_since or one_period), floor)
    return max(last_sent, floor)


def _recent_tags(
    topic_ids: set[int], earliest: date, late: tuple[datetime, date] | None
) -> tuple[
    dict[int, list[tuple[int, date]]],
    dict[int, set[int]],
    dict[tuple[int, int], datetime],
]:
    """Each topic's papers announced since `earliest`, and with `late`
    (joined after, announced since) those that joined it later, newest first;
    each such paper's topics; and when each joined its topic."""
    by_topic: dict[int, list[tuple[int, date]]] = defaultdict(list)
    topics_of: dict[int, set[int]] = defaultdict(set)
    joined: dict[tuple[int, int], datetime] = {}
    recent = Q(paper__first_announced__gte=earliest)
    if late:
        recent |= Q(created_at__gt=late[0], paper__first_announced__gte=late[1])
    rows = (
        PaperTopic.objects.filter(recent, topic_id__in=topic_ids)
        .order_by("-paper__first_announced", "-paper_id")
        .values_list("topic_id", "paper_id", "paper__first_announced", "created_at")
    )
    for topic_id, paper_id, day, created_at in rows:
        by_topic[topic_id].append((paper_id, day))  # type: ignore[arg-type]  # filtered on: not null
        topics_of[paper_id].add(topic_id)
        joined[topic_id, paper_id] = created_at
    return by_topic, topics_of, joined


def _recent_authorships(
    author_ids: set[int], earliest: date, late: tuple[datetime, date] | None
) -> tuple[dict[int, list[tuple[int, date]]], dict[int, set[int]], dict[int, datetime]]:
    """Each author's papers announced since `earliest`, and with `late`
    (ingested after, announced since) those harvested later, newest first;
    each such paper's authors (of these); and when each was ingested."""
    by_author: dict[int, list[tuple[int, date]]] = defaultdict(list)
    authors_of: dict[int, set[int]] = defaultdict(set)
    ingested: dict[int, datetime] = {}
    if not author_ids:
        return by_author, authors_of, ingested
    recent = Q(paper__first_announced__gte=earliest)
    if late:
        recent |= Q(paper__created_at__gt=late[0], paper__first_announced__gte=late[1])
    rows = (
        Authorship.objects.filter(recent, author_id__in=author_ids)
        .order_by("-paper__first_announced", "-paper_id")
        .values_list(
            "author_id", "paper_id", "paper__first_announced", "paper__created_at"
        )
    )
    for author_id, paper_id, day, created_at in rows:
        if paper_id not in authors_of or author_id not in authors_of[paper_id]:
            by_author[author_id].append((paper_id, day))  # type: ignore[arg-type]  # filtered on: not null
        authors_of[paper_id].add(author_id)
        ingested[paper_id] = created_at
    return by_author, authors_of, ingested


def _recent_matches(
    user_ids: list[int], earliest: date, late: tuple[datetime, date] | None
) -> tuple[
    dict[int, list[int]],
    dict[int, list[tuple[int, date]]],
    dict[int, set[int]],
    dict[tuple[int, int], datetime],
]:
    """Each reader's saved searches with matches announced since `earliest`,
    and with `late` (found after, announced since) those an ingest found later
    (oldest search first); each search's such papers, newest first; each
    paper's searches; and when an ingest found each match, where it did."""
    searches: dict[int, list[int]] = defaultdict(list)
    by_search: dict[int, list[tuple[int, date]]] = defaultdict(list)
    searches_of: dict[int, set[int]] = defaultdict(set)
    found: dict[tuple[int, int], datetime] = {}
    recent = Q(paper__first_announced__gte=earliest)
    if late:
        recent |= Q(found_at__gt=late[0], paper__first_announced__gte=late[1])
    rows = (
        SavedSearchMatch.objects.filter(recent, search__user_id__in=user_ids)
        .order_by(
            "search__created_at", "search_id", "-paper__first_announced", "-paper_id"
        )
        .values_list(
            "search__user_id",
            "search_id",
            "paper_id",
            "paper__first_announced",
            "found_at",
        )
    )
    for user_id, search_id, paper_id, day, found_at in rows:
        if search_id not in by_search:
            searches[user_id].append(search_id)
        by_search[search_id].append((paper_id, day))  # type: ignore[arg-type]  # filtered on: not null
        searches_of[paper_id].add(search_id)
        if found_at:
            found[search_id, paper_id] = found_at
    return searches, by_search, searches_of, found


def _already_sent(
    requests: Sequence[PlanRequest], earliest: date
) -> dict[int, set[int]]:
    own = [request.digest_id for request in requests if request.digest_id]
    rows = (
        DigestPaper.objects.filter(
            user_id__in=[request.user_id for request in requests],
            paper__first_announced__gte=earliest,
        )
        .exclude(digest_id__in=own)
        .values_list("user_id", "paper_id")
    )
    sent: dict[int, set[int]] = defaultdict(set)
    for user_id, paper_id in rows:
        sent[user_id].add(paper_id)
    return sent


def _plan_one(
    request: PlanRequest,
    since: date,
    followed: Followed,
    recent: Recent,
    left_out: set[int],
    scores: dict[int, float] | None = None,
    joined_between: tuple[datetime, datetime | None] | None = None,
) -> Plan:
    # Each new paper goes under the first followed topic that has it; those of
    # followed authors that no topic has, in the authors' section after them;
    # then those of each saved search that no section before has.
    placed: set[int] = set()
    # (section head, its new papers, the first day they were announced).
    new: list[tuple[dict[str, Any], list[int], date]] = []

    floor = request.period_start - MAX_LOOKBACK

    def is_new(paper_id: int, day: date, joined: datetime | None = None) -> bool:
        """New to the reader and to the digest, and announced by its send time:
        since the last period, or before it (not too long) when it joined the
        topic, or an ingest found it for the search, since the last digest was
        sent."""
        late = (
            joined_between is not None
            and joined is not None
            and joined_between[0] < joined <= (joined_between[1] or joined)
            and floor <= day
        )
        return (
            (since <= day or late)
            and day <= request.until
            and paper_id not in left_out
            and paper_id not in placed
        )

    def unplaced(
        papers: list[tuple[int, date]],
        owner: int,
        joined: dict[tuple[int, int], datetime],
    ) -> tuple[list[int], date]:
        """Those of these (newest first) that are new, and the first day they
        were announced (a late paper's, before the period, where there is one);
        `joined` says when each (owner, paper) came to the topic or search
        `owner`, where it is late."""
        found = [
            (paper_id, day)
            for paper_id, day in papers
            if is_new(paper_id, day, joined.get((owner, paper_id)))
        ]
        first_day = min([since, *(day for _, day in found)])
        return [paper_id for paper_id, _ in found], first_day

    for topic_id in followed.topics:
        papers, first_day = unplaced(
            recent.by_topic.get(topic_id, []), topic_id, recent.joined
        )
        placed.update(papers)
        if papers:
            new.append(({"topic": topic_id}, papers, first_day))
    by_authors = {
        paper_id: day
        for author_id in followed.authors
        for paper_id, day in recent.by_author.get(author_id, [])
        # A paper joins its authors' works when it is ingested.
        if is_new(paper_id, day, recent.ingested.get(paper_id))
    }
    if by_authors:
        # Newest first, as each topic's (ties: the higher id first).
        newest = sorted(by_authors, key=lambda pk: (by_authors[pk], pk), reverse=True)
        placed.update(newest)
        first_day = min([since, *by_authors.values()])
        new.append(({"topic": None}, newest, first_day))
    for search_id in followed.searches:
        papers, first_day = unplaced(
            recent.by_search.get(search_id, []), search_id, recent.found
        )
        placed.update(papers)
        if papers:
            new.append(({"topic": None, "search": search_id}, papers, first_day))
    if scores:
        # Best first by the reader's model; newest first among equals and for
        # papers it has no vector of yet.
        for head, papers, _ in new:
            papers.sort(key=lambda pk: -scores.get(pk, float("-inf")))
            head["ranked"] = True
    shares = share_slots([len(papers) for _, papers, _ in new], request.max_papers)
    plan = Plan(since)
    for (head, papers, first_day), shown in zip(new, shares, strict=True):
        section = {
            **head,
            "papers": [
                _entry(paper_id, head, followed, recent) for paper_id in papers[:shown]
            ],
            "more": len(papers) - shown,
        }
        if first_day < since:
            # A late paper's: its "and N more" link lists papers from that day.
            section["since"] = first_day.isoformat()
        plan.sections.append(section)
        plan.counted += [(paper_id, head["topic"]) for paper_id in papers[shown:]]
    return plan


def _entry(
    paper_id: int, head: dict[str, Any], followed: Followed, recent: Recent
) -> list[Any]:
    """[paper id, the other followed topics it is in], the followed authors
    who wrote it when there are any, and the other saved searches that match
    it when there are any."""
    others = [
        other
        for other in followed.topics
        if other != head["topic"] and other in recent.topics_of.get(paper_id, ())
    ]
    authors = [
        author
        for author in followed.authors
        if author in recent.authors_of.get(paper_id, ())
    ]
    searches = [
        search
        for search in followed.searches
        if search != head.get("search")
        and search in recent.searches_of.get(paper_id, ())
    ]
    if searches:
        return [paper_id, others, authors, searches]
    return [paper_id, others, authors] if authors else [paper_id, others]


def share_slots(counts: list[int], cap: int) -> list[int]:
    """How many papers each section (a topic's, the followed authors', a saved
    search's) shows when together they may show `cap`: as evenly as their
    counts allow, earlier sections first."""
    shares = [0] * len(counts)
    left = cap
    while left > 0:
        open_sections = [i for i, count in enumerate(counts) if shares[i] < count]
        if not open_sections:
            break
        for i in open_sections[:left]:
            shares[i] += 1
        left -= min(left, len(open_sections))
    return shares
