"""Citation checking: an answer keeps only sentences that cite retrieved sources.

A model may cite a source that was never retrieved ([9] of 8), cite nothing, or
have been talked into saying something by a paper's text. Every sentence is
checked on its own: citations to unknown numbers are removed, and a sentence
left with no valid citation is dropped (and counted), so an answer never shows
a claim the reader cannot trace to a paper.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from topics.ask.text import citations_of
from topics.ask.text import split_complete
from topics.ask.text import split_sentences

MAX_CLAIM_CHARS = 1200


@dataclass(frozen=True)
class Claim:
    """One sentence of an answer and the sources it cites (never empty)."""

    text: str
    citations: tuple[int, ...]


def check_sentence(sentence: str, valid: Iterable[int]) -> Claim | None:
    """The sentence as a claim citing only valid sources, or None if it cites none."""
    numbers, text = citations_of(sentence)
    allowed = set(valid)
    kept = tuple(n for n in numbers if n in allowed)
    if not kept or not text.strip(" .") or len(text) > MAX_CLAIM_CHARS:
        return None
    return Claim(text=text, citations=kept)


def check_citations(text: str, valid: Iterable[int]) -> tuple[list[Claim], int]:
    """The claims of a whole answer, and how many sentences were dropped."""
    allowed = set(valid)
    claims = []
    dropped = 0
    for sentence in split_sentences(text):
        claim = check_sentence(sentence, allowed)
        if claim is None:
            dropped += 1
        else:
            claims.append(claim)
    return claims, dropped


class ClaimStream:
    """Checks a streamed answer sentence by sentence, as its tokens arrive."""

    def __init__(self, valid: Iterable[int]) -> None:
        self.valid = set(valid)
        self.buffer = ""
        self.dropped = 0

    def feed(self, delta: str) -> list[Claim]:
        """The claims completed by this piece of text."""
        self.buffer += delta
        sentences, self.buffer = split_complete(self.buffer)
        return self._checked(sentences)

    def close(self) -> list[Claim]:
        """The claims of whatever text is left at the end of the stream."""
        sentences = split_sentences(self.buffer)
        self.buffer = ""
        return self._checked(sentences)

    def _checked(self, sentences: list[str]) -> list[Claim]:
        claims = []
        for sentence in sentences:
            claim = check_sentence(sentence, self.valid)
            if claim is None:
                self.dropped += 1
            else:
                claims.append(claim)
        return claims
