"""Search results' highlights, built from plain text, as paper text is
untrusted: papers.search says which runs of words matched (`matched_runs`: a
word, or a phrase's words in a row; on SQLite read from FTS5's private-use
sentinel marks), this module marks them, whole words, with the sentinels in
the text shown (its LaTeX rendered); the result is HTML-escaped, and only then
do the sentinels become <mark> tags."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from collections.abc import Iterator
from functools import lru_cache

from django.utils.html import escape
from django.utils.safestring import SafeString
from django.utils.safestring import mark_safe

from papers.latex import latex_to_text
from papers.letters import fold
from papers.models import Paper

# Unicode private-use characters: they never come out of the database unless asked.
START = "\ue000"
STOP = "\ue001"
MARKED = re.compile(f"{START}(.*?){STOP}", re.DOTALL)
ADJACENT_MARKS = re.compile(f"{STOP}(\\s+){START}")
SNIPPET_WORDS = 40
# A word as shown and marked: "multi-agent" and "model's" are one word.
WORD = re.compile(r"\w+(?:['\u2019-]\w+)*")
# A word's parts, as both databases' parsers split it.
ATOM = re.compile(r"[^\W_]+")
# What matched in a text: runs of its words, lowercased; a word is a run of one.
Runs = set[tuple[str, ...]]


def highlight(papers: Iterable[Paper], text: str) -> list[Paper]:
    """The papers, each with safe `highlighted_title` and `snippet` HTML when `text`."""
    papers = list(papers)
    if not text.strip():
        return papers
    for paper in papers:
        runs: Runs = getattr(paper, "matched_runs", set())
        title = latex_to_text(paper.title)
        # Its words marked without the ellipses, which no mark touches: most
        # excerpts are ASCII then, marked the faster way (_found).
        before, shown, after = _excerpt(latex_to_text(paper.abstract), runs)
        paper.highlighted_title = to_html(mark_runs(title, runs))  # type: ignore[attr-defined]
        paper.snippet = to_html(before + mark_runs(shown, runs) + after)  # type: ignore[attr-defined]
    return papers


def marked_runs(marked: str | None) -> Runs:
    """The runs of words, lowercased, that FTS5 marked in a text (a part of a
    word counts: "multi-[agent]" gives "agent")."""
    if not marked:
        return set()
    runs = (
        tuple(atom.lower() for atom in ATOM.findall(span))
        for span in MARKED.findall(marked)
    )
    return {run for run in runs if run}


def mark_runs(text: str, runs: Runs) -> str:
    """The text with every word that is, or holds, a part of one of the runs
    sentinel-marked whole; neighbouring marks ("tool use") become one."""
    text = text.replace(START, "").replace(STOP, "")
    pieces, end = [], 0
    for start, stop in _found(text, runs):
        # Back to where the word holding the run's start begins (no word spans
        # a space), not into one marked already.
        begin = max(start, end)
        while begin > end and not text[begin - 1].isspace():
            begin -= 1
        for word in WORD.finditer(text, begin):
            if word.start() >= stop:
                break
            if word.end() > start:
                pieces += [text[end : word.start()], START, word.group(0), STOP]
                end = word.end()
    pieces.append(text[end:])
    return ADJACENT_MARKS.sub(r"\1", "".join(pieces))


def excerpt(text: str, runs: Runs, size: int = SNIPPET_WORDS) -> str:
    """About `size` words of the text, starting a little before the first match."""
    return "".join(_excerpt(text, runs, size))


def _excerpt(text: str, runs: Runs, size: int = SNIPPET_WORDS) -> tuple[str, str, str]:
    """`excerpt`'s parts: an ellipsis before or nothing, the words, one after."""
    found = next(_found(text, runs), None)
    # The words up to the match's first character: the match's is the last.
    first = len(text[: found[0] + 1].split()) - 1 if found else 0
    start = max(first - size // 4, 0)
    # Split only as far as shown: what follows, if any, is one last item.
    words = text.split(maxsplit=start + size)
    return (
        "… " if start > 0 else "",
        " ".join(words[start : start + size]),
        " …" if len(words) > start + size else "",
    )


def _found(text: str, runs: Runs) -> Iterator[tuple[int, int]]:
    """Where in the text the runs are, in order: (start, stop) from the first
    part of a run's first word to the last part of its last. Read as far as
    asked: an excerpt needs only the first."""
    if not runs:
        return
    # Compared without accents, as the databases match: a run of the index's
    # "bezier" is the "Bézier" shown.
    runs = {tuple(map(fold, run)) for run in runs}
    longest = max(map(len, runs))
    # Folding an ASCII text (most titles and abstracts) is lowercasing it,
    # which keeps every place: folded whole, not a part at a time.
    ascii = text.isascii()
    if ascii and longest == 1:  # words only, the most common
        pattern = _words_pattern(frozenset(run[0] for run in runs))
        if pattern is not None:
            yield from (found.span() for found in pattern.finditer(text.lower()))
        return
    parts = (
        (
            (part.group(0), part.start(), part.end())
            for part in ATOM.finditer(text.lower())
        )
        if ascii
        else (
            (fold(part.group(0)), part.start(), part.end())
            for part in ATOM.finditer(text)
        )
    )
    by_first: dict[str, list[tuple[str, ...]]] = {}
    for run in runs:
        by_first.setdefault(run[0], []).append(run)
    if longest == 1:  # no need to look ahead
        yield from ((start, stop) for atom, start, stop in parts if atom in by_first)
        return
    # The parts a run starting at the first of them would cover: (atom, start, stop).
    ahead: deque[tuple[str, int, int]] = deque(maxlen=longest)
    for part in parts:
        ahead.append(part)
        if len(ahead) == longest and ahead[0][0] in by_first:
            yield from _starting(ahead, by_first[ahead[0][0]])
    if len(ahead) == longest:
        ahead.popleft()  # looked at above
    while ahead:
        if ahead[0][0] in by_first:
            yield from _starting(ahead, by_first[ahead[0][0]])
        ahead.popleft()


@lru_cache(maxsize=256)
def _words_pattern(words: frozenset[str]) -> re.Pattern[str] | None:
    """A pattern finding these words (folded) where they are whole atoms of an
    ASCII text lowercased, scanned by the regex engine rather than a part at a
    time; None when no word could be one (a non-ASCII word is in no such text).
    Kept per set of words, as a page's papers share theirs."""
    # Letters and digits only: nothing to escape.
    wanted = sorted(word for word in words if word.isascii() and ATOM.fullmatch(word))
    if not wanted:
        return None
    return re.compile(rf"(?<![^\W_])(?:{'|'.join(wanted)})(?![^\W_])")


def _starting(
    ahead: deque[tuple[str, int, int]], runs: list[tuple[str, ...]]
) -> Iterator[tuple[int, int]]:
    """Where each of the runs that the parts ahead begin with lies."""
    for run in runs:
        if len(run) <= len(ahead) and all(
            ahead[n][0] == atom for n, atom in enumerate(run)
        ):
            yield ahead[0][1], ahead[len(run) - 1][2]


def to_html(marked: str) -> SafeString:
    """Escape sentinel-marked text, then turn the marked parts into <mark> elements."""
    # escape() leaves the sentinels alone and can never produce one, so every tag
    # in the result is one of ours; stray, unpaired sentinels are dropped.
    html = MARKED.sub(r"<mark>\1</mark>", escape(marked))
    return mark_safe(html.replace(START, "").replace(STOP, ""))
