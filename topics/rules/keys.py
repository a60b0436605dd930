"""The index keys a rule needs a document to hold, for RuleSet and quick checks.

A rule's requirements are sets of keys (see Document.keys and Document.pairs) such
that a matching document holds at least one key of every set. A RuleSet files a
rule under one (its triggers) and checks a few others before running it; term
matchers check theirs first too.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from topics.rules.document import AUTHOR_KEY
from topics.rules.document import CATEGORY_KEY
from topics.rules.document import PREFIX_KEY
from topics.rules.document import TITLE_KEY
from topics.rules.document import Document
from topics.rules.patterns import Pattern
from topics.rules.patterns import build_pattern
from topics.rules.patterns import is_plain
from topics.rules.syntax import And
from topics.rules.syntax import AndNot
from topics.rules.syntax import Node
from topics.rules.syntax import Term
from topics.rules.syntax import category_of
from topics.rules.syntax import wildcard_prefix
from topics.rules.text import fold_plural
from topics.rules.text import split_words

# Words so frequent in abstracts that a rule is better filed under another of its
# words or a word pair; matching is unaffected, only which key a RuleSet files
# the rule under. Without document frequencies, length guesses for the rest.
_COMMON_WORDS_TEXT = """
    a an the of and or in on to for with by from at as is are be we our this that
    these those it its which can not has have such using use used based show shows
    propose proposed present new two more than both also however while into between
    each study studies work paper approach method model learning data result
    performance task problem network system framework large small language deep
    neural training time high low state art distribution function functions analysis
    process structure energy field theory dynamics properties algorithm optimization
    efficient novel existing experiments experimental evaluation dataset benchmark
    accuracy robust applications design control image images graph physical order
    space linear local global general effect effects phase temperature power signal
    parameters observations simulations numerical estimation inference prediction
    features representations generation information knowledge scale significant
    significantly improve improves improved provide provides achieve achieves
    demonstrate demonstrates introduce introduces across within without under over
    through other many most several first single multiple various higher lower
    better only recent current previous standard simple complex key important
    potential effective challenges different specific quantum strong well where when
    one three number form case cases level levels type types rate rates mass test
    tests set sets
"""
_COMMON_WORDS = frozenset(map(fold_plural, _COMMON_WORDS_TEXT.split()))


_PAIR_FILING_COST = 8


@dataclass(frozen=True, slots=True)
class KeyCheck:
    """A requirement split by kind: a document must hold one of its keys."""

    keys: frozenset[str]
    pairs: frozenset[str]
    prefixes: tuple[str, ...]

    @classmethod
    def of(cls, keys: frozenset[str]) -> KeyCheck:
        """Return the check of a requirement."""
        prefixes = tuple(
            key[len(PREFIX_KEY) :] for key in keys if key.startswith(PREFIX_KEY)
        )
        pairs = frozenset(key for key in keys if is_pair(key))
        words = keys - pairs - {PREFIX_KEY + p for p in prefixes}
        # Matching a document runs checks by the hundred, and most hold keys of
        # one kind only: theirs is a single set test.
        if not pairs and not prefixes:
            return _WordCheck(words, pairs, prefixes)
        if not words and not prefixes:
            return _PairCheck(words, pairs, prefixes)
        return cls(words, pairs, prefixes)

    def holds(self, doc: Document) -> bool:
        """Return whether doc holds one of the keys."""
        if not self.keys.isdisjoint(doc.keys):
            return True
        if self.pairs and not self.pairs.isdisjoint(doc.pairs):
            return True
        return bool(self.prefixes) and any(map(doc.has_prefix, self.prefixes))


class _WordCheck(KeyCheck):
    __slots__ = ()

    def holds(self, doc: Document) -> bool:
        return not self.keys.isdisjoint(doc.keys)


class _PairCheck(KeyCheck):
    __slots__ = ()

    def holds(self, doc: Document) -> bool:
        return not self.pairs.isdisjoint(doc.pairs)


def is_pair(key: str) -> bool:
    """Return whether an index key is a pair of adjacent words."""
    return " " in key


def requirements(node: Node) -> tuple[frozenset[str], ...]:
    """Return the rule's requirements, cheapest first."""
    found = set(_requirements(node))
    return tuple(sorted(found, key=lambda keys: (cost(keys), *sorted(keys))))


