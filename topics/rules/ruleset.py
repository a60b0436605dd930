"""Match many compiled rules against a document through an inverted index."""

from __future__ import annotations

from collections.abc import Hashable
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Generic
from typing import TypeVar

from topics.rules.document import LONG_HEAD
from topics.rules.document import PREFIX_KEY
from topics.rules.document import Document
from topics.rules.document import prefix_head
from topics.rules.keys import KeyCheck
from topics.rules.keys import is_pair
from topics.rules.matching import CompiledRule

K = TypeVar("K", bound=Hashable)

# How many further requirements are checked before a candidate rule is run.
_CHECKED_REQUIREMENTS = 3


class RuleSet(Generic[K]):
    """Rules keyed by topic; immutable once built, so safe to share between threads.

    Each rule is filed in an inverted index under its triggers: the words, word
    pairs, categories or ``word*`` prefixes of which a matching document must
    hold one. A document is looked up by its own keys, the rules
    found are checked against a few more of their requirements (the other side
    of an AND, say), and only those left are run. The cost per document grows
    with the rules that could match it and with its own size, not with the size
    of the set.
    """

    def __init__(
        self, rules: Mapping[K, CompiledRule] | Iterable[tuple[K, CompiledRule]]
    ) -> None:
        pairs = list(rules.items() if isinstance(rules, Mapping) else rules)
        self._keys = tuple(key for key, _ in pairs)
        self._rules = tuple(rule for _, rule in pairs)
        index: dict[str, list[int]] = {}
        pair_index: dict[str, list[int]] = {}
        prefixes: dict[str, list[int]] = {}
        for number, rule in enumerate(self._rules):
            for key in rule.triggers:
                if key.startswith(PREFIX_KEY):
                    prefixes.setdefault(key[len(PREFIX_KEY) :], []).append(number)
                else:
                    chosen = pair_index if is_pair(key) else index
                    chosen.setdefault(key, []).append(number)
        self._index = _freeze(index)
        self._index_keys = frozenset(self._index)
        self._pair_index = _freeze(pair_index)
        self._pair_keys = frozenset(self._pair_index)
        self._prefixes = _freeze(prefixes)
        heads: dict[str, list[str]] = {}
        for prefix in self._prefixes:
            heads.setdefault(prefix_head(prefix), []).append(prefix)
        self._prefixes_by_head = {head: tuple(group) for head, group in heads.items()}
        self._short_heads = frozenset(h for h in heads if len(h) < LONG_HEAD)
        self._long_heads = frozenset(h for h in heads if len(h) == LONG_HEAD)
        self._checks = tuple(
            tuple(
                KeyCheck.of(keys) for keys in rule.requirements if keys != rule.triggers
            )[:_CHECKED_REQUIREMENTS]
            for rule in self._rules
        )

    def __len__(self) -> int:
        return len(self._rules)

    def candidates(self, doc: Document) -> list[int]:
        """Return the positions of the rules that could match doc, in order."""
        found: set[int] = set()
        # Set intersections run in C over the smaller side.
        for key in doc.keys & self._index_keys:
            found.update(self._index[key])
        for key in doc.pairs & self._pair_keys:
            found.update(self._pair_index[key])
        for head in (doc.short_heads & self._short_heads) | (
            doc.long_heads & self._long_heads
        ):
            for prefix in self._prefixes_by_head[head]:
                # A prefix as long as its head is known present already.
                if prefix == head or doc.has_prefix(prefix):
                    found.update(self._prefixes[prefix])
        checks = self._checks
        passed = []
        for number in sorted(found):
            for check in checks[number]:
                if not check.holds(doc):
                    break
            else:
                passed.append(number)
        return passed

    def match(self, doc: Document) -> dict[K, tuple[str, ...]]:
        """Return, for each rule that matches doc, the terms that made it match."""
        matches = {}
        for number in self.candidates(doc):
            terms = self._rules[number].match(doc)
            if terms is not None:
                matches[self._keys[number]] = terms
        return matches


def _freeze(index: dict[str, list[int]]) -> dict[str, tuple[int, ...]]:
    return {key: tuple(numbers) for key, numbers in index.items()}
