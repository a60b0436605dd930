"""Which words of a text a PostgreSQL full-text query matched, found without
ts_headline: each word a term matched, and each phrase's words only where
they stand in a row as in the phrase.

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
from collections.abc import Mapping

from django.db import connection

# A word as PostgreSQL's parser splits it at anything but letters and digits;
# papers.highlight marks the whole word ("multi-agent") an atom of it matched.
ATOM = re.compile(r"[^\W_]+")
# ASCII's signs, "_" among them, as spaces: an ASCII text split at its spaces
# so is split into ATOM's atoms, at half the cost of finding them.
ASCII_SIGNS = str.maketrans(
    dict.fromkeys([c for c in map(chr, range(128)) if not c.isalnum()], " ")
)
# Kept per process; emptied when full (words seen again are asked again).
MAX_KNOWN = 50_000
# A phrase's stop word: any word stands in its place.
ANY_WORD: set[str] = set()
# Each configuration's words and their lexemes. A full one is replaced, never
# emptied in place: a search reading it meanwhile keeps what it read.
_known: dict[str, dict[str, frozenset[str]]] = {}
_lock = threading.Lock()


def matched_runs(
    texts: Iterable[str], terms: Iterable[str], config: str
) -> list[set[tuple[str, ...]]]:
    """For each text, the runs of its words (lowercased) that one of the terms
    matched: a word whose lexemes are among a one-word term's, or words in a
    row whose lexemes are a phrase's, in its order (a stop word of the phrase
    stands for any word, as PostgreSQL counts its place)."""
    texts_atoms = [_atoms(text) for text in texts]
    texts_words = [set(atoms) for atoms in texts_atoms]
    terms_atoms = [_atoms(term) for term in terms]
    words = set().union(*texts_words)
    lexemes = _lexemes(words.union(*terms_atoms), config)
    phrases = []
    for atoms in terms_atoms:
        wanted = [lexemes[atom] for atom in atoms]
        # A phrase's stop words at its ends are dropped, as phraseto_tsquery does.
        while wanted and not wanted[0]:
            wanted.pop(0)
        while wanted and not wanted[-1]:
            wanted.pop()
        if wanted:
            phrases.append(wanted)
    # Each distinct word is looked at once, not once for every text holding it.
    every = set().union(*(found for wanted in phrases for found in wanted))
    candidates = {word for word in words if not lexemes[word].isdisjoint(every)}
    patterns = [
        [
            {word for word in candidates if not lexemes[word].isdisjoint(found)}
            if found
            else ANY_WORD
            for found in wanted
        ]
        for wanted in phrases
    ]
    return [
        _runs(atoms, present, patterns)
        for atoms, present in zip(texts_atoms, texts_words, strict=True)
    ]


def _atoms(text: str) -> list[str]:
    """The text's atoms, lowercased: the whole text at once (lowercasing 25
    abstracts a word at a time was a twentieth of a search), unless that makes
    a letter two (İ), which would split an atom."""
    lowered = text.lower()
    if lowered.isascii():  # nearly every title and abstract
        return lowered.translate(ASCII_SIGNS).split()
    if len(lowered) == len(text):
        return ATOM.findall(lowered)
    return [atom.lower() for atom in ATOM.findall(text)]


def _runs(
    atoms: list[str], present: set[str], patterns: list[list[set[str]]]
) -> set[tuple[str, ...]]:
    """The runs of these words (`present`: the same as a set) that fit a
    pattern: the words allowed at each place, in order (ANY_WORD: any)."""
    runs: set[tuple[str, ...]] = set()
    for first, *rest in patterns:
        if not rest:
            runs.update((word,) for word in present & first)
            continue
        for start in [n for n, atom in enumerate(atoms) if atom in first]:
            run = atoms[start : start + 1 + len(rest)]
            if len(run) > len(rest) and all(
                allowed is ANY_WORD or word in allowed
                for word, allowed in zip(run[1:], rest, strict=True)
            ):
                runs.add(tuple(run))
    return runs


def _lexemes(words: set[str], config: str) -> Mapping[str, frozenset[str]]:
    """Each word's lexemes: those not known asked of the database, all at once.
    The known ones are not copied out (a page holds a thousand words): the
    set difference finds those missing."""
    known = _known.get(config, {})
    missing = words.difference(known)
    if not missing:
        return known
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT word, tsvector_to_array(to_tsvector(%s::regconfig, word)) "
            "FROM unnest(%s::text[]) AS word",
            [config, list(missing)],
        )
        found = {word: frozenset(lexemes) for word, lexemes in cursor.fetchall()}
    with _lock:
        if sum(map(len, _known.values())) + len(found) > MAX_KNOWN:
            _known.clear()
        kept = _known.setdefault(config, {})
        kept.update(found)
    if kept is known:
        return known
    # Replaced meanwhile (full): what this search read, and found.
    return {word: found[word] if word in found else known[word] for word in words}
