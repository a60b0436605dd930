from __future__ import annotations

from django.urls import path

from topics import views
from topics.ask import views as ask_views
from topics.feeds import TopicFeed
from topics.feeds import answers_polls
from topics.query import follow_merges

app_name = "topics"

urlpatterns = [
    path("", views.topic_list, name="list"),
    # Before <slug:slug>/, which would take it for a topic (Topic.clean refuses
    # the slug).
    path("trending/", views.trending, name="trending"),
    path("<slug:slug>/", follow_merges(views.topic_detail), name="detail"),
    path("<slug:slug>/feed/", answers_polls(follow_merges(TopicFeed())), name="feed"),
    path("<slug:slug>/follow/", views.follow, name="follow"),
    path("<slug:slug>/ask/", follow_merges(ask_views.ask_topic), name="ask"),
    path("<slug:slug>/ask/stream/", ask_views.ask_topic_stream, name="ask_stream"),
    path(
        "<slug:slug>/papers/<path:arxiv_id>/not-relevant/",
        views.flag,
        name="flag",
    ),
]
