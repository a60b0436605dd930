"""Saved searches: a reader's own query kept as a private alert. The one writer
of SavedSearch and SavedSearchMatch: create, update and delete a search, check
its query, and find its matches.

A query is in the search syntax (papers.search: words, "phrases", -excluded,
`or`) or in the topic rule language (topics.rules). Each is checked by its own
parser; the search syntax is forgiving, so a query is refused when saving it
would make a poor alert (check_query says which).

Matches are stored, so the feed and the digest read them like a followed
topic's papers. Saving or editing a search finds the newest MATCHES_KEPT over the
corpus, from the database's full-text index (the search syntax) or from the
rule prefilter's candidates and the exact matcher (rules). After every ingest,
match_new_papers looks at the papers stored or changed since each search was
last matched: one full-text query per search-syntax search, and one pass of
those papers' documents through the rule searches' inverted index (a RuleSet).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from datetime import timedelta

from django.conf import settings
from django.db import connection
from django.db import transaction
from django.db.models import F
from django.db.models import Q
from django.utils import timezone

from accounts.models import User
from core.text import CONTROL
from papers.letters import search_text
from papers.models import Paper
from papers.query import LATE_COMMIT_OVERLAP
from papers.query import last_modified
from papers.search import FIELD_PREFIX
from papers.search import MAX_QUERY_LENGTH
from papers.search import NEWEST_FIRST
from papers.search import TERM
from papers.search import IsAmong
from papers.search import arxiv_id_query
from papers.search import is_searchable
from papers.search import matching_papers as search_matches
from papers.search import newest_matches
from papers.search import parse_query
from papers.search import typed_with_places
from papers.versions import reader_changed
from topics import prefilter
from topics.models import SavedSearch
from topics.models import SavedSearchMatch
from topics.preview import iter_documents
from topics.preview import rule_matching_ids
from topics.rules import CompiledRule
from topics.rules import RuleError
from topics.rules import RuleSet
from topics.rules import compile_new_rule
from topics.rules import compile_rule
from topics.rules.terms import rule_condition

# How many of its newest matches a search keeps when it is saved or edited.
MATCHES_KEPT = 500
NAME_LENGTH = SavedSearch._meta.get_field("name").max_length or 80
# NUL, escape, delete and the other controls but whitespace, refused in a name
# and a query as the API's schema says (core.api.fields.NO_CONTROL).
CONTROL_CHARACTER = re.compile(f"[{CONTROL}]")
# Zero-width non-joiner and joiner: Persian and Indic scripts write words with them.
JOINERS = "\u200c\u200d"

Syntax = SavedSearch.Syntax


@dataclass
class SavedSearchError(ValueError):
    """Why a search cannot be saved: the field at fault ("name", "query", or
    None for the reader's limit), a code, and where in the query, if there."""

    message: str
    field: str | None = "query"
    code: str = "invalid_query"
    position: int | None = None

    def __str__(self) -> str:
        return self.message


def search_limit() -> int:
    return int(settings.MOMENTUM_SAVED_SEARCHES_MAX)


# CHECKING
# ------------------------------------------------------------------------------


def check_query(query: str, syntax: str) -> CompiledRule | None:
    """Raise SavedSearchError for a query that cannot be saved; a rule's
    compiled form. Positions are 0-based, as RuleError's. Either syntax is at
    most MAX_QUERY_LENGTH characters: an alert, not a topic's rule."""
    if len(query) > MAX_QUERY_LENGTH:
        raise _search_error(
            f"Too long ({len(query)} characters, limit {MAX_QUERY_LENGTH})",
            MAX_QUERY_LENGTH,
        )
    if control := CONTROL_CHARACTER.search(query):
        # A NUL would break the database's query; the others match nothing.
        raise _search_error(
            "A control character cannot be searched for", control.start()
        )
    if syntax == Syntax.RULE:
        return _check_rule(query)
    if syntax != Syntax.SEARCH:
        raise SavedSearchError(f"Unknown syntax {syntax!r}", "syntax", "invalid")
    _check_search(query)
    return None


def _check_rule(query: str) -> CompiledRule:
    try:
        rule = compile_new_rule(query)
    except RuleError as exc:
        raise SavedSearchError(
            f"Invalid rule: {exc}", position=exc.position, code="invalid_rule"
        ) from exc
    if rule_condition(rule.node) is None:
        # Its matches could only be found by matching every paper.
        raise SavedSearchError(
            "Invalid rule: it gives no word, phrase or category to look for "
            "at position 0",
            position=0,
            code="invalid_rule",
        )
    return rule


def _check_search(query: str) -> None:
    """The search syntax refuses nothing (papers.search.parse_query); an alert
    refuses what would match nothing, everything, or not what was meant.
    It reads the query as search does (papers.search.as_typed: a phone's
    minus sign is "-"; papers.letters.search_text: a word's letters);
    positions are in the query as typed."""
    typed, places = typed_with_places(query)

    def error(message: str, position: int) -> SavedSearchError:
        return _search_error(message, places[position])

    if not typed.strip():
        raise error("Type some words to search for", 0)
    if arxiv_id_query(typed):
        raise error("An arXiv id names one paper: save the paper instead", 0)
    if field := FIELD_PREFIX.search(typed):
        raise error(
            f"{field.group(0)} is a field of the topic rule syntax, which search "
            "does not read: choose Topic rule, or leave it out",
            field.start(),
        )
    # (start of the alternative, whether it has a positive term); `or`s' places.
    alternatives: list[tuple[int, bool]] = []
    start: int | None = None
    last_or: int | None = None
    positive = False
    for match in TERM.finditer(typed):
        quoted = match.group(2) is not None
        # TERM takes a quote left open as a phrase to the end of the text.
        closed = len(match.group(0)) - len(match.group(1) or "") >= 2
        if quoted and not (closed and match.group(0).endswith('"')):
            raise error("Unbalanced quote", match.start(2) - 1)
        # Its letters as search reads them: a dotless i (U+0131) is an i.
        words = search_text(" ".join(match.group(2 if quoted else 4).split()))
        if not quoted and words.lower() == "or":
            if start is None:
                raise error("Nothing before or", match.start())
            alternatives.append((start, positive))
            start, positive = None, False
            last_or = match.start()
            continue
        if not is_searchable(words, quoted=quoted):
            continue
        if start is None:
            start = match.start()
        positive = positive or not (match.group(1) or match.group(3))
    if start is None:
        if last_or is None:
            raise error(
                "Nothing to search for (words as common as “the” or “of”, and "
                "signs alone, are left out)",
                0,
            )
        raise error("Nothing after or", last_or)
    alternatives.append((start, positive))
    for begins, has_positive in alternatives:
        if not has_positive:
            raise error("Only excluded words: add a word to look for", begins)
    assert parse_query(typed)  # what the checks let through searches for something


def searches_for_nothing(query: str, syntax: str) -> bool:
    """Whether a search in words holds no word search reads ("the", "of the"):
    saving refuses it (_check_search), but one saved before it did is kept,
    and matches nothing (papers.search.matching_papers)."""
    return syntax == Syntax.SEARCH and not parse_query(query)


def _search_error(message: str, position: int) -> SavedSearchError:
    return SavedSearchError(f"{message} at position {position}", position=position)


def _check_name(user: User, name: str, search: SavedSearch | None = None) -> str:
    # Shown in pages, mails and the Atom feed, whose XML cannot hold them.
    if CONTROL_CHARACTER.search(name):
        raise SavedSearchError(
            "A name cannot hold control characters", "name", "invalid"
        )
    # One way to write what looks the same: composed accents, and no invisible
    # characters (zero-width space, byte order mark) but the joiners some
    # scripts spell words with.
    name = "".join(
        character
        for character in unicodedata.normalize("NFC", name)
        if character in JOINERS or unicodedata.category(character) != "Cf"
    )
    name = " ".join(name.split())
    if not name:
        raise SavedSearchError("Give the search a name", "name", "blank")
    if len(name) > NAME_LENGTH:
        raise SavedSearchError(
            f"Names are at most {NAME_LENGTH} characters", "name", "max_length"
        )
    taken = SavedSearch.objects.filter(user=user, name=name)
    if search is not None:
        taken = taken.exclude(pk=search.pk)
    if taken.exists():
        raise SavedSearchError(
            f"You already have a search named “{name}”", "name", "unique"
        )
    return name


# WRITING
# ------------------------------------------------------------------------------


@transaction.atomic
def create_search(user: User, *, name: str, query: str, syntax: str) -> SavedSearch:
    """Save a new search for the reader and find its matches; raises
    SavedSearchError (the query, the name, the limit)."""
    # One creation at a time per reader, so that two cannot pass the limit.
    User.objects.select_for_update().filter(pk=user.pk).first()
    limit = search_limit()
    kept = SavedSearch.objects.filter(user=user).count()
    if kept >= limit:
        # An operator may have lowered the limit below what a reader keeps.
        most = "the most" if kept == limit else f"more than the {limit}"
        raise SavedSearchError(
            f"You have {kept} saved search{'es' if kept != 1 else ''}, "
            f"{most} a reader may keep: delete "
            f"{'one' if kept == limit else kept - limit + 1} to save another",
            None,
            "limit",
        )
    rule = check_query(query, syntax)  # positions in the query as typed
    # Kept without the spaces around it, as the search page reads a query: its
    # "Saved as" and the settings' "Run it" find the search by its text.
    search = SavedSearch.objects.create(
        user=user, name=_check_name(user, name), query=query.strip(), syntax=syntax
    )
    fill_matches(search, rule)
    return search


@transaction.atomic
def update_search(
    search: SavedSearch,
    *,
    name: str | None = None,
    query: str | None = None,
    syntax: str | None = None,
) -> SavedSearch:
    """Rename the search, or change its query (its matches are found again)."""
    # One change at a time per reader, as create_search: two renames to one
    # name would both pass the check.
    User.objects.select_for_update().filter(pk=search.user_id).first()
    changes: dict[str, str] = {}
    if name is not None:
        changes["name"] = _check_name(search.user, name, search)
    typed = search.query if query is None else query
    new_query = typed.strip()  # as create_search keeps it
    new_syntax = search.syntax if syntax is None else syntax
    rematch = (new_query, new_syntax) != (search.query, search.syntax)
    rule = check_query(typed, new_syntax) if rematch else None
    changes.update(query=new_query, syntax=new_syntax)
    for field, value in changes.items():
        setattr(search, field, value)
    search.save(update_fields=list(changes))
    if rematch:
        fill_matches(search, rule)
    else:
        # Its name is in the feed's rows and the digest.
        _touch([search.pk], [search.user_id])
    return search


@transaction.atomic
def delete_search(search: SavedSearch) -> None:
    search.delete()
    reader_changed([search.user_id])


def fill_matches(search: SavedSearch, rule: CompiledRule | None = None) -> int:
    """Replace the search's matches with its MATCHES_KEPT newest over the
    corpus; return how many."""
    until = last_modified()
    if search.syntax == Syntax.RULE:
        ids = _newest(_rule_search_ids(rule or compile_rule(search.query)))
    else:
        ids, _ = newest_matches(search_matches(search.query), MATCHES_KEPT)
    SavedSearchMatch.objects.filter(search=search).delete()
    SavedSearchMatch.objects.bulk_create(
        SavedSearchMatch(search_id=search.pk, paper_id=pk) for pk in ids
    )
    SavedSearch.objects.filter(pk=search.pk).update(checked_until=until)
    search.checked_until = until
    _touch([search.pk], [search.user_id])
    return len(ids)


def _rule_search_ids(rule: CompiledRule) -> set[int]:
    """The rule's matches, as the admin's preview finds them: while many papers'
    terms are out of date (after a release that reads them anew), deriving
    them is the worker's (README, Upgrades), not a request's, which would take
    minutes and lose them all when it timed out."""
    try:
        return rule_matching_ids(rule, derive_limit=prefilter.PREVIEW_DERIVES)[0]
    except prefilter.TermsNotReady as exc:
        raise SavedSearchError(
            "Searches in the topic rule syntax are paused while their index is "
            f"rebuilt ({exc.remaining:,} papers to go): try again in a few minutes",
            None,
            "index_rebuilding",
        ) from exc


def refill_word_searches() -> int:
    """Find the matches of every search in words again, as saving it does:
    after a release whose search index reads text anew (README, Upgrades).
    Return how many searches."""
    searches = list(SavedSearch.objects.filter(syntax=Syntax.SEARCH).order_by("pk"))
    for search in searches:
        with transaction.atomic():
            fill_matches(search)
    return len(searches)


def _newest(ids: set[int]) -> list[int]:
    """The MATCHES_KEPT newest of these papers."""
    if not ids:
        return []
    newest = Paper.objects.filter(_among(list(ids))).order_by(*NEWEST_FIRST)
    return list(newest.values_list("pk", flat=True)[:MATCHES_KEPT])


def _touch(search_ids: list[int], user_ids: list[int]) -> None:
    """These searches' matches or names changed: their readers' feeds follow."""
    SavedSearch.objects.filter(pk__in=search_ids).update(revision=F("revision") + 1)
    reader_changed(set(user_ids))


# MATCHING NEW PAPERS
# ------------------------------------------------------------------------------

# How long before arXiv announces a version (and an ingest stores it) it may
# have been submitted: three working days, and a weekend or holiday besides.
NEW_VERSION_LAG = timedelta(days=7)


@transaction.atomic
def match_new_papers() -> int:
    """Match every saved search against the papers stored or changed since it
    was last matched (and LATE_COMMIT_OVERLAP before: a page committed late):
    a paper that now matches is added, one whose new version no longer does
    leaves. Return how many matches were added. Idempotent: a second run adds
    and removes nothing."""
    until = last_modified()
    # Those with papers written past their marks, or marked so lately that a
    # page stamped before may not have committed yet.
    late = timezone.now() - LATE_COMMIT_OVERLAP
    searches = list(
        SavedSearch.objects.select_for_update()
        .filter(
            Q(checked_until__lt=until)
            | Q(checked_until__isnull=True)
            | Q(checked_until__gt=late)
        )
        .order_by("pk")
    )
    if until is None or not searches:
        return 0
    # Searches share their marks (every pass moves them all): the papers
    # written since each mark are read once.
    written: dict[datetime | None, list[int]] = {}
    for mark in {search.checked_until for search in searches}:
        since = Paper.objects.filter(modified_at__lte=until)
        if mark is not None:
            since = since.filter(modified_at__gt=mark - LATE_COMMIT_OVERLAP)
        written[mark] = list(since.values_list("pk", flat=True))
    found: set[tuple[int, int]] = set()
    looked: list[SavedSearch] = []
    rules: dict[int, CompiledRule] = {}
    for search in searches:
        ids = written[search.checked_until]
        if search.syntax == Syntax.SEARCH:
            new = search_matches(search.query).filter(_among(ids))
            found |= {(search.pk, pk) for pk in new.values_list("pk", flat=True)}
        else:
            try:
                rules[search.pk] = compile_rule(search.query)
            except RuleError:
                continue  # checked when saved; a rule the language now refuses
        looked.append(search)
    if rules:
        found |= _rule_matches(searches, rules, written)
    # Those kept already (read again in the overlap, or a new version that
    # still matches) are no change: kept with when they were found.
    added = found - set(
        SavedSearchMatch.objects.filter(
            _among(sorted({p for _, p in found}), "paper_id"), search__in=searches
        ).values_list("search_id", "paper_id")
    )
    SavedSearchMatch.objects.bulk_create(
        (
            SavedSearchMatch(search_id=s, paper_id=p, found_at=found_at)
            for (s, p), found_at in _found_at(searches, added).items()
        ),
        ignore_conflicts=True,  # a match kept, with when it was found
    )
    changed = {search_id for search_id, _ in added}
    for search in looked:
        kept = [p for s, p in found if s == search.pk]
        gone = SavedSearchMatch.objects.filter(
            _among(written[search.checked_until], "paper_id"), search=search
        ).exclude(paper_id__in=kept)
        if gone.delete()[0]:
            changed.add(search.pk)
    SavedSearch.objects.filter(pk__in=[s.pk for s in searches]).update(
        checked_until=until
    )
    if changed:
        owners = [s.user_id for s in searches if s.pk in changed]
        _touch(sorted(changed), owners)
    return len(added)


def _found_at(
    searches: list[SavedSearch], found: set[tuple[int, int]]
) -> dict[tuple[int, int], datetime | None]:
    """When each match was found, for the digest (SavedSearchMatch.found_at):
    now for a paper stored, or given a new version, since its search was
    saved; None for one that matched all along (only the newest
    MATCHES_KEPT were kept when the search was saved), which is not new.
    arXiv dates a version when it was submitted, which is days before it is
    announced and stored: a version submitted up to NEW_VERSION_LAG before
    the search was saved may have been stored after it, and counts as new."""
    if not found:
        return {}
    now = timezone.now()
    saved = {search.pk: search.created_at for search in searches}
    papers = Paper.objects.filter(_among(sorted({p for _, p in found})))
    times = {
        pk: (created, updated)
        for pk, created, updated in papers.values_list("pk", "created_at", "updated")
    }

    def is_new(search_id: int, paper_id: int) -> bool:
        created, updated = times[paper_id]
        return created > saved[search_id] or (
            updated is not None and updated > saved[search_id] - NEW_VERSION_LAG
        )

    return {(s, p): now if is_new(s, p) else None for s, p in sorted(found)}


def _among(ids: list[int], field: str = "pk") -> Q | IsAmong:
    if connection.vendor == "postgresql":
        return IsAmong(ids, field)
    return Q(**{f"{field}__in": ids})


def _rule_matches(
    searches: list[SavedSearch],
    rules: dict[int, CompiledRule],
    written: dict[datetime | None, list[int]],
) -> set[tuple[int, int]]:
    """(search, paper) for the written papers the rule searches match: each
    paper's document built once and matched against them all at once."""
    since = {s.pk: set(written[s.checked_until]) for s in searches if s.pk in rules}
    ruleset = RuleSet(rules)
    papers = sorted(set().union(*since.values()))
    found = set()
    for paper_id, doc, _ in iter_documents(Paper.objects.filter(_among(papers))):
        for search_id in ruleset.match(doc):
            if paper_id in since[search_id]:
                found.add((search_id, paper_id))
    return found
