"""Paper search, ranked on both databases: PostgreSQL's full-text search and
SQLite's FTS5 (the embedded default, papers/migrations/0005).

The text follows websearch syntax: words, "quoted phrases", -excluded terms and
`or` between alternatives. Each term matches stemmed in titles and abstracts and
unstemmed in author names, so "Levine" finds Levine but not Levin.

A search ranks a bounded set: the CANDIDATES newest matches, read from the
full-text index (GIN on PostgreSQL, FTS5 on SQLite) in announcement order with a
LIMIT, in windows of the newest papers first (`newest_matches`), so its cost does
not grow with how many papers a common word matches. On PostgreSQL the query that
finds them ranks them too, and only the page shown is read whole and marked. The
API lists matches newest first and never ranks them (`matching_papers`).

What matched is found by the database: on PostgreSQL from each word's lexemes
(papers.stemming), on SQLite from FTS5's sentinel marks; papers.highlight
marks it in the text shown, a phrase only where its words stand in a row.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from functools import reduce
from operator import and_
from operator import or_
from typing import Any

from django.apps import apps
from django.contrib.postgres.search import SearchQueryField
from django.db import connection
from django.db.models import BooleanField
from django.db.models import F
from django.db.models import FloatField
from django.db.models import Func
from django.db.models import Q
from django.db.models import QuerySet
from django.db.models.expressions import RawSQL

from papers.highlight import START
from papers.highlight import STOP
from papers.highlight import marked_runs
from papers.ingest.records import ARXIV_ID_RE
from papers.letters import search_text
from papers.models import Paper
from papers.pagecache import cached_value
from papers.recent_index import DAY
from papers.recent_index import VECTOR
from papers.recent_index import recent_cutoff
from papers.stemming import matched_runs

MAX_QUERY_LENGTH = 200
# How many of the newest matches a search ranks and pages through.
CANDIDATES = 1000
# Where it looks for them first: the newest FIRST_WINDOW papers, then a window
# as large as the matches' density there says is needed (newest_matches),
# taken from windows of twice as many papers each. Counted in papers, not days,
# so a window holds as many whatever the corpus's pace.
FIRST_WINDOW = 4_000
WINDOW_PAPERS = tuple(FIRST_WINDOW * 2**n for n in range(12))
# How much more than the density says the next window takes (it is estimated).
WINDOW_MARGIN = 1.25
# Papers without a day first on both databases (PostgreSQL's default for DESC,
# and the order of the paper_announced_idx index).
NEWEST_FIRST = (F("first_announced").desc(nulls_first=True), F("id").desc())
# The same order on rows of (id, day).
NEWEST_ROWS = "day DESC NULLS FIRST, id DESC"
WINDOWS_KEY = "search:windows:2"
WINDOWS_SECONDS = 300
# A window's vector inside the index of the newest papers: that index's.
RECENT_VECTOR = RawSQL(VECTOR, [])
# What a search row's highlighting reads; the rest of a row is papers.rows'.
SHOWN_FIELDS = ("arxiv_id", "title", "abstract", "first_announced")
# Titles and abstracts stemmed, author names not, both without accents
# (migration 0014).
CONFIG = "momentum_english"
NAMES_CONFIG = "momentum_names"
# websearch syntax: "a phrase", -excluded, or.
TERM = re.compile(r'(-?)"([^"]*)"?|(-?)(\S+)')
# The syntax as phones and input methods type it: “smart” quotes, a minus sign
# (and full-width letters, which NFKC makes plain).
TYPED_SYNTAX = str.maketrans(dict.fromkeys("“”„«»", '"') | {"\u2212": "-"})
# The whole text is one paper's id: 2607.04713v1, arXiv:2607.04713, its page on
# arXiv (abs, pdf or html, with a query as arXiv's listings link it:
# ?context=cs), hep-th/9901001, in any case (HEP-TH/9901001).
ARXIV_QUERY = re.compile(
    r"(?i:(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html)/|arxiv:\s*)?"
    rf"(?i:{ARXIV_ID_RE.pattern})(?i:\.pdf)?/?(?:[?#]\S*)?"
)
# arXiv's field prefixes (its search's, and the topic rule language's, au:Smith):
# search reads none of them, so a query holding one is told so (papers.views)
# and a saved search refuses it (topics.saved_searches).
FIELD_PREFIX = re.compile(
    r"(?<![^\s\"-])(ti|abs|au|cat|co|all|jr|rn|id):(?=\S)", re.IGNORECASE
)
# arXiv's numbers have had five digits since January 2015, four before.
FIVE_DIGITS_SINCE = "1501"

# PostgreSQL: one term, as a tsquery whose stemmed (English) lexemes match only
# title and abstract (weights A and C, migration 0002) and whose unstemmed
# (NAMES_CONFIG) lexemes match only author names (B). PostgreSQL cannot set a
# tsquery's weights, so they are written into its text form, where every lexeme
# is quoted ('levin' becomes 'levin':AC). A term of stop words only ("the") is
# left out, as websearch_to_tsquery leaves it out.
_WEIGHTED = (
    "regexp_replace(phraseto_tsquery('{config}', %s)::text, "
    "'(''(?:[^'']|'''')*'')', '\\1:{weights}', 'g')::tsquery"
)
TERM_TSQUERY = (
    f"(CASE WHEN numnode(phraseto_tsquery('{CONFIG}', %s)) = 0 "
    f"THEN phraseto_tsquery('{CONFIG}', %s) "
    f"ELSE {_WEIGHTED.format(config=CONFIG, weights='AC')} "
    f"|| {_WEIGHTED.format(config=NAMES_CONFIG, weights='B')} END)"
)
# SQLite: the papers one term matches, stemmed in title and abstract or
# unstemmed in author names (two FTS5 tables, migration 0005).
TERM_ROWS = (
    "SELECT rowid FROM papers_paper_fts WHERE papers_paper_fts MATCH %s "
    "UNION SELECT rowid FROM papers_paper_fts_authors "
    "WHERE papers_paper_fts_authors MATCH %s"
)
# bm25 weights of (title, abstract, author_names): PostgreSQL ranks a title
# (A, 1.0) above authors (B, 0.4) above the abstract (C, 0.2).
FTS_RANK = "bm25(papers_paper_fts, 5.0, 1.0, 2.0)"


# PostgreSQL's English stop words (its english.stop), which its full-text
# search leaves out of an index and a query: left out of a query on SQLite
# too, whose FTS5 index holds them, so that "state of the art" neither needs
# "of" and "the" nor marks them wherever they stand. (A quoted phrase keeps
# them: each database reads its words in a row.)
STOP_WORDS = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he
    him his himself she her hers herself it its itself they them their theirs
    themselves what which who whom this that these those am is are was were be
    been being have has had having do does did doing a an the and but if or
    because as until while of at by for with about against between into
    through during before after above below to from up down in out on off over
    under again further then once here there when where why how all any both
    each few more most other some such no nor not only own same so than too
    very s t can will just don should now
    """.split()
)
# The parts of a word both databases' parsers read, between signs. A word
# with none ("+", "&", a dash or an arrow, as a pasted title holds them) is no
# term: PostgreSQL's parser reads nothing in it, and FTS5 would look for a
# phrase no paper holds, finding nothing at all.
WORD_PARTS = re.compile(r"[^\W_]+")
# A word with no vowel is an acronym, which English stemming leaves whole,
# plural too (LLMs is not LLM to PostgreSQL, GNNs not GNN): it is searched in
# both numbers.
ACRONYM = re.compile(
    r"[b-df-hj-np-tv-xz0-9]*[b-df-hj-np-tv-xz][b-df-hj-np-tv-xz0-9]*", re.I
)


