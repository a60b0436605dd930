"""Read-side queries over papers, shared by pages, API and digests."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date
from datetime import datetime
from datetime import timedelta
from typing import NamedTuple

from django.db.models import Count
from django.db.models import F
from django.db.models import Max
from django.db.models import Min
from django.db.models import Prefetch
from django.db.models import QuerySet
from django.db.models import Window
from django.db.models.functions import RowNumber
from django.http import Http404

from accounts.models import User
from core.api.errors import missing
from papers.ingest.records import ParseError
from papers.ingest.records import split_arxiv_id
from papers.library import with_saved_flag
from papers.models import Authorship
from papers.models import Category
from papers.models import IngestRun
from papers.models import Paper
from papers.models import SimilarPaper
from papers.routes import author_address

# Related papers are counted among those announced this close to the paper:
# counting the shared topics of every paper of its topics grew with the corpus
# (95 s for a paper page at a million papers).
RELATED_WINDOW = timedelta(days=60)
# Similar papers a paper's page and the API show, and topics.similar stores.
SIMILAR_SHOWN = 10
# The most authors and affiliations a paper's row shows (its drawer's); the
# rest it counts.
ROW_AUTHORS = 12
ROW_AFFILIATIONS = 6
# How many authors a paper's page lists before folding the rest ("All 572
# authors"), and an Atom entry names: a collaboration's thousands put the
# abstract screens below the title, and make a feed megabytes.
AUTHORS_BEFORE_FOLD = 25


def with_listing_data(papers: QuerySet[Paper]) -> QuerySet[Paper]:
    """The papers with their primary category and `active_tags`, what a
    paper's page and the API show besides its authors (with_authors, once the
    papers are read; a list's rows read row_papers). The search vector is
    never read."""
    return (
        papers.defer("search_vector")
        .select_related("primary_category")
        .prefetch_related(_active_tags())
    )


class ListedAuthor(NamedTuple):
    """An author as a paper's page and the API give them."""

    id: int
    name: str
    affiliations: list[str]

    def get_absolute_url(self) -> str:
        return author_address(self.id)


def with_authors(papers: Iterable[Paper], *, affiliations: bool = False) -> list[Paper]:
    """The papers, each with `listed_authors`: every author in order, with
    their affiliations by name where asked (else none), in a query or two.
    Read as values, not models: a collaboration's paper has thousands, and a
    page of 25 of them took seconds to build as objects."""
    listed = list(papers)
    authors: dict[int, list[ListedAuthor]] = {paper.pk: [] for paper in listed}
    named: dict[int, list[str]] = {}
    if affiliations:
        given = (
            Authorship.affiliations.through.objects.filter(
                authorship__paper_id__in=authors
            )
            .order_by("affiliation__name")
            .values_list("authorship_id", "affiliation__name")
        )
        for authorship_id, name in given:
            named.setdefault(authorship_id, []).append(name)
    rows = (
        Authorship.objects.filter(paper_id__in=authors)
        .order_by("paper_id", "position")
        .values_list("pk", "paper_id", "author_id", "author__name")
    )
    for pk, paper_id, author_id, name in rows:
        authors[paper_id].append(ListedAuthor(author_id, name, named.get(pk, [])))
    for paper in listed:
        paper.listed_authors = authors[paper.pk]  # type: ignore[attr-defined]
    return listed


