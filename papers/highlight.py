"""Search results' highlights, built from plain text, as paper text is
untrusted: papers.search says which words matched (`matched_words`; on
SQLite read from FTS5's private-use sentinel marks), this module marks them,
whole, with the sentinels in the text shown (its LaTeX rendered); the result
is HTML-escaped, and only then do the sentinels become <mark> tags."""

from __future__ import annotations

import re
from collections.abc import Iterable

from django.utils.html import escape
from django.utils.safestring import SafeString
from django.utils.safestring import mark_safe

from papers.latex import latex_to_text
from papers.models import Paper

# Unicode private-use characters: they never come out of the database unless asked.
START = "\ue000"
STOP = "\ue001"
MARKED = re.compile(f"{START}(.*?){STOP}", re.DOTALL)
ADJACENT_MARKS = re.compile(f"{STOP}(\\s+){START}")
SNIPPET_WORDS = 40
# A word as shown and marked: "multi-agent" and "model's" are one word.
WORD = re.compile(r"\w+(?:['\u2019-]\w+)*")
ATOM = re.compile(r"\w+")


def highlight(papers: Iterable[Paper], text: str) -> list[Paper]:
    """The papers, each with safe `highlighted_title` and `snippet` HTML when `text`."""
    papers = list(papers)
    if not text.strip():
        return papers
    for paper in papers:
        words: set[str] = getattr(paper, "matched_words", set())
        title = latex_to_text(paper.title)
        abstract = latex_to_text(paper.abstract)
        paper.highlighted_title = to_html(mark_words(title, words))  # type: ignore[attr-defined]
        paper.snippet = to_html(mark_words(excerpt(abstract, words), words))  # type: ignore[attr-defined]
    return papers


def marked_words(marked: str | None) -> set[str]:
    """The words, lowercased, that FTS5 marked in a text (a part of a word
    counts: "multi-[agent]" gives "agent")."""
    if not marked:
        return set()
    return {
        atom.lower() for span in MARKED.findall(marked) for atom in ATOM.findall(span)
    }


def _is_match(word: str, words: set[str]) -> bool:
    # Most words are one atom (isalnum: every character is one \w matches),
    # looked up whole; only the others are split.
    if word.isalnum():
        return word.lower() in words
    return any(atom.lower() in words for atom in ATOM.findall(word))


def mark_words(text: str, words: set[str]) -> str:
    """The text with every word that is, or holds, one of `words` sentinel-marked
    whole; neighbouring marks ("tool use") become one."""
    text = text.replace(START, "").replace(STOP, "")
    if not words:
        return text
    marked = WORD.sub(
        lambda match: (
            f"{START}{match.group(0)}{STOP}"
            if _is_match(match.group(0), words)
            else match.group(0)
        ),
        text,
    )
    return ADJACENT_MARKS.sub(r"\1", marked)


def excerpt(text: str, words: set[str], size: int = SNIPPET_WORDS) -> str:
    """About `size` words of the text, starting a little before the first match."""
    all_words = text.split()
    first = next((n for n, word in enumerate(all_words) if _is_match(word, words)), 0)
    start = max(first - size // 4, 0)
    shown = " ".join(all_words[start : start + size])
    prefix = "… " if start > 0 else ""
    suffix = " …" if start + size < len(all_words) else ""
    return f"{prefix}{shown}{suffix}"


def to_html(marked: str) -> SafeString:
    """Escape sentinel-marked text, then turn the marked parts into <mark> elements."""
    # escape() leaves the sentinels alone and can never produce one, so every tag
    # in the result is one of ours; stray, unpaired sentinels are dropped.
    html = MARKED.sub(r"<mark>\1</mark>", escape(marked))
    return mark_safe(html.replace(START, "").replace(STOP, ""))
