"""Index terms of a paper, and what a rule needs of them, for a database prefilter.

A paper's terms are the words a rule can look for (``document_terms``): every word
form of its title, abstract and comment, its title words again as ``ti:word`` and
its authors' words as ``au:word``, and each two adjacent words likewise (as
``first_second``). Categories are left to the paper's category rows, which stay
current however they are edited.

``rule_condition`` turns a rule into a boolean tree over those terms and the
paper's categories that every paper the rule matches satisfies: a word needs
itself, a phrase its pairs of adjacent words, a ``word*`` a term starting with
it; AND and OR keep their meaning, and ANDNOT keeps its left side only (the
excluded side never makes a match). A phrase's pairs need not follow one
another, so the tree is a necessary condition, not the rule: the matcher
decides on the papers it admits.
"""

from __future__ import annotations

from dataclasses import dataclass

from topics.rules.document import AUTHOR_KEY
from topics.rules.document import CATEGORY_KEY
from topics.rules.document import Document
from topics.rules.keys import is_pair
from topics.rules.keys import term_requirements
from topics.rules.syntax import And
from topics.rules.syntax import AndNot
from topics.rules.syntax import Node
from topics.rules.syntax import Term
from topics.rules.syntax import category_of
from topics.rules.syntax import wildcard_prefix
from topics.rules.text import split_words

# Bump when document_terms or the normalisation behind it changes: stored terms
# of an older version are derived again.
TERMS_VERSION = 2
PAIR_SEPARATOR = "_"


@dataclass(frozen=True, slots=True)
class Word:
    """A term the paper holds, or with ``prefix`` one that starts with `value`."""

    value: str
    prefix: bool = False


@dataclass(frozen=True, slots=True)
class InCategory:
    """The paper is in category `name` (cs.lg), or with ``archive`` in any of the
    archive's (cs, cs.*). Names are lower case."""

    name: str
    archive: bool


@dataclass(frozen=True, slots=True)
class AllOf:
    items: tuple[Condition, ...]


@dataclass(frozen=True, slots=True)
class AnyOf:
    items: tuple[Condition, ...]


Condition = Word | InCategory | AllOf | AnyOf


def document_terms(doc: Document) -> frozenset[str]:
    """Return the index terms of a paper's document."""
    # Document.keys holds the matching forms of every word (plain, ti: and au:)
    # and the categories; surface forms are added for ``word*``, which searches
    # them too.
    keys = frozenset(key for key in doc.keys if not key.startswith(CATEGORY_KEY))
    pairs = (pair.replace(" ", PAIR_SEPARATOR) for pair in doc.pairs)
    return keys.union(doc.title.forms, doc.abstract.forms, doc.comment.forms, pairs)


def rule_condition(node: Node) -> Condition | None:
    """Return a condition every paper matching the rule satisfies, or None when
    the rule's terms give none (every paper must then be matched)."""
    if isinstance(node, Term):
        return _term_condition(node)
    if isinstance(node, AndNot):
        return rule_condition(node.left)
    conditions = [rule_condition(operand) for operand in node.operands]
    if isinstance(node, And):
        known = tuple(condition for condition in conditions if condition is not None)
        return _joined(AllOf, known) if known else None
    # Any alternative may match: one without a condition admits every paper.
    if any(condition is None for condition in conditions):
        return None
    return _joined(AnyOf, tuple(conditions))


def _term_condition(term: Term) -> Condition | None:
    if term.field == "cat":
        name, archive = category_of(term)
        return InCategory(name, archive)
    if term.wildcard:
        prefix = wildcard_prefix(split_words(term.value))
        text, author = Word(prefix, prefix=True), Word(AUTHOR_KEY + prefix, True)
        if term.field == "au":
            return author
        return AnyOf((text, author)) if term.field == "all" else text
    # Each requirement lists the keys of which a matching paper holds one. A
    # phrase's pairs imply its words, whose postings (often long: "with RL")
    # the database need not read then.
    found = term_requirements(term)
    pairs = [keys for keys in found if all(map(is_pair, keys))]
    words = [
        keys
        for keys in found
        if keys not in pairs and not any(_implies(other, keys) for other in pairs)
    ]
    needed = tuple(
        _joined(AnyOf, tuple(Word(_term_of(key)) for key in sorted(keys)))
        for keys in pairs + words
    )
    return _joined(AllOf, needed) if needed else None


def _term_of(key: str) -> str:
    """The stored term of an index key: pairs are written "first_second" (no
    word holds "_"), so that every term is one token to a full-text index."""
    return key.replace(" ", PAIR_SEPARATOR)


def _implies(pairs: frozenset[str], words: frozenset[str]) -> bool:
    """Whether a paper holding one of the pairs holds one of the words: each
    pair ("ti:a b") holds its two words in its namespace ("ti:a", "ti:b")."""
    for pair in pairs:
        namespace, _, text = pair.rpartition(":")
        prefix = namespace + ":" if namespace else ""
        if not any(prefix + word in words for word in text.split(" ")):
            return False
    return True


def _joined(kind: type[AllOf] | type[AnyOf], items: tuple[Condition, ...]) -> Condition:
    """One condition of the kind over items, flattening nested ones alike."""
    flat: list[Condition] = []
    for item in items:
        if isinstance(item, kind):
            flat.extend(item.items)
        else:
            flat.append(item)
    unique = tuple(dict.fromkeys(flat))
    return unique[0] if len(unique) == 1 else kind(unique)