def row_papers(papers: QuerySet[Paper]) -> list[Paper]:
    """The papers as a row (partials/paper_row.html) shows them, in a fixed
    number of queries whatever their number of authors (a collaboration's
    thousands): `shown_authors`, the first ROW_AUTHORS in order, of
    `author_count`; `shown_affiliations`, the first ROW_AFFILIATIONS in the
    order first given, of `affiliation_count`; and `active_tags`."""
    # The count is each row's window over all of the paper's authorships,
    # taken before the slice leaves its first few.
    first = Authorship.objects.select_related("author").annotate(
        author_count=Window(Count("*"), partition_by=F("paper_id"))
    )
    listed: list[Paper] = list(
        papers.defer("search_vector")
        .select_related("primary_category")
        .prefetch_related(
            Prefetch(
                "authorships",
                queryset=first.order_by("position")[:ROW_AUTHORS],
                to_attr="shown_authorships",
            ),
            _active_tags(),
        )
    )
    affiliations = _first_affiliations([paper.pk for paper in listed])
    for paper in listed:
        shown = paper.shown_authorships  # type: ignore[attr-defined]
        paper.shown_authors = [authorship.author for authorship in shown]  # type: ignore[attr-defined]
        paper.author_count = shown[0].author_count if shown else 0  # type: ignore[attr-defined]
        names = affiliations.get(paper.pk, [])
        paper.shown_affiliations = [name for name, _ in names]  # type: ignore[attr-defined]
        paper.affiliation_count = names[0][1] if names else 0  # type: ignore[attr-defined]
    return listed


def _first_affiliations(paper_ids: list[int]) -> dict[int, list[tuple[str, int]]]:
    """Each paper's first ROW_AFFILIATIONS affiliations, distinct, in the order
    its authors give them (one author's by name), each with how many the paper
    has in all."""
    paper = F("authorship__paper_id")
    ranked = (
        Authorship.affiliations.through.objects.filter(
            authorship__paper_id__in=paper_ids
        )
        .values(paper=paper, name=F("affiliation__name"))
        .annotate(first=Min("authorship__position"))
        .annotate(
            rank=Window(
                RowNumber(), partition_by=paper, order_by=[F("first"), F("name")]
            ),
            count=Window(Count("*"), partition_by=paper),
        )
        .filter(rank__lte=ROW_AFFILIATIONS)  # type: ignore[misc]
        .order_by("paper", "rank")
    )
    found: dict[int, list[tuple[str, int]]] = {}
    for row in ranked:
        found.setdefault(row["paper"], []).append((row["name"], row["count"]))
    return found


def _active_tags() -> Prefetch:
    """`active_tags`: the paper's tag in each active topic (with the topic, by
    topic name), which says why it is there."""
    # Tags come from the topics app, which builds on this one: reached through
    # the relation, not imported.
    tag_model = Paper._meta.get_field("paper_topics").related_model
    return Prefetch(
        "paper_topics",
        queryset=tag_model._default_manager.filter(topic__is_active=True)
        .select_related("topic")
        .order_by("topic__name"),
        to_attr="active_tags",
    )


def get_paper(identifier: str, user: User | None = None) -> Paper:
    """The paper for an arXiv id with or without its version suffix, with
    what its page shows (with_listing_data, with_authors), or Http404; with
    `user`, annotated with whether they saved it."""
    arxiv_id = _asked_id(identifier)
    papers = with_listing_data(Paper.objects.filter(arxiv_id=arxiv_id))
    if user is not None:
        papers = with_saved_flag(papers, user)
    paper = papers.prefetch_related("categories").first()
    if paper is None:
        raise Http404(missing("paper", "arXiv id", arxiv_id))
    return with_authors([paper], affiliations=True)[0]


def get_paper_row(identifier: str) -> Paper:
    """The paper for an arXiv id with or without its version suffix, with its
    primary category and nothing else it links to, or Http404: for Save, Rate,
    Flag and Ask, which show neither its authors (a collaboration's thousands)
    nor its tags."""
    arxiv_id = _asked_id(identifier)
    paper = (
        Paper.objects.filter(arxiv_id=arxiv_id)
        .defer("search_vector")
        .select_related("primary_category")
        .first()
    )
    if paper is None:
        raise Http404(missing("paper", "arXiv id", arxiv_id))
    return paper


def _asked_id(identifier: str) -> str:
    try:
        arxiv_id, _ = split_arxiv_id(identifier)
    except ParseError as exc:
        raise Http404(str(exc)) from exc
    return arxiv_id


def find_paper(arxiv_id: str) -> Paper | None:
    """The stored paper with this id (without version), its id only; or None."""
    return Paper.objects.filter(arxiv_id=arxiv_id).only("arxiv_id").first()


