"""What a rule would tag, before a curator saves it."""

from __future__ import annotations

import time
from collections.abc import Collection
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from django.db import connection
from django.db.models import QuerySet

from papers.latex import latex_to_text
from papers.models import Paper
from papers.search import IsAmong
from topics.documents import paper_documents
from topics.models import PaperTopic
from topics.models import ReviewItem
from topics.models import Topic
from topics.models import TopicExclusion
from topics.prefilter import TermsNotReady
from topics.prefilter import candidate_ids
from topics.prefilter import sure_ids
from topics.rules import CompiledRule
from topics.rules import Document
from topics.rules import RuleError
from topics.rules import compile_new_rule
from topics.tagging import CHUNK_SIZE

SHOWN = 20
# On SQLite, up to this many papers are looked up by id (see _newest).
FEW = 2000
# Admin's live preview reads about this many papers in full (about a second:
# 0.5 ms each), the newest of those the index could not decide; past it, what
# the rest hold is estimated from them. A word in a named field (abs:model)
# leaves most papers holding it undecided: tens of seconds on a web worker.
PREVIEW_READS = 2000


@dataclass
class Preview:
    error: str = ""
    position: int | None = None
    # Why there is no preview yet, the rule being fine (the index is rebuilt).
    notice: str = ""
    count: int = 0
    # Papers searched, and how many of them the database's prefilter left for
    # the matcher to check; of those, how many were left unread past the
    # preview's budget, their matches then estimated (count, added, removed).
    scanned: int = 0
    checked: int = 0
    unread: int = 0
    seconds: float = 0.0
    latest: list[Paper] = field(default_factory=list)
    added: list[Paper] = field(default_factory=list)
    removed: list[Paper] = field(default_factory=list)
    added_count: int = 0
    removed_count: int = 0
    # Saving the rule retrains the topic's model, which then decides papers
    # (automatic membership): it may add or hold back papers not counted here.
    retrains: bool = False

    def as_json(self) -> dict[str, object]:
        def papers(items: list[Paper]) -> list[dict[str, str]]:
            return [
                {
                    "arxiv_id": paper.arxiv_id,
                    "title": latex_to_text(paper.title),
                    "url": paper.get_absolute_url(),
                    "announced": paper.first_announced.isoformat()
                    if paper.first_announced
                    else "",
                }
                for paper in items
            ]

        return {
            "error": self.error,
            "position": self.position,
            "notice": self.notice,
            "count": self.count,
            "scanned": self.scanned,
            "checked": self.checked,
            "unread": self.unread,
            "seconds": round(self.seconds, 2),
            "latest": papers(self.latest),
            "added": papers(self.added),
            "removed": papers(self.removed),
            "added_count": self.added_count,
            "removed_count": self.removed_count,
            "retrains": self.retrains,
        }


def preview_rule(
    rule: str,
    *,
    topic: Topic | None = None,
    categories: Sequence[str] = (),
    limit: int | None = SHOWN,
    derive_limit: int | None = None,
    read_at_most: int | None = None,
) -> Preview:
    """Match `rule` against every stored paper (in `categories`, if any).

    Against a saved topic, also lists what saving the rule would add to and remove
    from the topic's membership as it is now (rule tags, pins, model tags):
    curators' exclusions and the model's vetoes keep papers out, pins and model
    tags stay, as tagging would do. An unchanged rule changes nothing.

    With `read_at_most`, only about that many of the papers the index cannot
    decide are read, the newest (_newest_of_each); the counts then add an
    estimate for the rest (at the rates the papers read matched), and the lists
    show the papers read.
    """
    try:
        compiled = compile_new_rule(rule)
    except RuleError as exc:
        return Preview(error=f"{exc}, {exc.near(rule)}", position=exc.position)
    started = time.perf_counter()
    scope = frozenset(code for code in categories if code)
    try:
        sure, undecided = _prefiltered(compiled, scope, derive_limit)
    except TermsNotReady as exc:
        papers = "paper" if exc.remaining == 1 else "papers"
        return Preview(
            notice="Previews are paused while their search index is rebuilt in the "
            f"background ({exc.remaining:,} {papers} to go). Edit the rule again "
            "in a while to see its preview."
        )
    # A topic not saved yet has no membership for the rule to change; the
    # rule's own tags in it now are what an unchanged rule matches.
    current: set[int] = set()
    decided: set[int] = set()
    if topic is not None:
        current, decided = _membership(topic)
    tagged = current - decided
    unread: set[int] = set()
    if read_at_most is not None:
        if undecided is None:  # no condition to find candidates by: every paper
            undecided = list(Paper.objects.values_list("pk", flat=True))
        if len(undecided) > read_at_most:
            read = _newest_of_each(set(undecided), tagged, read_at_most)
            unread = set(undecided).difference(read)
            undecided = sorted(read)
    read_matches, checked = _read(compiled, scope, undecided)
    matched = sure | read_matches
    added: set[int] = set()
    removed: set[int] = set()
    if topic is not None:
        matched -= _kept_out(topic)
        members = matched | decided
        added, removed = members - current, current - members - unread
    # The unread papers match at the rates the papers read did: those the rule
    # tags now at theirs, the others at theirs (so an unchanged rule, which
    # matches all of the first and none of the second, still changes nothing).
    read = set(undecided or ()) if unread else set()
    overall = len(read_matches) / checked if checked else 0.0
    inside, outside = (
        len(read_matches & among) / len(among) if among else overall
        for among in (read & tagged, read - tagged)
    )
    more_removed = (1 - inside) * len(unread & tagged)
    more_added = outside * len(unread - current)
    return Preview(
        count=len(matched)
        + round(inside * len(unread & tagged) + outside * len(unread - tagged)),
        scanned=Paper.objects.count(),
        checked=checked,
        unread=len(unread),
        seconds=time.perf_counter() - started,
        latest=_newest(matched, limit),
        added=_newest(added, limit),
        removed=_newest(removed, limit),
        added_count=len(added) + round(more_added),
        removed_count=len(removed) + round(more_removed),
        retrains=topic is not None and topic.membership == Topic.Membership.AUTO,
    )


