"""A paper's fields, normalised once so that many rules can be matched against it."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from itertools import pairwise
from itertools import repeat
from operator import itemgetter

from topics.rules.text import cached_plural
from topics.rules.text import raw_words

# Index keys share one namespace: words from the title, abstract and comment, and
# the same with a prefix for the title and for the authors; "first second" word
# pairs likewise. Prefixes cannot collide with words, which never hold ":" or " ".
TITLE_KEY = "ti:"
AUTHOR_KEY = "au:"
CATEGORY_KEY = "cat:"
PREFIX_KEY = "pre:"  # in rules only: documents are searched for the prefix
# Wildcard prefixes are filed under their first three letters, or five when they
# have that many: "transform*" under "trans", so not every "tra..." word runs it.
SHORT_HEAD = 3
LONG_HEAD = 5
_short_head = itemgetter(slice(SHORT_HEAD))
_long_head = itemgetter(slice(LONG_HEAD))

# Separates authors in the author field, so a phrase never spans two names.
_AUTHOR_BOUNDARY = ""


# eq=False: documents compare and hash by identity; their fields hold dicts.
@dataclass(frozen=True, slots=True, eq=False)
class FieldText:
    """One field as the matcher sees it."""

    # Matching forms in reading order (plural-folded, except for author names).
    tokens: tuple[str, ...] = ()
    # Hyphenated words also match joined up: "multi-turn" at position p is
    # ("multi", "turn") in tokens and ("multiturn", p + 2) in joined[p].
    joined: dict[int, tuple[str, int]] = dataclass_field(default_factory=dict)
    # Every matching form, joined ones included, for membership tests.
    words: frozenset[str] = frozenset()
    # Matching and surface forms, for prefix (``word*``) search.
    forms: frozenset[str] = frozenset()

    @classmethod
    def build(cls, texts: Iterable[str], *, fold: bool) -> FieldText:
        """Return the field of the given texts; a phrase never spans two texts."""
        tokens: list[str] = []
        joined: dict[int, tuple[str, int]] = {}
        for text in texts:
            if tokens:
                tokens.append(_AUTHOR_BOUNDARY)
            _add_words(raw_words(text), tokens, joined)
        surface = set(tokens)
        surface.discard(_AUTHOR_BOUNDARY)
        if joined:
            surface.update(whole for whole, _ in joined.values())
        if not fold:
            forms = frozenset(surface)
            return cls(tuple(tokens), joined, forms, forms)
        # The boundary is no word, and cached_plural leaves it alone.
        folded = tuple(map(cached_plural, tokens))
        joined = {start: (cached_plural(w), end) for start, (w, end) in joined.items()}
        words = frozenset(map(cached_plural, surface))
        return cls(folded, joined, words, words.union(surface))

    def pairs(self) -> list[str]:
        """Return each two adjacent words as "first second", for indexing phrases.

        A list, repeats included: Document makes one set of all fields' pairs.
        """
        tokens, joined = self.tokens, self.joined
        pairs = list(map(" ".join, pairwise(tokens)))
        # A joined-up compound pairs with its neighbours too, compounds included.
        for start, (form, end) in joined.items():
            if start > 0:
                pairs.append(f"{tokens[start - 1]} {form}")
            if end < len(tokens):
                pairs.append(f"{form} {tokens[end]}")
            if end in joined:
                pairs.append(f"{form} {joined[end][0]}")
        return pairs

    def triples(
        self, leaving_out: frozenset[str] = frozenset()
    ) -> Iterable[tuple[str, str, str]]:
        """Return each three adjacent words, a joined-up compound counting as one
        word, as in pairs; never across two texts, and none holding a word of
        `leaving_out`. Repeats may be included.

        Not part of Document: only a paper's stored index terms hold them.
        """
        tokens, joined = self.tokens, self.joined
        excluded = leaving_out | {_AUTHOR_BOUNDARY}
        runs = [
            words
            for words in zip(tokens, tokens[1:], tokens[2:], strict=False)
            if excluded.isdisjoint(words)
        ]
        if not joined:
            return runs
        # The runs through a compound: it first, second or third of the three.
        ending: dict[int, list[tuple[str, int]]] = {}
        for start, (word, end) in joined.items():
            ending.setdefault(end, []).append((word, start))

        def before(position: int) -> list[tuple[str, int]]:
            found = [(tokens[position - 1], position - 1)] if position else []
            return found + ending.get(position, [])

        through: set[tuple[str, str, str]] = set()
        for start, (word, end) in joined.items():
            for second, after in self.steps(end):
                through.update((word, second, third) for third, _ in self.steps(after))
            for first, _ in before(start):
                through.update((first, word, third) for third, _ in self.steps(end))
            for second, earlier in before(start):
                through.update((first, second, word) for first, _ in before(earlier))
        runs.extend(words for words in through if excluded.isdisjoint(words))
        return runs

    def steps(self, position: int) -> list[tuple[str, int]]:
        """The words that start at position, each with where it ends: the token
        there, and a joined-up compound starting there."""
        tokens = self.tokens
        found = [(tokens[position], position + 1)] if position < len(tokens) else []
        if position in self.joined:
            found.append(self.joined[position])
        return found

    def has_prefix(self, prefix: str) -> bool:
        """Return whether any word of the field starts with prefix."""
        # A field holds few words, and a rule's prefix of all fields searches
        # Document.forms instead; a scan costs less than keeping fields sorted.
        return any(map(str.startswith, self.forms, repeat(prefix)))


@dataclass(frozen=True, slots=True, eq=False)
class Document:
    """A paper's normalised fields plus the keys a RuleSet looks its rules up by."""

    title: FieldText
    abstract: FieldText
    authors: FieldText
    comment: FieldText
    categories: frozenset[str]
    archives: frozenset[str]
    # Index keys: words, title and author words, categories; and word pairs.
    keys: frozenset[str]
    pairs: frozenset[str]
    # Every word form of the four fields, sorted for prefix search, and the
    # heads under which a RuleSet files its ``word*`` rules.
    forms: tuple[str, ...]
    short_heads: frozenset[str]
    long_heads: frozenset[str]

    @classmethod
    def from_fields(
        cls,
        *,
        title: str,
        abstract: str = "",
        authors: Sequence[str] = (),
        categories: Sequence[str] = (),
        comment: str | None = "",
    ) -> Document:
        """Return the document of one paper; authors and categories are lists."""
        if isinstance(authors, str) or isinstance(categories, str):
            raise TypeError("authors and categories must be sequences of strings")
        texts = (
            FieldText.build([title], fold=True),
            FieldText.build([abstract], fold=True),
            FieldText.build(authors, fold=False),
            FieldText.build([comment or ""], fold=True),
        )
        cats = frozenset(category.strip().lower() for category in categories)
        archives = frozenset(category.split(".")[0] for category in cats)
        keys, pairs = _index_keys(*texts, cats | archives)
        forms = tuple(sorted(frozenset().union(*(text.forms for text in texts))))
        # Shorter words add shorter heads, which no rule is filed under; leaving
        # them in keeps this a loop in C.
        long_heads = frozenset(map(_long_head, forms))
        short_heads = frozenset(map(_short_head, long_heads))
        return cls(*texts, cats, archives, keys, pairs, forms, short_heads, long_heads)

    def has_prefix(self, prefix: str) -> bool:
        """Return whether any word of any text field starts with prefix."""
        index = bisect_left(self.forms, prefix)
        return index < len(self.forms) and self.forms[index].startswith(prefix)