@dataclass(frozen=True, slots=True)
class Term:
    text: str
    excluded: bool = False
    # Another form searched with it: an acronym's other number.
    also: str | None = None

    @property
    def forms(self) -> tuple[str, ...]:
        return (self.text,) if self.also is None else (self.text, self.also)


class IsAmong(Func):
    """`id = ANY(%s)`, PostgreSQL's: the ids as one array parameter, where a
    thousand in an IN list cost more to build, clone and send than to run."""

    output_field = BooleanField()

    def __init__(self, ids: list[int], field: str = "pk") -> None:
        super().__init__(F(field))
        self.ids = ids

    def as_sql(self, compiler, connection, **extra_context):  # type: ignore[override]
        sql, params = compiler.compile(self.get_source_expressions()[0])
        return f"{sql} = ANY(%s)", (*params, self.ids)


class Matches(Func):
    """`vector @@ query`, usable as a filter."""

    arg_joiner = " @@ "
    template = "%(expressions)s"
    output_field = BooleanField()


def filtered_papers(
    *,
    topic: str | None = None,
    category: str | None = None,
    date_from: date | None = None,
    date_to: date | None = None,
) -> QuerySet[Paper]:
    """Papers passing the filters (all papers with none)."""
    papers = Paper.objects.all()
    if topic:
        # By the topic's id, read first: joined to its slug, the planner could
        # not know how many papers the topic holds, and read every paper of a
        # large one to sort them (22,815 of 100,000: 430 ms for a page of 25).
        # Topics build on this app: looked up by name, not imported.
        topics = apps.get_model("topics", "Topic").objects.filter(slug=topic)
        topic_id = topics.values_list("pk", flat=True).first()
        if topic_id is None:
            return papers.none()
        papers = papers.filter(paper_topics__topic_id=topic_id)
    if category:
        papers = papers.filter(categories__code=category)
    if date_from:
        papers = papers.filter(first_announced__gte=date_from)
    if date_to:
        papers = papers.filter(first_announced__lte=date_to)
    return papers


