"""Word patterns: the words of a term, matched at consecutive positions of a field."""

from __future__ import annotations

from topics.rules.document import FieldText
from topics.rules.text import fold_plural

# A pattern is a sequence of word slots; each slot lists the token sequences that
# fill it: "multi-turn" fills a slot as ("multi", "turn") or as ("multiturn",).
Slot = tuple[tuple[str, ...], ...]
Pattern = tuple[Slot, ...]


def build_pattern(words: list[tuple[str, ...]], *, fold: bool) -> Pattern:
    """Return the pattern of split words, plural-folded unless they are names."""
    slots: list[Slot] = []
    for parts in words:
        forms = tuple(fold_plural(part) for part in parts) if fold else parts
        if len(parts) == 1:
            slots.append((forms,))
            continue
        whole = "".join(parts)
        slots.append((forms, (fold_plural(whole) if fold else whole,)))
    return tuple(slots)


def is_plain(slot: Slot) -> bool:
    """Return whether the slot is one word with no other spelling."""
    return len(slot) == 1 and len(slot[0]) == 1


def single_word(pattern: Pattern) -> str | None:
    """Return the pattern's word if it is a single plain word."""
    if len(pattern) == 1 and is_plain(pattern[0]):
        return pattern[0][0][0]
    return None


def pattern_in(field: FieldText, pattern: Pattern) -> bool:
    """Return whether the pattern occurs in the field at consecutive positions:
    one of its spellings, word by word, each word the field's token there or
    a joined-up compound starting there ("multiturn" spans "multi-turn")."""
    words = field.words
    for slot in pattern:
        if not any(option[0] in words for option in slot):
            return False
    tokens = field.tokens
    for option in pattern[0]:
        start = -1
        while True:  # tuple.index scans in C, far faster than a Python loop
            try:
                start = tokens.index(option[0], start + 1)
            except ValueError:
                break
            if _pattern_at(field, pattern, start):
                return True
    heads = {option[0] for option in pattern[0]}
    return any(
        form in heads and _pattern_at(field, pattern, start)
        for start, (form, _) in field.joined.items()
    )


def _pattern_at(field: FieldText, pattern: Pattern, start: int) -> bool:
    positions = {start}
    for slot in pattern:
        following = set()
        for option in slot:
            ends = positions
            for word in option:
                ends = {
                    end
                    for position in ends
                    for found, end in field.steps(position)
                    if found == word
                }
            following |= ends
        if not following:
            return False
        positions = following
    return True
