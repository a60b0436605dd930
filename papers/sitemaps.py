"""The sitemap (/sitemap.xml): an index of sections, each paged, for crawlers.

Built on django.contrib.sitemaps, with two changes for a corpus of millions:

Addresses. Every <loc> is on MOMENTUM_SITE_URL, as every absolute link the
site gives (accounts.sites), not the request's scheme and the Sites record's
host that Django's views would use.

Pages. Papers and authors are paged by blocks of PAGE_ROWS rows in id order
(RowBlockPaginator), not by Django's Paginator over the items: a page is a
range scan of an index between two ids read from the primary key's index,
where an OFFSET over the items read every row before the page (the last page
of a million papers read them all). New papers join the last page, so a page's
<lastmod> moves only when its own rows change, until rows before it are
deleted. An author with no paper leaves their block's page a row short.

No server cache: crawlers read a page a few times a day, and each costs a
bounded range scan. The answers say Cache-Control: public, max-age=SITEMAP_MAX_AGE,
so a proxy or CDN in front may keep them that long. A crawler asking again is
answered 304 Not Modified (conditional_page): by its If-None-Match, against the
hash of the body, which is exact; or by its If-Modified-Since, against the
newest lastmod shown, which a removal (a paper deleted, a topic deactivated)
does not move: its address stays with the crawler until the page's next change
or its tag is asked, and answers 404 meanwhile. The body is still read and
rendered; what is saved is sending it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from typing import TypeAlias
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.sitemaps import Sitemap
from django.contrib.sitemaps.views import sitemap as django_sitemap
from django.contrib.sitemaps.views import x_robots_tag
from django.core.paginator import Page
from django.core.paginator import Paginator
from django.db.models import F
from django.db.models import Max
from django.db.models import Model
from django.db.models import QuerySet
from django.db.models import Subquery
from django.db.models.functions import Coalesce
from django.db.models.functions import Greatest
from django.http import HttpRequest
from django.http import HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.cache import patch_cache_control
from django.utils.functional import cached_property
from django.utils.http import http_date
from django.views.decorators.http import conditional_page

from accounts.sites import site_domain
from accounts.sites import site_url
from papers.models import Author
from papers.models import Authorship
from papers.models import PageDate
from papers.models import Paper
from papers.routes import address
from papers.routes import author_address

SITEMAP_MAX_AGE = 60 * 60
# Rows a page of papers or authors covers: well under the protocol's 50,000
# URLs, so that a page renders in a fraction of a second.
PAGE_ROWS = 10_000


def page_changed(paper: str = "") -> Greatest:
    """When a paper's page last changed: the later of its row's last write and
    the last change of what it shows from other rows (its PageDate, if it has
    one: its topics, an author's name), joined by its key. `paper`: the path
    to the paper from the rows read ("paper__")."""
    written = F(f"{paper}modified_at")
    return Greatest(written, Coalesce(f"{paper}page_date__changed_at", written))


def latest_page_change() -> datetime | None:
    """The newest change of any paper's page: the later of papers' newest write
    and the newest PageDate, each read from its index (one query)."""
    written = Max("modified_at")
    shown = PageDate.objects.order_by("-changed_at").values("changed_at")[:1]
    return Paper.objects.aggregate(
        latest=Greatest(written, Coalesce(Subquery(shown), written))
    )["latest"]


class SiteSitemap(Sitemap):
    """A section whose addresses are on MOMENTUM_SITE_URL."""

    def get_protocol(self, protocol: str | None = None) -> str:
        return urlsplit(settings.MOMENTUM_SITE_URL).scheme

    def get_domain(self, site: Any = None) -> str:
        return site_domain()


class RowBlockPaginator(Paginator):
    """What a sitemap reads of a Paginator (num_pages, page(n).object_list),
    by blocks of `model`'s rows in id order: page n holds the `rows` whose
    `key` (an id of `model`) is from the id of the model's ((n-1)*per_page)th
    row up to that of its (n*per_page)th. The ids of those two rows are read
    from the primary key's index alone, where an OFFSET over the rows
    themselves read every row before the page. Blocks of ids, not of rows,
    left pages empty: ids are not dense (PostgreSQL's sequences move on every
    upsert, even one that updates, and rows are deleted)."""

    def __init__(
        self, rows: QuerySet[Any], per_page: int, model: type[Model], key: str
    ) -> None:
        super().__init__(rows, per_page)
        self.rows, self.model, self.key = rows, model, key

    @cached_property
    def count(self) -> int:
        return self.model._default_manager.count()

    def page(self, number: int | str) -> Page:
        number = self.validate_number(number)
        ids = self.model._default_manager.order_by("pk").values_list("pk", flat=True)
        first = (number - 1) * self.per_page
        rows = self.rows.filter(
            **{f"{self.key}__gte": Subquery(ids[first : first + 1])}
        )
        if number < self.num_pages:
            after = first + self.per_page
            rows = rows.filter(**{f"{self.key}__lt": Subquery(ids[after : after + 1])})
        return Page(rows.order_by(self.key), number, self)


class RowBlockSitemap(SiteSitemap):
    """A section paged by blocks of `model`'s rows, whose ids its items' `key` holds."""

    limit = PAGE_ROWS
    model: type[Model]
    key = "pk"

    def items(self) -> QuerySet[Any, Any]:
        """Each section's own (papers', authors'): its rows, holding `key`.
        A section without them is a programming error, not an empty page."""
        raise NotImplementedError

    @property
    def paginator(self) -> RowBlockPaginator:
        return RowBlockPaginator(self.items(), self.limit, self.model, self.key)


class PaperSitemap(RowBlockSitemap):
    """Every paper held: each has its page, withdrawn ones too (which say so).
    Its lastmod is the last change of what its page says of it (page_changed):
    a new version, a withdrawal, a corrected title or author's name, a topic it
    joined or left. Not of its lists of similar and related papers, which move
    with other papers (every harvest, for a busy topic's): dating a page by
    them would date it anew each day, and cost a write to every paper of a
    topic each time one joins."""

    model = Paper

    def items(self) -> QuerySet[Paper, tuple[str, datetime]]:
        return (
            Paper.objects.order_by("pk")
            .annotate(lastmod=page_changed())
            .values_list("arxiv_id", "lastmod")
        )

    def location(self, item: tuple[str, datetime]) -> str:
        return address("papers:detail", "arxiv_id", item[0])

    def lastmod(self, item: tuple[str, datetime]) -> datetime:
        return item[1]

    def get_latest_lastmod(self) -> datetime | None:
        return latest_page_change()


class AuthorSitemap(RowBlockSitemap):
    """Authors of at least one paper held (one whose papers were all deleted
    has an empty page). An author's page lists their papers, with their topics
    and co-authors, so its lastmod is the last change of any of their pages
    (page_changed): a new paper of theirs, a name corrected, moves it. Read from
    the authorships of the page's block of author ids (their index), each
    joined to its paper: from the authors, PostgreSQL joined every authorship."""

    model = Author
    key = "author_id"

    def items(self) -> QuerySet[Authorship, tuple[int, datetime]]:
        return (
            Authorship.objects.order_by("author_id")
            .values("author_id")
            .annotate(latest=Max(page_changed("paper__")))
            .values_list("author_id", "latest")
        )

    def location(self, item: tuple[int, datetime]) -> str:
        return author_address(item[0])

    def lastmod(self, item: tuple[int, datetime]) -> datetime:
        return item[1]

    # An author's page changes with their papers' pages: the newest of any.
    def get_latest_lastmod(self) -> datetime | None:
        return latest_page_change()


# As Django's views take them: a sitemap, or its class.
# (Django's Sitemap is generic in its stubs only.)
Sections: TypeAlias = "dict[str, type[Sitemap[Any]] | Sitemap[Any]]"


def _public(response: HttpResponse) -> HttpResponse:
    patch_cache_control(response, public=True, max_age=SITEMAP_MAX_AGE)
    return response


@conditional_page
@x_robots_tag
def index(request: HttpRequest, sitemaps: Sections) -> HttpResponse:
    """Each page of each section, on MOMENTUM_SITE_URL, with the section's
    newest lastmod (one query a section, and one for its number of pages).
    Last-Modified is the newest of them: the start pages' entry, undated,
    never changes."""
    pages = []
    dated = []
    for section, given in sitemaps.items():
        sitemap = given() if isinstance(given, type) else given
        location = site_url(reverse("sitemap", kwargs={"section": section}))
        lastmod = sitemap.get_latest_lastmod()
        if lastmod is not None:
            dated.append(lastmod)
        for number in range(1, sitemap.paginator.num_pages + 1):
            page = location if number == 1 else f"{location}?p={number}"
            pages.append({"location": page, "last_mod": lastmod})
    response = TemplateResponse(
        request,
        "sitemap_index.xml",
        {"sitemaps": pages},
        content_type="application/xml",
    )
    if dated:
        response["Last-Modified"] = http_date(max(dated).timestamp())
    return _public(response)


@conditional_page
def section(request: HttpRequest, sitemaps: Sections, section: str) -> HttpResponse:
    """One page of one section (?p=2...): Django's view, as the index names it,
    with Last-Modified the newest lastmod of the page's items where each has one."""
    return _public(django_sitemap(request, sitemaps, section=section))
