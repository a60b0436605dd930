"""The release: a digest of what renders the site's pages and API bodies (the
apps' Python, the templates, the static files whose hashed names pages link
to, the compiled translations), so that cached renders are keyed by it.

Rendered HTML and JSON are cached under versions that only content changes
move (papers.versions), and kept up to an hour. Without the release in their
keys, a deploy that changes a template, a row's code or the site's words
would serve the old renders until the content they show next changed; with it,
the new code's first request renders anew, and during a rolling deploy old and
new processes never read each other's renders. The content versions are not
keyed by it: a change made by a process of either release reaches both.
"""

from __future__ import annotations

import hashlib
import time
from functools import cache
from pathlib import Path
from typing import cast

from django.core.cache import cache as django_cache

ROOT = Path(__file__).resolve().parent.parent
SOURCES = (
    "accounts",
    "config",
    "core",
    "notifications",
    "papers",
    "topics",
    "templates",
    "static",
    "locale",
)
SKIPPED = {"__pycache__", "migrations"}


def release_of(root: Path) -> str:
    """The digest of the sources under `root` (about 10 ms for this project)."""
    digest = hashlib.sha256()
    for source in SOURCES:
        for path in sorted((root / source).rglob("*")):
            relative = path.relative_to(root)
            if path.is_file() and SKIPPED.isdisjoint(relative.parts):
                digest.update(str(relative).encode() + b"\0")
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


RELEASE = release_of(ROOT)


@cache
def release_first_seen() -> int:
    """When this release first served, in ns since the epoch (kept in the
    cache; read once per process)."""
    key = f"release:seen:{RELEASE}"
    return cast(int, django_cache.get_or_set(key, time.time_ns, None))
