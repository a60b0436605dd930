"""Compile a parsed rule into matchers that run against a Document."""

from __future__ import annotations

from papers.taxonomy import KNOWN_CODES
from topics.rules.document import Document
from topics.rules.document import FieldText
from topics.rules.keys import KeyCheck
from topics.rules.keys import exact_keys
from topics.rules.keys import requirements
from topics.rules.keys import term_requirements
from topics.rules.keys import triggers
from topics.rules.patterns import Pattern
from topics.rules.patterns import build_pattern
from topics.rules.patterns import pattern_in
from topics.rules.patterns import single_word
from topics.rules.syntax import And
from topics.rules.syntax import AndNot
from topics.rules.syntax import Node
from topics.rules.syntax import Term
from topics.rules.syntax import category_of
from topics.rules.syntax import check_categories
from topics.rules.syntax import iter_terms
from topics.rules.syntax import parse_rule
from topics.rules.syntax import wildcard_prefix
from topics.rules.text import split_words

Hits = tuple[int, ...]

FIELD_ATTRS = {
    "ti": ("title",),
    "abs": ("abstract",),
    "co": ("comment",),
    "au": ("authors",),
    "all": ("title", "abstract", "authors", "comment"),
}


class CompiledRule:
    """A rule ready to match documents; pickles as its text and recompiles.

    ``text`` is the rule, ``node`` its AST, ``terms`` its distinct terms as written
    (in rule order, for display); ``requirements`` and ``triggers`` are the index
    keys a RuleSet files and checks it by.
    """

    __slots__ = (
        "_root",
        "_sources",
        "node",
        "requirements",
        "terms",
        "text",
        "triggers",
    )

    def __init__(self, text: str, node: Node) -> None:
        terms = iter_terms(node)
        numbers = {term: number for number, term in enumerate(terms)}
        self.text = text
        self.node = node
        self.terms = tuple(dict.fromkeys(term.source for term in terms))
        # Sets of index keys of which a matching document holds one, cheapest
        # first; a RuleSet files the rule under its triggers.
        self.requirements = requirements(node)
        self.triggers = triggers(self.requirements)
        self._sources = tuple(term.source for term in terms)
        self._root = _evaluator(node, numbers)

    def match(self, doc: Document) -> tuple[str, ...] | None:
        """Return the terms (as written) that make doc match, or None."""
        hits = self._root.evaluate(doc)
        if hits is None:
            return None
        return tuple(dict.fromkeys(self._sources[number] for number in sorted(hits)))

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (compile_rule, (self.text,))

    def __repr__(self) -> str:
        return f"compile_rule({self.text!r})"


def compile_rule(text: str) -> CompiledRule:
    """Parse and compile a rule; raise RuleError if it is invalid."""
    return CompiledRule(text, parse_rule(text))


def compile_new_rule(text: str) -> CompiledRule:
    """compile_rule for a rule being written (a topic's, a saved search's): a
    ``cat:`` term must also name a category or archive of arXiv's taxonomy.
    Rules stored before are compiled as they are, and match what they name."""
    rule = compile_rule(text)
    check_categories(rule.node, KNOWN_CODES)
    return rule


# --- Evaluation --------------------------------------------------------------
# evaluate() returns the numbers of the terms that matched, or None for no match,
# so that "why is this paper here" lists only terms of branches that held.


class _TermEvaluator:
    __slots__ = ("_matcher", "number")

    def __init__(self, number: int, matcher: _Matcher) -> None:
        self.number = number
        self._matcher = matcher

    def evaluate(self, doc: Document) -> Hits | None:
        return (self.number,) if self._matcher.matches(doc) else None

    def key_check(self) -> KeyCheck | None:
        """Return the check that alone decides this term, if there is one."""
        matcher = self._matcher
        return matcher.check if isinstance(matcher, _KeyMatcher) else None


class _AndEvaluator:
    __slots__ = ("_operands",)

    def __init__(self, operands: tuple[_Evaluator, ...]) -> None:
        self._operands = operands

    def evaluate(self, doc: Document) -> Hits | None:
        hits: Hits = ()
        for operand in self._operands:
            found = operand.evaluate(doc)
            if found is None:
                return None
            hits += found
        return hits


