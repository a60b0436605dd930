"""Django admin for topics: curation (topics.py, inlines.py), the review queue
(review.py) and the lists of what hangs off topics (records.py)."""

from topics.admin import records  # noqa: F401
from topics.admin import review  # noqa: F401
from topics.admin import topics  # noqa: F401