def triggers(found: tuple[frozenset[str], ...]) -> frozenset[str]:
    """Return the requirement a RuleSet should file the rule under."""
    return min(found, key=_trigger_cost)


def exact_keys(
    field: str, patterns: tuple[tuple[str, Pattern], ...]
) -> KeyCheck | None:
    """Return the check that alone decides a term, if its keys can.

    Title, authors, and title, abstract and comment together have keys of their
    own for words and adjacent pairs, so one word or two in ti:, au: or all: need
    nothing more.
    """
    if field not in ("ti", "au", "all"):
        return None
    keys = set()
    for attr, pattern in patterns:
        if len(pattern) > 2 or not all(map(is_plain, pattern)):
            return None
        key = " ".join(slot[0][0] for slot in pattern)
        if attr == "authors":
            keys.add(AUTHOR_KEY + key)
        else:
            keys.add(TITLE_KEY + key if field == "ti" else key)
    return KeyCheck.of(frozenset(keys))


def term_requirements(term: Term) -> list[frozenset[str]]:
    """Return the requirements of one term."""
    if term.field == "cat":
        return [frozenset({CATEGORY_KEY + category_of(term)[0]})]
    words = split_words(term.value)
    if term.wildcard:
        return [frozenset({PREFIX_KEY + wildcard_prefix(words)})]
    if term.field == "au":
        return _pattern_keys(build_pattern(words, fold=False), AUTHOR_KEY)
    namespace = TITLE_KEY if term.field == "ti" else ""
    text = _pattern_keys(build_pattern(words, fold=True), namespace)
    if term.field != "all":
        return text
    # The term may match the text or the author names: each set must allow both.
    # Both lists come from the same words, so they correspond item by item.
    names = _pattern_keys(build_pattern(words, fold=False), AUTHOR_KEY)
    return [keys | more for keys, more in zip(text, names, strict=True)]


def cost(keys: frozenset[str]) -> float:
    """Return a guess at how many documents hold one of keys, in arbitrary units."""
    return sum(_key_cost(key) for key in keys)


def _requirements(node: Node) -> list[frozenset[str]]:
    if isinstance(node, Term):
        return term_requirements(node)
    if isinstance(node, AndNot):
        return _requirements(node.left)  # the excluded side never makes a match
    options = [_requirements(operand) for operand in node.operands]
    if isinstance(node, And):
        return [keys for option in options for keys in option]
    # Any one alternative may match, so one set must cover them all: the most
    # selective one, and the one best to file the rule under.
    return [
        frozenset().union(*(min(option, key=cost) for option in options)),
        frozenset().union(*(min(option, key=_trigger_cost) for option in options)),
    ]


def _pattern_keys(pattern: Pattern, namespace: str) -> list[frozenset[str]]:
    # Every slot must be filled, one way or another; two adjacent plain words
    # must also occur as a pair.
    keys = [
        frozenset(namespace + min(option, key=_word_cost) for option in slot)
        for slot in pattern
    ]
    for first, second in pairwise(pattern):
        if is_plain(first) and is_plain(second):
            keys.append(frozenset({f"{namespace}{first[0][0]} {second[0][0]}"}))
    return keys


def _trigger_cost(keys: frozenset[str]) -> float:
    # Word pairs are selective, but a document has more pairs than words, and
    # every one is looked up once any rule is filed under pairs; so a rule is
    # filed under a pair only when its words are all common.
    return cost(keys) + (_PAIR_FILING_COST if any(map(is_pair, keys)) else 0)


def _key_cost(key: str) -> float:
    # Categories are broad; titles and author lists are short.
    if key.startswith(CATEGORY_KEY):
        return 60 if "." in key else 90
    if key.startswith(PREFIX_KEY):
        return 40
    if key.startswith((TITLE_KEY, AUTHOR_KEY)):
        return _key_cost(key.partition(":")[2]) / 4
    if is_pair(key):
        return 0.5  # a pair of words is rarer than either word
    return _word_cost(key)


def _word_cost(word: str) -> float:
    return 50 if word in _COMMON_WORDS else max(1, 12 - len(word))