class _OrEvaluator:
    __slots__ = ("_by_pair", "_by_word", "_operands", "_pairs", "_words")

    def __init__(self, operands: tuple[_Evaluator, ...]) -> None:
        # Alternatives decided by index keys alone (most words and word pairs
        # of big ORs) are answered together, by intersecting the document's keys
        # with theirs, instead of one call each.
        by_word: dict[str, list[int]] = {}
        by_pair: dict[str, list[int]] = {}
        rest = []
        for operand in operands:
            check = operand.key_check() if isinstance(operand, _TermEvaluator) else None
            if check is None or check.prefixes:
                rest.append(operand)
                continue
            assert isinstance(operand, _TermEvaluator)  # only terms have a check
            for key in check.keys:
                by_word.setdefault(key, []).append(operand.number)
            for key in check.pairs:
                by_pair.setdefault(key, []).append(operand.number)
        self._operands = tuple(rest)
        self._by_word = {key: tuple(numbers) for key, numbers in by_word.items()}
        self._by_pair = {key: tuple(numbers) for key, numbers in by_pair.items()}
        self._words = frozenset(by_word)
        self._pairs = frozenset(by_pair)

    def evaluate(self, doc: Document) -> Hits | None:
        # No short cut: every matching alternative is reported. A term found by
        # two of its keys is listed twice, which CompiledRule.match folds.
        hits: Hits = ()
        for key in self._words & doc.keys:
            hits += self._by_word[key]
        for key in self._pairs & doc.pairs:
            hits += self._by_pair[key]
        for operand in self._operands:
            found = operand.evaluate(doc)
            if found is not None:
                hits += found
        return hits or None


class _AndNotEvaluator:
    __slots__ = ("_left", "_right")

    def __init__(self, left: _Evaluator, right: _Evaluator) -> None:
        self._left = left
        self._right = right

    def evaluate(self, doc: Document) -> Hits | None:
        hits = self._left.evaluate(doc)
        if hits is None or self._right.evaluate(doc) is not None:
            return None
        return hits


_Evaluator = _TermEvaluator | _AndEvaluator | _OrEvaluator | _AndNotEvaluator


def _evaluator(node: Node, numbers: dict[Term, int]) -> _Evaluator:
    if isinstance(node, Term):
        return _TermEvaluator(numbers[node], _matcher(node))
    if isinstance(node, AndNot):
        return _AndNotEvaluator(
            _evaluator(node.left, numbers), _evaluator(node.right, numbers)
        )
    operands = tuple(_evaluator(operand, numbers) for operand in node.operands)
    return _AndEvaluator(operands) if isinstance(node, And) else _OrEvaluator(operands)


# --- Term matchers -----------------------------------------------------------


class _CategoryMatcher:
    __slots__ = ("_archive", "_name")

    def __init__(self, name: str, *, archive: bool) -> None:
        self._name = name
        self._archive = archive

    def matches(self, doc: Document) -> bool:
        return self._name in (doc.archives if self._archive else doc.categories)


class _PrefixMatcher:
    __slots__ = ("_attrs", "_prefix")

    def __init__(self, prefix: str, attrs: tuple[str, ...]) -> None:
        self._prefix = prefix
        self._attrs = attrs

    def matches(self, doc: Document) -> bool:
        if len(self._attrs) > 1:  # all fields: one search over all their words
            return doc.has_prefix(self._prefix)
        field: FieldText = getattr(doc, self._attrs[0])
        return field.has_prefix(self._prefix)


class _KeyMatcher:
    __slots__ = ("check",)

    def __init__(self, check: KeyCheck) -> None:
        self.check = check

    def matches(self, doc: Document) -> bool:
        return self.check.holds(doc)


class _PatternMatcher:
    __slots__ = ("_checks", "_requirements")

    def __init__(
        self,
        checks: tuple[tuple[str, Pattern], ...],
        requirements: list[frozenset[str]],
    ) -> None:
        # A lone word is a set lookup; anything longer needs positions.
        self._checks = tuple(
            (attr, pattern, single_word(pattern)) for attr, pattern in checks
        )
        self._requirements = tuple(map(KeyCheck.of, requirements))

    def matches(self, doc: Document) -> bool:
        # Most terms fail on the document's index keys, far quicker than on its
        # fields.
        for check in self._requirements:
            if not check.holds(doc):
                return False
        for attr, pattern, word in self._checks:
            field = getattr(doc, attr)
            if word is not None:
                if word in field.words:
                    return True
            elif pattern_in(field, pattern):
                return True
        return False


_Matcher = _CategoryMatcher | _PrefixMatcher | _KeyMatcher | _PatternMatcher


def _matcher(term: Term) -> _Matcher:
    if term.field == "cat":
        name, archive = category_of(term)
        return _CategoryMatcher(name, archive=archive)
    attrs = FIELD_ATTRS[term.field]
    words = split_words(term.value)
    if term.wildcard:
        return _PrefixMatcher(wildcard_prefix(words), attrs)
    # Author names are compared as spelled; plural folding would make "Jones"
    # "Jone" and is meaningless for names.
    checks = tuple(
        (attr, build_pattern(words, fold=attr != "authors")) for attr in attrs
    )
    exact = exact_keys(term.field, checks)
    if exact is not None:
        return _KeyMatcher(exact)
    return _PatternMatcher(checks, term_requirements(term))
