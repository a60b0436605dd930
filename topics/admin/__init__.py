"""Django admin for topics: curation (topics.py) and the review queue (review.py)."""

from topics.admin import review  # noqa: F401
from topics.admin import topics  # noqa: F401