def matching_papers(text: str, **filters: Any) -> QuerySet[Paper]:
    """Papers matching the text and filters (those of `filtered_papers`), in
    no particular order and unranked (the API lists them newest first); all
    papers with no text and no filter. A text naming one paper by its arXiv id
    (as the site's search opens it) matches that paper."""
    papers = filtered_papers(**filters)
    if not text.strip():
        return papers
    if identifier := arxiv_id_query(text):
        return papers.filter(arxiv_id=identifier[0])
    alternatives = parse_query(text)
    if not alternatives:
        return papers.none()
    if connection.vendor == "postgresql":
        return papers.filter(Matches(F("search_vector"), _tsquery(alternatives)))
    return papers.filter(
        reduce(or_, (reduce(and_, map(_fts5_term, terms)) for terms in alternatives))
    )


@dataclass(frozen=True, slots=True)
class SearchResults:
    """The newest CANDIDATES matches, best first: a sequence Paginator can page.

    `ids` are in the order shown; `page(window)` reads those papers.
    `capped` says more papers matched than were ranked ("1,000+ papers").
    """

    ids: list[int]
    capped: bool
    page: Callable[[slice], list[Paper]]

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, window: slice) -> list[Paper]:
        return self.page(window) if self.ids else []


def search_papers(text: str, **filters: Any) -> SearchResults:
    """The newest CANDIDATES papers matching the text and filters (those of
    `matching_papers`), best first; newest first with no text.

    Ranking every match costs what the matches number (tens of thousands for a
    common word): only a bounded set of the newest, taken from the full-text
    index, is ranked. Each paper read carries `matched_runs`, the words of its
    title and abstract that a positive term matched (a phrase's where they
    stand in a row); pass the papers shown to `highlight`, then to
    papers.rows.search_rows.
    """
    alternatives = parse_query(text) if text.strip() else []
    if alternatives and connection.vendor == "postgresql":
        return _ranked_full_text(filtered_papers(**filters), alternatives)
    matches = matching_papers(text, **filters)
    among, capped = newest_matches(matches, CANDIDATES)
    candidates = Paper.objects.filter(
        IsAmong(among) if connection.vendor == "postgresql" else Q(pk__in=among)
    )
    if not alternatives:
        ranked = candidates.order_by(*NEWEST_FIRST)
    else:
        ranked = _fts5(candidates, alternatives)
    ranked = ranked.only(*SHOWN_FIELDS)

    def page(window: slice) -> list[Paper]:
        papers = list(ranked[window])
        for paper in papers:
            paper.matched_runs = marked_runs(  # type: ignore[attr-defined]
                getattr(paper, "title_marked", None)
            ) | marked_runs(getattr(paper, "abstract_marked", None))
        return papers

    return SearchResults(among, capped, page)