def prefix_head(prefix: str) -> str:
    """Return the head a ``prefix*`` rule is filed under."""
    return prefix[:LONG_HEAD] if len(prefix) >= LONG_HEAD else prefix[:SHORT_HEAD]


def _add_words(
    words: list[str], tokens: list[str], joined: dict[int, tuple[str, int]]
) -> None:
    # Most words have no hyphen; only the few that do are looked at one by one.
    offset = len(tokens)
    compounds = [index for index, word in enumerate(words) if "-" in word]
    for index in compounds:
        parts = words[index].split("-")
        start = offset + index
        joined[start] = ("".join(parts), start + len(parts))
        offset += len(parts) - 1
    if compounds:
        words = " ".join(words).replace("-", " ").split()
    tokens.extend(words)


def _index_keys(
    title: FieldText,
    abstract: FieldText,
    authors: FieldText,
    comment: FieldText,
    categories: frozenset[str],
) -> tuple[frozenset[str], frozenset[str]]:
    title_pairs = title.pairs()
    # Each set is built in one pass; map() over str.__add__ stays in C.
    keys = title.words.union(
        abstract.words,
        comment.words,
        map(TITLE_KEY.__add__, title.words),
        map(AUTHOR_KEY.__add__, authors.words),
        map(CATEGORY_KEY.__add__, categories),
    )
    pairs = frozenset(title_pairs).union(
        abstract.pairs(),
        comment.pairs(),
        map(TITLE_KEY.__add__, title_pairs),
        map(AUTHOR_KEY.__add__, authors.pairs()),
    )
    return keys, pairs
