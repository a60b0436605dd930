"""Index terms of a paper, and what a rule needs of them, for a database prefilter.

A paper's terms are the words a rule can look for (``document_terms``): every word
form of its title, abstract and comment, its title words again as ``ti:word`` and
its authors' words as ``au:word``, and each run of two or three adjacent words
likewise (as ``first_second`` and ``first_second_third``; a joined-up compound
counts as one word). Categories are left to the paper's category rows, which
stay current however they are edited.

``rule_condition`` turns a rule into a boolean tree over those terms and the
paper's categories that every paper the rule matches satisfies: a phrase needs
one of its spellings (a run of up to three words, or every three of a longer
one), a ``word*`` a term starting with it; AND and OR keep their meaning, and
ANDNOT keeps its left side only (the excluded side never makes a match). The
runs of three of a longer phrase need not follow one another, so the tree is a
necessary condition, not the rule: the matcher decides on the papers it admits.
``sure_condition`` is the part of it that alone decides a match.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from itertools import product
from math import prod

from topics.rules.document import AUTHOR_KEY
from topics.rules.document import CATEGORY_KEY
from topics.rules.document import TITLE_KEY
from topics.rules.document import Document
from topics.rules.patterns import Pattern
from topics.rules.patterns import build_pattern
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
TERMS_VERSION = 4
# Joins the words of a stored run: no word holds it, so every term is one token
# to a full-text index.
RUN_SEPARATOR = "_"
RUN_LENGTH = 3
# Runs of three holding one of these words are not stored: they would double a
# paper's terms, and few rule phrases of three words hold one ("chain of
# thought" is decided by the matcher instead).
_FUNCTION_WORDS = """
    a an the of and or in on to for with by from at as is are be been was were we
    our this that these those it its which via into than their they has have can
    not also such both each while