def _ranked_full_text(
    papers: QuerySet[Paper], alternatives: list[list[Term]]
) -> SearchResults:
    """PostgreSQL: the newest of these papers matching the query, ranked where
    they are found (ts_rank, then newest first); the page's papers read with
    their marks."""
    ids, capped = newest_matches(papers, CANDIDATES, rank=_tsquery(alternatives))
    positive = _positive(alternatives)

    def page(window: slice) -> list[Paper]:
        shown = ids[window]
        read = Paper.objects.filter(IsAmong(shown)).only(*SHOWN_FIELDS)
        by_id = {paper.pk: paper for paper in read}
        papers = [by_id[pk] for pk in shown if pk in by_id]
        if positive:
            # Their words as the index read them (migration 0015).
            texts = [search_text(f"{p.title}\n{p.abstract}") for p in papers]
            for paper, runs in zip(
                papers, matched_runs(texts, positive, CONFIG), strict=True
            ):
                paper.matched_runs = runs  # type: ignore[attr-defined]
        return papers

    return SearchResults(ids, capped, page)


def newest_matches(
    matches: QuerySet[Paper], limit: int, *, rank: RawSQL | None = None
) -> tuple[list[int], bool]:
    """The ids of the `limit` newest of these papers, newest first; or, with a
    tsquery `rank`, of those of them matching it, best first (ts_rank, then
    newest first); and whether more papers matched.

    Finding the newest of a word's matches reads every match (PostgreSQL sorts
    what the full-text index gives), so the search looks in windows of the
    newest papers first, where the full-text index and the date's are
    combined: once a window holds more than `limit` matches, no older paper
    can be among the newest. A common word stops in the first window, whatever
    the corpus's size; a rarer one in the next, sized from how many the first
    held; a rare one reads the whole corpus, where it has few matches. A
    window inside the index of the newest papers (papers.recent_index) is
    matched there, its days and words read together.
    """
    ordered = matches.order_by(*NEWEST_FIRST)
    wanted = 0.0
    for papers, start, indexed in window_starts():
        if papers < wanted:
            continue
        window = ordered.filter(_since(start, indexed=rank is not None and indexed))
        ids, found = _newest(window, limit, rank, indexed)
        if found > limit:
            return ids, True
        # Matches this sparse fill `limit` only in a window this much larger.
        wanted = papers * WINDOW_MARGIN * (limit + 1) / max(found, 1)
    ids, found = _newest(ordered, limit, rank, indexed=False)
    return ids, found > limit


def _since(start: date, *, indexed: bool) -> Q | RawSQL:
    """Papers announced on or after `start`, and those without a day (first in
    this order); `indexed`: written as the index of the newest papers holds
    the day, so that PostgreSQL reads the window's days there."""
    if indexed:
        return RawSQL(f"{DAY} >= %s", [start], output_field=BooleanField())
    return Q(first_announced__gte=start) | Q(first_announced__isnull=True)


