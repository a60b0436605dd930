"""Run a FeedSource: claim it, fetch its pages, upsert each page, record the run.

Each page is written in its own transaction together with the source's
checkpoint (resumption token, ETag), so a worker killed midway leaves whole
pages behind and the next run carries on from the last one. A source is claimed
with a lease (a conditional UPDATE), so two workers never run it at once and a
dead worker's claim simply expires.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from collections.abc import Iterator
from copy import copy
from dataclasses import dataclass
from dataclasses import field
from datetime import date
from datetime import datetime
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from papers.ingest.arxiv_api import parse_api_response
from papers.ingest.formats import Format
from papers.ingest.formats import expect_format
from papers.ingest.http import FetchError
from papers.ingest.http import fetch
from papers.ingest.listings import parse_listing
from papers.ingest.oai import OaiError
from papers.ingest.oai import parse_oai_response
from papers.ingest.records import ARXIV_ID_RE
from papers.ingest.records import PaperRecord
from papers.ingest.records import ParseError
from papers.ingest.records import Rejected
from papers.ingest.runs import Tagger
from papers.ingest.runs import fail_run
from papers.ingest.runs import finish_run
from papers.ingest.runs import ingest_entries
from papers.ingest.runs import ingest_tagger
from papers.ingest.schedule import next_retry_after
from papers.ingest.schedule import next_run_after
from papers.models import FeedSource
from papers.models import IngestRun

logger = logging.getLogger(__name__)

# arXiv serves at most 2,000 results per request and 30,000 per query.
API_MAX_RESULTS = 30_000
# A source harvested for the first time starts this far back; --from goes further.
OAI_FIRST_WINDOW = timedelta(days=3)


@dataclass
class Page:
    entries: list[PaperRecord | Rejected]
    checkpoint: dict[str, object] = field(default_factory=dict)
    # A page of an incremental poll that changed nothing ends the run: the rest
    # is older and already known.
    incremental: bool = False
    note: str = ""


Progress = Callable[[IngestRun, Page], object]


def harvest_source(
    source: FeedSource,
    *,
    owner: str,
    since: date | None = None,
    until: date | None = None,
) -> IngestRun | None:
    """Run the source with the ingest tagger (run_source), then refresh what
    follows a run (the topics' momentum) if it stored new or changed papers;
    None if another worker holds the source. Idempotent."""
    tagger = ingest_tagger()
    run = run_source(source, owner=owner, tagger=tagger, since=since, until=until)
    if run is not None and (run.new_count or run.updated_count):
        tagger.after_runs()
    return run


def run_source(
    source: FeedSource,
    *,
    owner: str,
    tagger: Tagger | None = None,
    since: date | None = None,
    until: date | None = None,
    progress: Progress | None = None,
) -> IngestRun | None:
    """Harvest one source as a recorded run; None if another worker holds it.

    `since`/`until` make a backfill: recorded as a run like any other, it leaves
    the source's checkpoint, schedule and health alone. Failures are recorded on
    the run and (unless a backfill) the source, never raised.
    """
    if not claim(source, owner):
        logger.info("source %s is being run by another worker", source)
        return None
    run = IngestRun.objects.create(source=source.name, feed=source, format=source.kind)
    backfill = since is not None or until is not None
    try:
        for page in iter_pages(source, since=since, until=until):
            changed = _store_page(source, run, page, owner, tagger, backfill)
            if progress:
                progress(run, page)
            if page.incremental and not changed:
                break
    except (FetchError, ParseError) as exc:
        _record_failure(source, run, str(exc), backfill=backfill)
    except BaseException as exc:
        # Worker shutdown, time limits: record it, and let the task machinery act.
        _record_failure(source, run, f"interrupted: {exc!r}", backfill=backfill)
        raise
    else:
        finish_run(run)
        if not backfill:  # not the source's regular run: it has still to happen
            _record_success(source)
    finally:
        release(source, owner)
    return run


# What storing a page counts on its run.
PAGE_COUNTS = (
    "new_count",
    "updated_count",
    "unchanged_count",
    "rejected_count",
    "errors",
)


def _store_page(
    source: FeedSource,
    run: IngestRun,
    page: Page,
    owner: str,
    tagger: Tagger | None,
    backfill: bool,
) -> int:
    counted = {name: copy(getattr(run, name)) for name in PAGE_COUNTS}
    try:
        with transaction.atomic():
            result = ingest_entries(run, page.entries, tagger=tagger)
            if page.note:
                run.message = page.note
            run.save()
            updates: dict[str, object] = {
                "claimed_until": timezone.now() + claim_lease()
            }
            if not backfill:
                updates.update(page.checkpoint)
            FeedSource.objects.filter(pk=source.pk, claimed_by=owner).update(**updates)
            for name, value in page.checkpoint.items():
                setattr(source, name, value)
    except BaseException:
        # Its writes are undone, and so is what it counted: the failed run
        # keeps the counts of the pages stored (fetched ones stay fetched).
        for name, value in counted.items():
            setattr(run, name, value)
        raise
    return len(result.changed_ids)


def take_due_sources(now: datetime) -> list[int]:
    """The sources to run now, each taken once however many beats ask: the
    enabled ones whose next run is due (moved on to the one after), and those
    whose run a dead worker abandoned (its lease expired unreleased; freed, so
    the new run resumes from the checkpoint and marks the old one abandoned).
    Every take is a conditional UPDATE that only one caller can win."""
    taken = []
    due = FeedSource.objects.filter(
        Q(next_run_at__isnull=True) | Q(next_run_at__lte=now), enabled=True
    ).only("kind", "next_run_at")
    for source in due:
        moved = FeedSource.objects.filter(
            pk=source.pk, next_run_at=source.next_run_at
        ).update(next_run_at=next_run_after(source.kind, now))
        if moved == 1:
            taken.append(source.pk)
    abandoned = (
        FeedSource.objects.filter(enabled=True, claimed_until__lt=now)
        .exclude(claimed_by="")
        .exclude(pk__in=taken)
        .only("claimed_by", "claimed_until")
    )
    for source in abandoned:
        freed = FeedSource.objects.filter(
            pk=source.pk,
            claimed_by=source.claimed_by,
            claimed_until=source.claimed_until,
        ).update(claimed_by="", claimed_until=None)
        if freed == 1:
            logger.warning("resuming %s: its worker stopped mid-run", source)
            taken.append(source.pk)
    return taken


def leave_to_the_next_tick(source_ids: list[int]) -> None:
    """Sources whose task the broker did not take: due now, so that beat's
    next tick sends them rather than their next regular run (a listing's the
    next weekday's, its day's announcement lost by then)."""
    FeedSource.objects.filter(pk__in=source_ids).update(next_run_at=timezone.now())


def claim(source: FeedSource, owner: str) -> bool:
    """Take the source for `owner` unless a live claim holds it; True if taken."""
    now = timezone.now()
    taken = FeedSource.objects.filter(
        Q(claimed_until__isnull=True) | Q(claimed_until__lt=now), pk=source.pk
    ).update(claimed_by=owner, claimed_until=now + claim_lease())
    if taken != 1:
        return False
    # A run still marked running lost its worker: that is why the claim expired.
    IngestRun.objects.filter(feed=source, status=IngestRun.Status.RUNNING).update(
        status=IngestRun.Status.FAILED,
        message="Abandoned: the worker running it stopped; the next run resumed.",
        finished_at=now,
    )
    return True


# Ends the owner of a run started by manage.py ingest, not by a worker.
COMMAND_OWNER = ":manage.py"


def harvesting_now() -> FeedSource | None:
    """A source a worker is harvesting now: its lease is live, which the claim
    and every page stored renew (a manage.py run, on no worker, aside)."""
    return (
        FeedSource.objects.filter(claimed_until__gt=timezone.now())
        .exclude(claimed_by__endswith=COMMAND_OWNER)
        .only("name")
        .order_by("-claimed_until")
        .first()
    )


def claim_lease() -> timedelta:
    return timedelta(seconds=settings.MOMENTUM_INGEST_CLAIM_SECONDS)


def release(source: FeedSource, owner: str) -> None:
    FeedSource.objects.filter(pk=source.pk, claimed_by=owner).update(
        claimed_by="", claimed_until=None
    )


def _record_success(source: FeedSource) -> None:
    now = timezone.now()
    FeedSource.objects.filter(pk=source.pk).update(
        last_success_at=now,
        last_error="",
        next_run_at=next_run_after(source.kind, now),
        api_resume_at=0,  # read whole: the next run may stop at a page it knows
    )


def _record_failure(
    source: FeedSource, run: IngestRun, reason: str, *, backfill: bool
) -> None:
    # Pages stored before the failure stay: each was whole and is counted.
    fail_run(run, reason, keep_counts=True)
    if backfill:  # not the source's regular run: its health and schedule stay
        return
    now = timezone.now()
    failures = _failures_in_a_row(source)
    FeedSource.objects.filter(pk=source.pk).update(
        last_error=reason,
        last_error_at=now,
        next_run_at=next_retry_after(source.kind, now, failures=failures),
    )


def _failures_in_a_row(source: FeedSource) -> int:
    """The source's failed runs since it last succeeded, the one failing now
    included (a failed backfill counts too: it only makes the wait longer)."""
    failed = IngestRun.objects.filter(feed=source, status=IngestRun.Status.FAILED)
    if source.last_success_at:
        failed = failed.filter(started_at__gt=source.last_success_at)
    return failed.count()


def iter_pages(
    source: FeedSource, *, since: date | None = None, until: date | None = None
) -> Iterator[Page]:
    """Fetch and parse the source's pages one at a time."""
    if source.kind == FeedSource.Kind.LISTING:
        return _listing_pages(source)
    if source.kind == FeedSource.Kind.API_QUERY:
        return _api_pages(source, since, until)
    return _oai_pages(source, since, until)


def _listing_pages(source: FeedSource) -> Iterator[Page]:
    url = settings.MOMENTUM_ARXIV_LISTING_URL.format(category=source.category)
    response = fetch(url, etag=source.etag, last_modified=source.last_modified)
    if response.not_modified:
        yield Page([], note="Not modified since the last run.")
        return
    expect_format(response.body, Format.LISTING_ATOM, Format.LISTING_RSS)
    listing = parse_listing(response.body)
    checkpoint: dict[str, object] = {
        name: _kept_validator(name, getattr(response, name))
        for name in ("etag", "last_modified")
    }
    yield Page(listing.records, checkpoint=checkpoint)


def _kept_validator(name: str, value: str) -> str:
    """The validator, or "" when it is longer than its column: storing it failed
    every run of the source; without it, the next fetch is unconditional."""
    width = getattr(FeedSource._meta.get_field(name), "max_length", None)
    return value if width is None or len(value) <= width else ""


def _api_pages(
    source: FeedSource, since: date | None, until: date | None
) -> Iterator[Page]:
    params = api_query_params(source.query, since, until)
    incremental = since is None and until is None and "search_query" in params
    # Newest first: a regular run stops at a page it knows, the rest being
    # older; but not before the offset a run stopped midway had reached, or the
    # results past it would never be read (new ones only push them further).
    resume_at = source.api_resume_at if incremental else 0
    start = 0
    while start < API_MAX_RESULTS:
        params.update(start=start, max_results=settings.MOMENTUM_ARXIV_API_PAGE_SIZE)
        page = parse_api_response(
            fetch(settings.MOMENTUM_ARXIV_API_URL, params=params).body
        )
        read = start + len(page.records)
        yield Page(
            page.records,
            checkpoint={"api_resume_at": max(read, resume_at)} if incremental else {},
            incremental=incremental and start >= resume_at,
        )
        start = read
        # arXiv sometimes answers a page short or empty before the end; an empty
        # page ends the run rather than looping on it.
        if not page.records or start >= (page.total_results or 0):
            return


def api_query_params(
    query: str, since: date | None, until: date | None
) -> dict[str, object]:
    """The API parameters for a source's query: an id list, or arXiv's search syntax."""
    if ids := _id_list(query):
        return {"id_list": ",".join(ids)}
    search = query
    if since or until:
        low = (since or date(1991, 1, 1)).strftime("%Y%m%d0000")
        high = (until or timezone.now().date()).strftime("%Y%m%d2359")
        search = f"({search}) AND submittedDate:[{low} TO {high}]"
    return {
        "search_query": search,
        "sortBy": "lastUpdatedDate",
        "sortOrder": "descending",
    }


def _id_list(query: str) -> list[str]:
    """The query's arXiv ids if it is a list of ids rather than a search, else []."""
    words = query.split()
    if words and all(ARXIV_ID_RE.fullmatch(word) for word in words):
        return words
    return []


def backfill_refusal(source: FeedSource) -> str | None:
    """Why the source cannot fetch a date range (a backfill), or None if it can."""
    if source.kind == FeedSource.Kind.LISTING:
        return "a daily listing holds only the latest announcement"
    if source.kind == FeedSource.Kind.API_QUERY and _id_list(source.query):
        return "its query is a list of ids, not a search"
    return None


def _oai_pages(
    source: FeedSource, since: date | None, until: date | None
) -> Iterator[Page]:
    backfill = since is not None or until is not None
    params = _oai_start_params(source, since, until)
    token_retried = False
    tokens_seen: set[str] = set()
    while True:
        try:
            page = parse_oai_response(
                fetch(settings.MOMENTUM_ARXIV_OAI_URL, params=params).body
            )
        except OaiError as exc:
            # Tokens expire daily: start over from the last completed harvest
            # (the upsert makes the overlap harmless).
            if exc.code != "badResumptionToken" or token_retried or backfill:
                raise
            token_retried = True
            source.resumption_token = ""
            params = _oai_start_params(source, since, until)
            continue
        token = page.resumption_token
        if token in tokens_seen:
            # A repository that hands back a token it gave before would be
            # harvested for ever, page after page: the run fails, and the next
            # starts from the last completed harvest, not from that token.
            yield Page(page.records, checkpoint={"resumption_token": ""})
            raise ParseError(
                f"the repository repeated resumptionToken {token!r}: a loop, stopped"
            )
        if token is not None:
            tokens_seen.add(token)
        checkpoint: dict[str, object] = {"resumption_token": token or ""}
        if token is None:
            checkpoint["harvested_until"] = until or timezone.now().date()
        yield Page(page.records, checkpoint=checkpoint)
        if token is None:
            return
        params = {"verb": "ListRecords", "resumptionToken": token}


def _oai_start_params(
    source: FeedSource, since: date | None, until: date | None
) -> dict[str, object]:
    backfill = since is not None or until is not None
    if source.resumption_token and not backfill:
        return {"verb": "ListRecords", "resumptionToken": source.resumption_token}
    params: dict[str, object] = {"verb": "ListRecords", "metadataPrefix": "arXivRaw"}
    if backfill:
        # Without --from, from arXiv's beginning (no `from`), as an API backfill
        # does: the checkpoint belongs to the regular harvest.
        start = since
    else:
        start = source.harvested_until or (timezone.now() - OAI_FIRST_WINDOW).date()
    if start:
        params["from"] = start.isoformat()
    if until:
        params["until"] = until.isoformat()
    if source.category:
        params["set"] = source.category
    return params