def related_papers(
    paper: Paper, topic_ids: list[int], limit: int = 6, besides: Iterable[str] = ()
) -> list[Paper]:
    """Papers sharing the most of these topics with `paper`, of those announced
    within RELATED_WINDOW of it, newest first; with no topics, the newest of its
    home category (`home_category`). Papers `besides` (arXiv ids, shown
    already) left out."""
    shown = Paper.objects.filter(arxiv_id__in=list(besides)).values("pk")
    if topic_ids:
        return _sharing_topics(paper, topic_ids, limit, shown)
    category = home_category(paper)
    if category is None:
        return []
    in_category = (
        Paper.objects.filter(primary_category=category)
        if category.pk == paper.primary_category_id
        else Paper.objects.filter(categories=category)
    )
    return list(
        in_category.exclude(pk=paper.pk)
        .exclude(pk__in=shown)
        .order_by("-first_announced", "-id")
        .only("arxiv_id", "title", "first_announced")[:limit]
    )


def home_category(paper: Paper) -> Category | None:
    """Its primary category; for a paper whose listing named none (arXiv's OAI
    records of some cross-lists), the first of its categories by code."""
    if paper.primary_category_id:
        return paper.primary_category
    return min(paper.categories.all(), key=lambda c: c.code, default=None)


def _sharing_topics(
    paper: Paper, topic_ids: list[int], limit: int, shown: QuerySet
) -> list[Paper]:
    # Counted over the tags' and the papers' indexes alone, ids and dates (an
    # index-only scan of each): joining the papers' rows for the count read
    # the whole table for a large topic. Then the few papers ranked, by id.
    tag_model = Paper._meta.get_field("paper_topics").related_model
    tags = tag_model._default_manager.filter(topic__in=topic_ids)
    if paper.first_announced is not None:
        tags = tags.filter(
            paper__first_announced__range=(
                paper.first_announced - RELATED_WINDOW,
                paper.first_announced + RELATED_WINDOW,
            )
        )
    ranked = list(
        tags.exclude(paper=paper.pk)
        .exclude(paper__in=shown)
        .values("paper_id", "paper__first_announced")
        .annotate(shared=Count("topic_id"))
        .order_by("-shared", "-paper__first_announced", "-paper_id")
        .values_list("paper_id", flat=True)[:limit]
    )
    papers = Paper.objects.only("arxiv_id", "title", "first_announced").in_bulk(ranked)
    return [papers[pk] for pk in ranked if pk in papers]


def similar_ids(paper: Paper) -> list[str]:
    """The arXiv ids of the papers most similar to `paper` by text, nearest
    first (precomputed by topics.similar)."""
    return list(
        SimilarPaper.objects.filter(paper=paper)
        .order_by("rank")
        .values_list("similar__arxiv_id", flat=True)[:SIMILAR_SHOWN]
    )


# How far before its mark a pass that looks at the papers written since it
# reads again: a paper is stamped when an ingest writes it and seen when its
# transaction commits, which may be after another, stamped later, committed
# (two ingests at once; `manage.py ingest FILE` writes a file in one); and two
# hosts' clocks differ.
LATE_COMMIT_OVERLAP = timedelta(minutes=10)


def last_modified() -> datetime | None:
    """When the latest stored or changed paper was written: the mark of the
    passes that look only at the papers written since their last (and
    LATE_COMMIT_OVERLAP before it)."""
    return Paper.objects.aggregate(latest=Max("modified_at"))["latest"]


def last_harvest() -> tuple[datetime, date | None] | None:
    """When the last ingest run that stored anything finished, and the day the
    newest paper held was announced (how current the papers are, which the
    run's time alone does not say: an old snapshot loaded today); or None."""
    finished = (
        IngestRun.objects.filter(
            status__in=[IngestRun.Status.SUCCEEDED, IngestRun.Status.PARTIAL]
        )
        .order_by("-finished_at")
        .values_list("finished_at", flat=True)
        .first()
    )
    if finished is None:
        return None
    newest = Paper.objects.aggregate(newest=Max("first_announced"))["newest"]
    return finished, newest