def _newest(
    ordered: QuerySet[Paper],
    limit: int,
    rank: RawSQL | None,
    indexed: bool,
) -> tuple[list[int], int]:
    """The `limit` newest ids, of those matching `rank` ranked (matched on the
    newest papers' index when `indexed`), and how many of the `limit` + 1
    newest there are."""
    if rank is None:
        ids = list(ordered.values_list("id", flat=True)[: limit + 1])
        return ids[:limit], len(ids)
    # Ranked in the scan that finds them: the vector is in the row
    # (migration 0011), read once, and never carried through the sort; then
    # put in rank order there, so that only the ids come back.
    vector = RECENT_VECTOR if indexed else F("search_vector")
    newest = (
        ordered.filter(Matches(vector, rank))
        .annotate(
            rank=Func(
                F("search_vector"), rank, function="ts_rank", output_field=FloatField()
            )
        )
        .values_list("id", "first_announced", "rank")[: limit + 1]
    )
    sql, params = newest.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT array_agg(id ORDER BY rank DESC, {NEWEST_ROWS}) "
            "FILTER (WHERE age <= %s), count(*) FROM ("
            f"SELECT *, row_number() OVER (ORDER BY {NEWEST_ROWS}) AS age "
            f"FROM ({sql}) AS newest (id, day, rank)) AS aged",
            (limit, *params),
        )
        ids, found = cursor.fetchone()
    return ids or [], found


def window_starts() -> list[tuple[int, date, bool]]:
    """(papers, the announcement day of the papers-th newest, whether the index
    of the newest papers holds them) for each of WINDOW_PAPERS the corpus
    fills, kept in the cache a while: windows from stale days still find the
    newest matches, since the last query of newest_matches has no window."""
    return cached_value(WINDOWS_KEY, _window_starts, WINDOWS_SECONDS)


def _window_starts() -> list[tuple[int, date, bool]]:
    days = Paper.objects.order_by(*NEWEST_FIRST).values_list(
        "first_announced", flat=True
    )
    cutoff = recent_cutoff()
    starts = []
    for papers in WINDOW_PAPERS:
        found = list(days[papers - 1 : papers])
        if not found:
            break  # the corpus is smaller: the last query reads it all
        if (start := found[0]) is not None:
            starts.append((papers, start, cutoff is not None and start >= cutoff))
    return starts


def parse_query(text: str) -> list[list[Term]]:
    """The query's alternatives (split at `or`), each the terms that must all
    hold; empty when there is nothing to search for."""
    alternatives: list[list[Term]] = [[]]
    for match in TERM.finditer(as_typed(text)):
        quoted = match.group(2) is not None
        words = search_text(" ".join(match.group(2 if quoted else 4).split()))
        if not quoted and words.lower() == "or":
            alternatives.append([])
        elif is_searchable(words, quoted=quoted):
            excluded = bool(match.group(1) or match.group(3))
            also = None if quoted else other_number(words)
            alternatives[-1].append(Term(words, excluded, also))
    return [terms for terms in alternatives if terms]


def is_searchable(words: str, *, quoted: bool = False) -> bool:
    """Whether a term's words hold something to search for: a letter or a
    digit, and unless quoted a word that is no stop word ("(the)" and "A*"
    are "the" and "a" to both databases)."""
    atoms = WORD_PARTS.findall(words.lower())
    return bool(atoms) and (quoted or not STOP_WORDS.issuperset(atoms))


def other_number(word: str) -> str | None:
    """An acronym's plural, or singular (LLM, LLMs; llms, llm); None for other
    words, and for an acronym ending in s that is no plural (GPS, vs, fps)."""
    if len(word) < 2 or not ACRONYM.fullmatch(word):
        return None
    if word[-1] not in "sS":
        return f"{word}s"
    plural = word[-1] == "s" and (
        word[-2].isupper() or (word.islower() and len(word) >= 4)
    )
    return word[:-1] if plural else None


def as_typed(text: str) -> str:
    """The query with its syntax as a keyboard types it (NFKC, TYPED_SYNTAX):
    what parse_query reads, and what a saved search's checks must read."""
    return typed_with_places(text)[0]


def typed_with_places(text: str) -> tuple[str, list[int]]:
    """`as_typed(text)`, and for each of its characters (and its end) the place
    in `text` it comes from: NFKC writes "…" as "...", three for one. Each
    character is normalised alone, so that places stay known."""
    parts = [unicodedata.normalize("NFKC", character) for character in text]
    places = [place for place, part in enumerate(parts) for _ in part]
    return "".join(parts).translate(TYPED_SYNTAX), [*places, len(text)]


