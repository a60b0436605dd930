from __future__ import annotations

from django.apps import AppConfig


class TopicsConfig(AppConfig):
    name = "topics"