"""
UNSTORED_IN_RUNS = frozenset(map(fold_plural, _FUNCTION_WORDS.split()))
# A phrase of hyphenated words has two spellings for each: past this many, its
# condition asks for each word's instead (``_spelled``).
MAX_SPELLINGS = 16


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
    pairs = (pair.replace(" ", RUN_SEPARATOR) for pair in doc.pairs)
    join = RUN_SEPARATOR.join
    title = list(map(join, doc.title.triples(UNSTORED_IN_RUNS)))
    return keys.union(
        doc.title.forms,
        doc.abstract.forms,
        doc.comment.forms,
        map(TITLE_KEY.__add__, doc.title.forms),
        pairs,
        title,
        map(join, doc.abstract.triples(UNSTORED_IN_RUNS)),
        map(join, doc.comment.triples(UNSTORED_IN_RUNS)),
        map(TITLE_KEY.__add__, title),
        (AUTHOR_KEY + join(run) for run in doc.authors.triples(UNSTORED_IN_RUNS)),
    )


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
    terms alone never decide it (``abs:``, ``co:``, phrases of more than three
    words with no shorter spelling, ...).

    A term in ti:, au: or all: is decided by its spellings of up to three
    words (each one stored run of words), categories and ``word*`` by their
    own conditions; AND needs every operand's, OR takes those it has, and
    ANDNOT its left side's where the right side's necessary condition fails.
    A paper that holds it needs no matching (its count and ids are right),
    only the others the necessary condition admits.
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
    if term.field == "cat" or (term.wildcard and term.field in ("ti", "au", "all")):
        # Stored terms hold every word form of every field (authors' as au:,
        # the title's again as ti:), as Document.has_prefix searches them.
        return _term_condition(term)
    if term.wildcard or term.field not in ("ti", "au", "all"):
        return None  # abstract and comment have no terms of their own
    words = split_words(term.value)
    sure = []
    if term.field != "au":
        text = build_pattern(words, fold=True)
        sure.append(_sure_spelling(text, TITLE_KEY if term.field == "ti" else ""))
    if term.field != "ti":
        # Author names are matched as spelled, not plural-folded.
        names = build_pattern(words, fold=False)
        sure.append(_sure_spelling(names, AUTHOR_KEY))
    known = tuple(condition for condition in sure if condition is not None)
    return _joined(AnyOf, known) if known else None


def _term_condition(term: Term) -> Condition | None:
    if term.field == "cat":
        name, archive = category_of(term)
        return InCategory(name, archive)
    if term.wildcard:
        prefix = wildcard_prefix(split_words(term.value))
        text, author = Word(prefix, prefix=True), Word(AUTHOR_KEY + prefix, True)
        if term.field == "au":
            return author
        if term.field == "ti":
            return Word(TITLE_KEY + prefix, prefix=True)
        return AnyOf((text, author)) if term.field == "all" else text
    words = split_words(term.value)
    text_namespace = {"ti": TITLE_KEY, "abs": "", "co": "", "all": ""}
    conditions = []
    if term.field in text_namespace:
        pattern = build_pattern(words, fold=True)
        conditions.append(_spelled(pattern, text_namespace[term.field]))
    if term.field in ("au", "all"):
        # Author names are matched as spelled, not plural-folded.
        pattern = build_pattern(words, fold=False)
        conditions.append(_spelled(pattern, AUTHOR_KEY))
    return _joined(AnyOf, tuple(conditions))


def _spelled(pattern: Pattern, namespace: str) -> Condition:
    """What a field's terms (in namespace) hold where the pattern occurs: one
    of its spellings ("multi-turn RL" is "multi turn rl" or "multiturn rl"),
    each a stored run of up to three words or, longer, all its runs of three."""
    spellings = _spellings(pattern)
    if spellings is None:
        # Too many spellings to list: each slot, one of its ways.
        slots = (tuple(_run(option, namespace) for option in slot) for slot in pattern)
        return _joined(AllOf, tuple(_joined(AnyOf, options) for options in slots))
    return _joined(AnyOf, tuple(_run(words, namespace) for words in spellings))


def _sure_spelling(pattern: Pattern, namespace: str) -> Condition | None:
    """What decides that the pattern occurs: one of its spellings short enough
    to be one stored run; None if none is."""
    decided = tuple(
        _run(words, namespace)
        for words in _spellings(pattern) or ()
        if _stored(words) and _decided(words, namespace)
    )
    return _joined(AnyOf, decided) if decided else None


def _spellings(pattern: Pattern) -> list[tuple[str, ...]] | None:
    """The word sequences the pattern matches, one option of each slot; None
    when there are more than MAX_SPELLINGS."""
    if prod(len(slot) for slot in pattern) > MAX_SPELLINGS:
        return None
    return [tuple(chain.from_iterable(options)) for options in product(*pattern)]


def _run(words: tuple[str, ...], namespace: str) -> Condition:
    """The stored runs of these words side by side: the run itself when it is
    stored, else each stored run of three in it and the pairs none of those
    covers (which need not be adjacent: not sure)."""
    if _stored(words):
        return Word(namespace + RUN_SEPARATOR.join(words))
    threes = [
        start
        for start in range(len(words) - 2)
        if _stored(words[start : start + RUN_LENGTH])
    ]
    covered = {start + step for start in threes for step in (0, 1)}
    runs = [words[start : start + RUN_LENGTH] for start in threes] + [
        words[start : start + 2]
        for start in range(len(words) - 1)
        if start not in covered
    ]
    return _joined(
        AllOf, tuple(Word(namespace + RUN_SEPARATOR.join(run)) for run in runs)
    )


def _stored(words: tuple[str, ...]) -> bool:
    """Whether a paper's terms hold these words as one run where they occur."""
    return len(words) < RUN_LENGTH or (
        len(words) == RUN_LENGTH and UNSTORED_IN_RUNS.isdisjoint(words)
    )


def _decided(words: tuple[str, ...], namespace: str) -> bool:
    """Whether the stored run means the words occur. Plain and ti: terms also
    hold a field's word forms as written ("children" beside the folded
    "child"), which a folded rule word can equal only when folding it again
    changes it ("childrens" folds to "children"): such a word is not decided."""
    if len(words) > 1 or namespace == AUTHOR_KEY:
        return True
    return fold_plural(words[0]) == words[0]


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
