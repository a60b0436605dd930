"""The REST API's one router, included at /api/v1/ (see config/urls.py)."""

from __future__ import annotations

from django.urls import path
from django.urls import re_path
from rest_framework.routers import SimpleRouter

from accounts.api import DigestPreferencesView
from accounts.api import ProfileView
from accounts.api import TokenRotateView
from accounts.api import TokenView
from papers.api.authors import AuthorFollowViewSet
from papers.api.library import RatingViewSet
from papers.api.library import SavedViewSet
from papers.api.operator import FeedSourceViewSet
from papers.api.operator import IngestRunViewSet
from papers.api.papers import PaperViewSet
from papers.serializers import ARXIV_ID_PATH
from topics.api.flags import FlagView
from topics.api.follows import FollowViewSet
from topics.api.recommendations import RecommendationView
from topics.api.searches import SavedSearchViewSet
from topics.api.topics import SLUG_PATH
from topics.api.topics import TopicViewSet
from topics.ask.api import PaperAskView
from topics.ask.api import TopicAskView

router = SimpleRouter()
router.register("papers", PaperViewSet, basename="paper")
router.register("topics", TopicViewSet, basename="topic")
router.register("me/follows", FollowViewSet, basename="follow")
router.register("me/saved", SavedViewSet, basename="saved")
router.register("me/searches", SavedSearchViewSet, basename="saved-search")
router.register("me/ratings", RatingViewSet, basename="rating")
router.register("me/followed-authors", AuthorFollowViewSet, basename="followed-author")
router.register("ingest-runs", IngestRunViewSet, basename="ingest-run")
router.register("feed-sources", FeedSourceViewSet, basename="feed-source")

app_name = "api"
urlpatterns = [
    path("me/", ProfileView.as_view(), name="me"),
    path("me/digest/", DigestPreferencesView.as_view(), name="me-digest"),
    path("me/token/", TokenView.as_view(), name="me-token"),
    path("me/token/rotate/", TokenRotateView.as_view(), name="me-token-rotate"),
    path(
        "me/recommendations/",
        RecommendationView.as_view(),
        name="me-recommendations",
    ),
    path("topics/<slug:slug>/ask/", TopicAskView.as_view(), name="topic-ask"),
    re_path(
        rf"^topics/(?P<slug>{SLUG_PATH})/papers/(?P<arxiv_id>{ARXIV_ID_PATH})"
        r"/not-relevant/$",
        FlagView.as_view(),
        name="topic-flag",
    ),
    re_path(
        rf"^papers/(?P<arxiv_id>{ARXIV_ID_PATH})/ask/$",
        PaperAskView.as_view(),
        name="paper-ask",
    ),
    *router.urls,
]