def arxiv_id_query(text: str) -> tuple[str, int | None] | None:
    """(id without version, version or None) when the whole text names one
    arXiv paper; None for any other text."""
    match = ARXIV_QUERY.fullmatch(text.strip())
    if match is None:
        return None
    arxiv_id, version = match.group("id"), match.group("version")
    archive, slash, number = arxiv_id.rpartition("/")
    if slash:  # hep-th/9901001, math.GT/0309136: arXiv writes them so
        name, dot, subject = archive.partition(".")
        arxiv_id = f"{name.lower()}{dot}{subject.upper()}/{number}"
    elif (len(arxiv_id) == 10) != (arxiv_id[:4] >= FIVE_DIGITS_SINCE):
        return None  # a number arXiv never gave (2607.1775): words to search
    return arxiv_id, int(version) if version else None


def without_fields(text: str) -> tuple[str, list[str]]:
    """The query with arXiv's field prefixes gone, and the categories its
    `cat:` terms named (gone too): what a query with prefixes meant."""
    categories = [
        match.group(1)
        for match in re.finditer(r"(?<!\S)cat:(\S+)", text, re.IGNORECASE)
    ]
    # An excluded category has no filter to become: it goes.
    text = re.sub(r"(?<!\S)-?cat:\S+", "", text, flags=re.IGNORECASE)
    return " ".join(FIELD_PREFIX.sub("", text).split()), categories


def _tsquery(alternatives: list[list[Term]]) -> RawSQL:
    """The query as one tsquery: terms joined by &&, alternatives by ||."""
    sql, params = [], []
    for terms in alternatives:
        matched = []
        for term in terms:
            forms = " || ".join([TERM_TSQUERY] * len(term.forms))
            matched.append(f"{'!!' if term.excluded else ''}({forms})")
            params += [form for form in term.forms for _ in range(4)]
        sql.append(f"({' && '.join(matched)})")
    return RawSQL(" || ".join(sql), params, output_field=SearchQueryField())


def _fts5(papers: QuerySet[Paper], alternatives: list[list[Term]]) -> QuerySet[Paper]:
    """The candidates (matches all) ranked, with their marks."""
    if any(all(term.excluded for term in terms) for terms in alternatives):
        # Some papers match by what they lack: nothing to rank or mark them by.
        return papers.order_by(*NEWEST_FIRST)
    # Every paper found matches one of the positive terms in papers_paper_fts
    # (an unstemmed author match is a stemmed one too), so joining it loses none.
    # FTS5's bm25() and highlight() need that join: extra() is the ORM's only way.
    return papers.extra(
        select={
            "rank": FTS_RANK,
            "title_marked": "highlight(papers_paper_fts, 0, %s, %s)",
            "abstract_marked": "highlight(papers_paper_fts, 1, %s, %s)",
        },
        select_params=[START, STOP, START, STOP],
        tables=["papers_paper_fts"],
        where=[
            "papers_paper_fts.rowid = papers_paper.id",
            "papers_paper_fts MATCH %s",
        ],
        params=[" OR ".join(map(_fts_phrase, _positive(alternatives)))],
    ).order_by("rank", "-first_announced", "-id")


def _fts5_term(term: Term) -> Q:
    rows = reduce(
        or_,
        (
            Q(pk__in=RawSQL(TERM_ROWS, [f"{{title abstract}} : {phrase}", phrase]))
            for phrase in map(_fts_phrase, term.forms)
        ),
    )
    return ~rows if term.excluded else rows


def _fts_phrase(text: str) -> str:
    """The text as one FTS5 string: any characters, never a syntax error."""
    return '"' + text.replace('"', '""') + '"'


def _positive(alternatives: list[list[Term]]) -> list[str]:
    return [
        form
        for terms in alternatives
        for term in terms
        if not term.excluded
        for form in term.forms
    ]
