"""Which words of a text a PostgreSQL full-text query matched, found without
ts_headline.

ts_headline parses and stems every word of every abstract shown, for every
search (about 0.15 ms a paper). A word's lexemes never change, so PostgreSQL
is asked once per word per process (`to_tsvector`, the search's own
configuration, so what is marked is what matched) and the answer is kept:
after a few searches nearly every word of a page is known, and a page's
marking costs dictionary lookups.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable

from django.db import connection

# A word as PostgreSQL's parser splits it at anything but letters and digits;
# papers.highlight marks the whole word ("multi-agent") an atom of it matched.
ATOM = re.compile(r"[^\W_]+")
# Kept per process; emptied when full (words seen again are asked again).
MAX_KNOWN = 50_000
_known: dict[str, frozenset[str]] = {}
_lock = threading.Lock()


def matched_words(texts: Iterable[str], query_text: str, config: str) -> list[set[str]]:
    """For each text, its words (lowercased) whose lexemes are among those of
    `query_text`'s words: the words a search for it marks there."""
    atoms = [set(map(str.lower, ATOM.findall(text))) for text in texts]
    query_atoms = set(map(str.lower, ATOM.findall(query_text)))
    lexemes = _lexemes(query_atoms.union(*atoms), config)
    wanted = set().union(*(lexemes[atom] for atom in query_atoms))
    # Each distinct word is looked at once, not once for every text holding it.
    matching = {word for word, found in lexemes.items() if not found.isdisjoint(wanted)}
    return [words & matching for words in atoms]


def _lexemes(words: set[str], config: str) -> dict[str, frozenset[str]]:
    prefix, get = f"{config}:", _known.get
    known = {word: get(prefix + word) for word in words}
    missing = [word for word, lexemes in known.items() if lexemes is None]
    if missing:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT word, tsvector_to_array(to_tsvector(%s::regconfig, word)) "
                "FROM unnest(%s::text[]) AS word",
                [config, missing],
            )
            found = {word: frozenset(lexemes) for word, lexemes in cursor.fetchall()}
        with _lock:
            if len(_known) + len(found) > MAX_KNOWN:
                _known.clear()
            _known.update({f"{config}:{word}": lex for word, lex in found.items()})
        known.update(found)
    return known  # type: ignore[return-value]
