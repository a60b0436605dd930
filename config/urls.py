from __future__ import annotations

from allauth.account.decorators import secure_admin_login
from django.contrib import admin
from django.templatetags.static import static
from django.urls import include
from django.urls import path
from django.urls import re_path
from django.utils.functional import lazy
from django.views.generic import RedirectView
from django.views.generic import TemplateView
from drf_spectacular.views import SpectacularSwaggerSplitView

from accounts import views as account_views
from config.health import healthz
from core.api.errors import not_found as api_not_found
from core.api.schema_view import SchemaView
from notifications.views import unsubscribe
from papers import sitemaps
from papers import views as paper_views
from topics import saved_search_views
from topics.ask import views as ask_views
from topics.feeds import reader_feed
from topics.sitemaps import PageSitemap
from topics.sitemaps import TopicSitemap
from topics.views import home

# The curators' admin names the product, not the framework.
# Staff sign in where everyone does: the site's log-in, whose limits on
# failed attempts admin's own form lacks.
admin.site.login = secure_admin_login(admin.site.login)  # type: ignore[method-assign]
admin.site.site_header = "Momentum administration"
admin.site.site_title = "Momentum admin"

# The sitemap's sections, each at /sitemap-<section>.xml (papers.sitemaps).
SITEMAPS: sitemaps.Sections = {
    "pages": PageSitemap,
    "topics": TopicSitemap,
    "papers": sitemaps.PaperSitemap,
    "authors": sitemaps.AuthorSitemap,
}

urlpatterns = [
    path("", home, name="home"),
    path("topics/", include("topics.urls")),
    # AskPDF's views live with topics' ask (topics.ask): the route is here so
    # that papers does not import the app built on it.
    path("papers/<path:arxiv_id>/ask/", ask_views.ask_paper, name="ask_paper"),
    path(
        "papers/<path:arxiv_id>/ask/stream/",
        ask_views.ask_paper_stream,
        name="ask_paper_stream",
    ),
    path("papers/", include("papers.urls")),
    path("search/", paper_views.search, name="search"),
    path("authors/<int:author_id>/", paper_views.author_detail, name="author"),
    path(
        "authors/<int:author_id>/follow/",
        paper_views.follow_author,
        name="author_follow",
    ),
    path(
        "accounts/confirm-email/<str:key>/",
        account_views.ConfirmOnPostView.as_view(),
        name="account_confirm_email",
    ),
    path(
        "accounts/password/reset/",
        account_views.ResetThenSayView.as_view(),
        name="account_reset_password",
    ),
    path(
        "accounts/email/",
        account_views.ResendThenSayView.as_view(),
        name="account_email",
    ),
    path("accounts/", include("allauth.urls")),
    path("saved/", paper_views.saved, name="saved"),
    path("saved/bibtex/", paper_views.saved_bibtex, name="saved_bibtex"),
    path("saved/ris/", paper_views.saved_ris, name="saved_ris"),
    path("saved/csl.json/", paper_views.saved_csl_json, name="saved_csl_json"),
    path("settings/", include("accounts.urls")),
    # A reader's saved searches: the forms of the search and settings pages.
    path("searches/", saved_search_views.create, name="saved_search_create"),
    path("searches/<int:pk>/", saved_search_views.update, name="saved_search_update"),
    path(
        "searches/<int:pk>/delete/",
        saved_search_views.delete,
        name="saved_search_delete",
    ),
    # A reader's own feed: the key in the address is its only credential.
    path("feed/<str:key>.atom", reader_feed, name="reader_feed"),
    # What site.js reports the reader had on screen in their feed ("seen").
    path("feed/seen/", paper_views.seen, name="feed_seen"),
    path("digest/", include("notifications.urls")),
    path("unsubscribe/<str:token>/", unsubscribe, name="unsubscribe"),
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    path(
        "robots.txt",
        TemplateView.as_view(template_name="robots.txt", content_type="text/plain"),
    ),
    path("sitemap.xml", sitemaps.index, {"sitemaps": SITEMAPS}, name="sitemap_index"),
    path(
        "sitemap-<slug:section>.xml",
        sitemaps.section,
        {"sitemaps": SITEMAPS},
        name="sitemap",
    ),
    # Pages without the base layout (a digest in the browser) still get an icon;
    # lazy, as the collected file's hashed name is known only once serving.
    path("favicon.ico", RedirectView.as_view(url=lazy(static, str)("favicon.svg"))),
    path("api/v1/", include("config.api_router")),
    path("api/schema/", SchemaView.as_view(), name="api-schema"),
    # The split view loads its start-up script from a URL, not inline, so the
    # site's Content-Security-Policy (script-src 'self') holds on this page too.
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(
            url_name="api-schema", template_name="api/swagger_ui.html"
        ),
        name="api-docs",
    ),
    re_path(r"^api/", api_not_found),
]

# The site's own pages for a malformed request and a server error (core.errors);
# 404 is Django's handler with the site's template.
handler400 = "core.errors.bad_request"
handler500 = "core.errors.server_error"
