from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.contrib import messages
from django.contrib.admin import helpers
from django.db.models import Count
from django.db.models import Max
from django.db.models import Min
from django.db.models import QuerySet
from django.http import HttpRequest
from django.http import HttpResponse
from django.shortcuts import render
from django.template.defaultfilters import pluralize
from django.utils.html import format_html
from django.utils.html import format_html_join

from core.queue import send
from notifications.delivery import FINISHED
from notifications.delivery import leave_to_the_sweep
from notifications.delivery import resend
from notifications.digest import stored_content
from notifications.mailer import site_url
from notifications.models import Digest
from notifications.models import DigestPaper
from notifications.tasks import send_digest


class DigestPaperInline(admin.TabularInline):
    model = DigestPaper
    fields = ["paper", "topic"]
    readonly_fields = ["paper", "topic"]
    extra = 0
    can_delete = False

    def get_queryset(self, request: HttpRequest) -> QuerySet[DigestPaper]:
        # Each row names its paper and topic.
        return super().get_queryset(request).select_related("paper", "topic")

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Digest)
class DigestAdmin(admin.ModelAdmin):
    list_display = [
        "user",
        "kind",
        "period_start",
        "due_at",
        "status",
        "paper_count",
        "attempts",
        "sent_at",
        "reason",
    ]
    list_filter = ["status", "kind", "frequency", "period_start"]
    list_select_related = ["user"]
    search_fields = ["user__email", "to_email", "message_id"]
    raw_id_fields = ["user"]
    # Counting every digest, and the months of a date hierarchy, read the whole
    # table on every page (520,000 digests: 0.9-2 s); the period filter narrows.
    show_full_result_count = False
    readonly_fields = [
        "user",
        "kind",
        "frequency",
        "period_start",
        "due_at",
        "status",
        "reason",
        "since",
        "contents",
        "paper_count",
        "attempts",
        "enqueued_at",
        "retry_at",
        "claimed_by",
        "claimed_at",
        "sent_at",
        "to_email",
        "message_id",
        "created_at",
        "updated_at",
    ]
    # Shown as its contents, not edited: the sender plans and unplans them.
    exclude = ["sections"]
    inlines = [DigestPaperInline]
    actions = ["resend_digests"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="sections")
    def contents(self, digest: Digest) -> str:
        """What the planned digest holds, section by section, named as its
        email names them (its sections are stored as ids)."""
        content = stored_content(digest, site_url())
        if content is None:
            if digest.status in (Digest.Status.PENDING, Digest.Status.SENDING):
                return "Not planned yet: planned when it is first sent."
            return "None (see its reason)."
        if not content.sections:
            return "None now: the topics it held were deleted since."
        return format_html(
            "<ul>{}</ul>",
            format_html_join(
                "",
                "<li>{}: {} paper{}{}</li>",
                (
                    (
                        section.title,
                        len(section.entries),
                        pluralize(len(section.entries)),
                        f", {section.more} more counted and linked"
                        if section.more
                        else "",
                    )
                    for section in content.sections
                ),
            ),
        )

    @admin.action(
        description="Resend the selected sent, skipped or failed digests…",
        permissions=["change"],
    )
    def resend_digests(
        self, request: HttpRequest, queryset: QuerySet[Digest]
    ) -> HttpResponse | None:
        # Each goes as a new email: asked first, saying to how many readers,
        # as "select all" reaches every digest ever sent.
        if request.POST.get("post") != "yes":
            finished = queryset.filter(status__in=FINISHED).aggregate(
                digests=Count("pk"),
                readers=Count("user", distinct=True),
                first=Min("period_start"),
                last=Max("period_start"),
            )
            return render(
                request,
                "admin/notifications/resend.html",
                {
                    **self.admin_site.each_context(request),
                    **finished,
                    "selected": request.POST.getlist(helpers.ACTION_CHECKBOX_NAME),
                    "select_across": request.POST.get("select_across", "0"),
                },
            )
        ids = resend(queryset)
        # Put back and committed: one the broker does not take waits in the
        # outbox for its next round.
        deferred = [pk for pk in ids if not send(send_digest, pk)]
        for pk in deferred:
            leave_to_the_sweep(pk)
        sent = len(ids) - len(deferred)
        if sent and settings.CELERY_TASK_ALWAYS_EAGER:
            # No broker (the embedded default): send() sent them here, already.
            self.message_user(
                request, f"Tried {sent} digest(s) in this request: see their status."
            )
        elif sent:
            self.message_user(request, f"{sent} digest(s) sent to the email queue.")
        if deferred:
            self.message_user(
                request,
                f"The task queue is unavailable: {len(deferred)} digest(s) will go "
                "at beat's first tick once it is back.",
                messages.WARNING,
            )
        return None


@admin.register(DigestPaper)
class DigestPaperAdmin(admin.ModelAdmin):
    list_display = ["paper", "user", "topic", "digest"]
    # A digest is named by its reader: read with it, not once a row.
    list_select_related = ["paper", "user", "topic", "digest__user"]
    search_fields = ["user__email", "paper__arxiv_id"]
    raw_id_fields = ["digest", "user", "paper", "topic"]