def rule_matching_ids(
    rule: CompiledRule,
    scope: Collection[str] = (),
    *,
    prefilter: bool = True,
    derive_limit: int | None = None,
) -> tuple[set[int], int]:
    """The ids of the papers the rule matches (in `scope`'s categories, if any),
    and how many papers were matched to find them: of the candidates the
    database finds by the rule's condition, those it does not surely match; or
    every paper when the rule has no condition (or without `prefilter`, which
    the benchmark and tests compare against). TermsNotReady when more than
    `derive_limit` papers' terms are stale."""
    scope = frozenset(scope)
    sure, undecided = (
        _prefiltered(rule, scope, derive_limit) if prefilter else (set(), None)
    )
    matched, checked = _read(rule, scope, undecided)
    return sure | matched, checked


def _prefiltered(
    rule: CompiledRule, scope: frozenset[str], derive_limit: int | None
) -> tuple[set[int], list[int] | None]:
    """The papers the database finds the rule surely matches, and those it
    found that only reading them decides; None for those when the rule has no
    condition to find candidates by (every paper is read)."""
    candidates = candidate_ids(rule, scope, derive_limit)
    if candidates is None:
        return set(), None
    # A preview needs ids only: no document for a paper its terms decide.
    sure = sure_ids(rule, candidates)
    return sure, sorted(candidates - sure)


def _read(
    rule: CompiledRule, scope: frozenset[str], paper_ids: list[int] | None
) -> tuple[set[int], int]:
    """Those of these papers (every paper for None) the rule matches, read in
    full, and how many were read."""
    if paper_ids is None:
        documents = iter_documents(Paper.objects.all())
    else:
        documents = documents_of(paper_ids)
    matched: set[int] = set()
    checked = 0
    for paper_id, doc, paper_categories in documents:
        checked += 1
        if scope and not scope & paper_categories:
            continue
        if rule.match(doc) is not None:
            matched.add(paper_id)
    return matched, checked


def _newest_of_each(ids: set[int], tagged: set[int], limit: int) -> set[int]:
    """The newest `limit` of these papers, shared between those the rule tags
    now and the others by their numbers, each given at least a tenth: each
    rate is then read from papers of its own kind."""
    groups = [group for group in (ids & tagged, ids - tagged) if group]
    chosen: set[int] = set()
    for group in groups:
        share = round(limit * len(group) / len(ids))
        share = min(len(group), max(share, limit // 10))
        chosen.update(paper.pk for paper in _newest(group, share))
    return chosen


def _kept_out(topic: Topic) -> set[int]:
    """Papers the rule cannot put in the topic: curators' exclusions, and rule
    matches its model keeps out (vetoed), as tagging would leave them."""
    excluded = TopicExclusion.objects.filter(topic=topic).values_list(
        "paper_id", flat=True
    )
    vetoed = ReviewItem.objects.filter(topic=topic, vetoed=True).values_list(
        "paper_id", flat=True
    )
    return set(excluded) | set(vetoed)


def _membership(topic: Topic) -> tuple[set[int], set[int]]:
    """The topic's papers now, and those of them that stay whatever the rule says:
    pins, and the model's tags (a rule change removes only rule tags)."""
    current: set[int] = set()
    decided: set[int] = set()
    for paper_id, source in PaperTopic.objects.filter(topic=topic).values_list(
        "paper_id", "source"
    ):
        current.add(paper_id)
        if source != PaperTopic.Source.RULE:
            decided.add(paper_id)
    return current, decided


def _newest(ids: set[int], limit: int | None) -> list[Paper]:
    """The newest of these papers: on PostgreSQL looked up by id, the ids one
    array parameter (46,875 of 1M papers: 16 ms, where walking the
    announcement index took half a second); on SQLite a few by id and of many
    the newest found walking the announcement index (no huge IN list)."""
    newest: list[Paper] = []
    if not ids:
        return newest
    papers = Paper.objects.order_by("-first_announced", "-pk").only(
        "arxiv_id", "title", "first_announced"
    )
    if connection.vendor == "postgresql":
        return list(papers.filter(IsAmong(sorted(ids)))[:limit])
    if len(ids) <= FEW:
        return list(papers.filter(pk__in=ids)[:limit])
    for paper in papers.iterator(chunk_size=2000):
        if paper.pk in ids:
            newest.append(paper)
            if len(newest) == limit or len(newest) == len(ids):
                break
    return newest


def documents_of(
    paper_ids: list[int],
) -> Iterator[tuple[int, Document, frozenset[str]]]:
    """(id, rule document, category codes) of each of these papers, in chunks."""
    for start in range(0, len(paper_ids), CHUNK_SIZE):
        chunk = paper_ids[start : start + CHUNK_SIZE]
        yield from paper_documents(Paper.objects.filter(pk__in=chunk).order_by("pk"))


def iter_documents(
    papers: QuerySet[Paper], chunk_size: int = 2000
) -> Iterator[tuple[int, Document, frozenset[str]]]:
    """(id, rule document, category codes) of each paper, reading in chunks by id."""
    last_id = 0
    while docs := paper_documents(
        papers.filter(pk__gt=last_id).order_by("pk")[:chunk_size]
    ):
        yield from docs
        last_id = docs[-1][0]
