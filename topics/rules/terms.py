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
from itertools import pairwise

from topics.rules.document import AUTHOR_KEY
from topics.rules.document import CATEGORY_KEY
from topics.rules.document import TITLE_KEY
from topics.rules.document import Document
from topics.rules.keys import exact_keys
from topics.rules.matching import FIELD_ATTRS
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
class Not:
    """The item does not hold (only inside AllOf, beside what does)."""

    item: Condition


@dataclass(frozen=True, slots=True)
class AnyOf:
    items: tuple[Condition, ...]


Condition = Word | InCategory | AllOf | AnyOf | Not


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
    return _joined(AnyOf, tuple(c for c in conditions if c is not None))


def sure_condition(node: Node) -> Condition | None:
    """Return a condition under which the rule surely matches, or None when the
    terms alone never decide it (phrases of three words, ``abs:``, ...).

    Terms decided by index keys alone (the rule's own exact_keys: one or two
    plain words in ti:, au: or all:), categories and ``word*`` in all: or au:
    are their own sure conditions; AND needs every operand's, OR takes those it
    has, and ANDNOT its left side's where the right side's necessary condition
    fails. A paper that holds it needs no matching (its count and ids are
    right), only the others the necessary condition admits.
    """
    if isinstance(node, Term):
        return _sure_term(node)
    if isinstance(node, AndNot):
        left, right = sure_condition(node.left), rule_condition(node.right)
        if left is None or right is None:
            return None
        return _joined(AllOf, (left, Not(right)))
    conditions = [sure_condition(operand) for operand in node.operands]
    if isinstance(node, And):
        if any(condition is None for condition in conditions):
            return None
        return _joined(AllOf, tuple(c for c in conditions if c is not None))
    known = tuple(condition for condition in conditions if condition is not None)
    return _joined(AnyOf, known) if known else None


def _sure_term(term: Term) -> Condition | None:
    if term.field == "cat" or (term.wildcard and term.field in ("all", "au")):
        # Stored terms hold every word form of every field (authors' as au:),
        # as Document.has_prefix searches them.
        return _term_condition(term)
    if term.wildcard:
        return None
    words = split_words(term.value)
    attrs = FIELD_ATTRS[term.field]
    checks = tuple(
        (attr, build_pattern(words, fold=attr != "authors")) for attr in attrs
    )
    exact = exact_keys(term.field, checks)
    if exact is None:
        return None
    # Plain terms also hold the fields' word forms as written ("children"
    # beside the folded "child"), which a folded rule word can equal only when
    # folding it again changes it ("childrens" folds to "children"): such a
    # word is not decided by the terms.
    if any(fold_plural(key) != key for key in exact.keys if ":" not in key):
        return None
    keys = sorted(exact.keys | exact.pairs)
    return _joined(AnyOf, tuple(Word(key.replace(" ", PAIR_SEPARATOR)) for key in keys))


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
    words = split_words(term.value)
    text_namespace = {"ti": TITLE_KEY, "abs": "", "co": "", "all": ""}
    conditions = []
    if term.field in text_namespace:
        pattern = build_pattern(words, fold=True)
        conditions.append(_pattern_condition(pattern, text_namespace[term.field]))
    if term.field in ("au", "all"):
        # Author names are matched as spelled, not plural-folded.
        pattern = build_pattern(words, fold=False)
        conditions.append(_pattern_condition(pattern, AUTHOR_KEY))
    return _joined(AnyOf, tuple(conditions))


def _pattern_condition(pattern: Pattern, namespace: str) -> Condition:
    """What a field's terms (in namespace) hold where the pattern occurs: each
    slot filled one of its ways (a word, or the adjacent pairs of its parts:
    "multi-turn" is "multi_turn" or "multiturn"), and two plain words side by
    side as their pair, which holds both words."""
    needed: list[Condition] = []
    paired: set[int] = set()
    for number, (first, second) in enumerate(pairwise(pattern)):
        if is_plain(first) and is_plain(second):
            needed.append(Word(namespace + _pair(first[0][0], second[0][0])))
            paired.update((number, number + 1))
    for number, slot in enumerate(pattern):
        if number in paired:
            continue
        options = tuple(
            _joined(
                AllOf,
                tuple(Word(namespace + _pair(a, b)) for a, b in pairwise(option))
                or (Word(namespace + option[0]),),
            )
            for option in slot
        )
        needed.append(_joined(AnyOf, options))
    return _joined(AllOf, tuple(needed))


def _pair(first: str, second: str) -> str:
    """The stored term of two adjacent words: no word holds PAIR_SEPARATOR, so
    every term is one token to a full-text index."""
    return first + PAIR_SEPARATOR + second


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
