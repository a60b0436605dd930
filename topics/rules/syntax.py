"""Parse topic rules, written in arXiv's search syntax, into an AST.

Grammar (operators are upper-case keywords, as in arXiv)::

    rule     := and_expr ("OR" and_expr)*
    and_expr := operand (("AND" | "ANDNOT" | nothing) operand)*
    operand  := [field ":"] (word | word "*" | '"' phrase '"')
              | [field ":"] "(" rule ")"

AND, ANDNOT and juxtaposition (``a b`` means ``a AND b``) share one level that binds
tighter than OR, and read left to right, so ``a ANDNOT b c`` is ``(a ANDNOT b) AND c``.
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass

from core.text import CONTROL
from topics.rules.errors import RuleError
from topics.rules.text import split_words

MAX_RULE_LENGTH = 5_000
MAX_DEPTH = 20
MAX_TERMS = 300
MAX_PHRASE_WORDS = 12
MIN_WILDCARD_PREFIX = 3

FIELDS = frozenset({"ti", "abs", "au", "cat", "co", "all"})
OPERATORS = frozenset({"AND", "OR", "ANDNOT"})
# arXiv reads only upper-case operators; a lower-case "or" would silently become a
# search word, so these are refused unless quoted.
_RESERVED_WORDS = frozenset({"and", "or", "andnot", "not"})

_FIELD_PREFIX = re.compile(r"([A-Za-z]+):")
_CATEGORY = re.compile(r"[a-z][a-z-]*(?:\.[a-z][a-z-]*)?", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Term:
    """One search term: a word, a ``word*`` prefix or a quoted phrase in a field."""

    field: str
    value: str
    source: str
    position: int
    quoted: bool = False
    wildcard: bool = False


@dataclass(frozen=True, slots=True)
class And:
    """All operands match (``a AND b``, or ``a b``)."""

    operands: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Or:
    """At least one operand matches."""

    operands: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class AndNot:
    """Left matches, right does not; ``a ANDNOT b ANDNOT c`` has right ``b OR c``."""

    left: Node
    right: Node


Node = Term | And | Or | AndNot


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # "term", "group" (a field before "("), "(", ")" or an operator
    position: int
    field: str | None = None
    value: str = ""
    source: str = ""
    quoted: bool = False
    wildcard: bool = False


def parse_rule(text: str) -> Node:
    """Return the AST of a rule, or raise RuleError naming the first problem."""
    if len(text) > MAX_RULE_LENGTH:
        raise RuleError(
            f"rule is too long ({len(text)} characters, limit {MAX_RULE_LENGTH})",
            MAX_RULE_LENGTH,
        )
    if not text.strip():
        raise RuleError("rule is empty", 0)
    # A rule's terms are shown on every paper they tag (the chips' "Matched").
    control = re.search(f"[{CONTROL}]", text)
    if control:
        raise RuleError(
            f"a control character (U+{ord(control.group()):04X}) cannot be in a rule",
            control.start(),
        )
    return _Parser(_tokenize(text)).parse()


def category_of(term: Term) -> tuple[str, bool]:
    """Return a ``cat:`` term's lower-cased category and whether it is an archive."""
    value = term.value.strip()
    archive = term.wildcard
    if archive:
        if not value.endswith("."):
            raise RuleError('a category wildcard must be written "cs.*"', term.position)
        value = value[:-1]
    if not _CATEGORY.fullmatch(value) or (archive and "." in value):
        raise RuleError(
            f'invalid category "{term.value}": write cs.LG, cs or cs.*',
            term.position,
        )
    return value.lower(), archive or "." not in value


def check_categories(node: Node, known: Container[str]) -> None:
    """Raise RuleError at the first ``cat:`` term naming no category or archive
    in `known` (lower-cased codes): a typo (cat:cs.Al) matched nothing."""
    for term in iter_terms(node):
        if term.field == "cat" and category_of(term)[0] not in known:
            raise RuleError(
                f'unknown category "{term.value}": arXiv has no such category',
                term.position,
            )


def iter_terms(node: Node) -> tuple[Term, ...]:
    """Return the terms of a rule in the order they are written."""
    return tuple(sorted(_terms(node), key=lambda term: term.position))


def _terms(node: Node) -> list[Term]:
    if isinstance(node, Term):
        return [node]
    children = (node.left, node.right) if isinstance(node, AndNot) else node.operands
    return [term for child in children for term in _terms(child)]


# --- Tokenizer ---------------------------------------------------------------


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    terms = 0
    i = 0
    while i < len(text):
        char = text[i]
        if char.isspace():
            i += 1
            continue
        if char in "()":
            tokens.append(_Token(char, i))
            i += 1
            continue
        token, i = _scan_operand(text, i)
        if token.kind == "term":
            terms += 1
            if terms > MAX_TERMS:
                raise RuleError(f"too many terms (limit {MAX_TERMS})", token.position)
        tokens.append(token)
    return tokens


def _scan_operand(text: str, start: int) -> tuple[_Token, int]:
    match = _FIELD_PREFIX.match(text, start)
    if match is None:
        return _scan_value(text, start, start, None)
    field = match.group(1).lower()
    if field not in FIELDS:
        raise RuleError(
            f'unknown field "{match.group()}" (use ti, abs, au, co, cat or all)',
            start,
        )
    after = match.end()
    if after == len(text) or text[after].isspace() or text[after] == ")":
        raise RuleError(f'"{match.group()}" needs a term right after it', start)
    if text[after] == "(":
        return _Token("group", start, field=field), after
    if _FIELD_PREFIX.match(text, after):
        raise RuleError(f'a field cannot follow "{match.group()}"', after)
    return _scan_value(text, start, after, field)


def _scan_value(
    text: str, start: int, value_start: int, field: str | None
) -> tuple[_Token, int]:
    if text[value_start] == '"':
        end = _scan_quoted(text, value_start)
        value = text[value_start + 1 : end - 1]
        if not value.strip():
            raise RuleError("empty phrase", value_start)
        token = _Token("term", start, field, value, text[start:end], quoted=True)
        return token, end
    end = _scan_word(text, value_start)
    word = text[value_start:end]
    if field is None and word in OPERATORS:
        return _Token(word, start), end
    if word in OPERATORS:
        raise RuleError(
            f'"{text[start:value_start]}" needs a term right after it', start
        )
    if word.lower() in _RESERVED_WORDS:
        raise RuleError(_reserved_word_message(word), value_start)
    if len(word) > 1 and word[0] == "-" and word[1].isalnum():
        # Search engines read "-word" as "without word"; here it would search
        # for the word itself, the opposite.
        raise RuleError(
            f'"{word}" does not exclude: write "ANDNOT {word[1:]}"', value_start
        )
    wildcard = word.endswith("*")
    value = word[:-1] if wildcard else word
    if "*" in value:
        raise RuleError('"*" can only end a word', value_start + value.index("*"))
    if wildcard and not value:
        raise RuleError('wildcard "*" needs a word before it', value_start)
    token = _Token("term", start, field, value, text[start:end], wildcard=wildcard)
    return token, end


def _reserved_word_message(word: str) -> str:
    if word.lower() == "not":
        return f'"{word}" is not an operator: write "a ANDNOT b", or quote "{word}"'
    return (
        f'"{word}" is not an operator: write {word.upper()} in capitals, '
        f'or quote "{word}" to search for the word'
    )


def _scan_quoted(text: str, start: int) -> int:
    i = start + 1
    while i < len(text):
        if text[i] == "\\":  # \" is a LaTeX umlaut, not the end of the phrase
            i += 2
            continue
        if text[i] == '"':
            return i + 1
        i += 1
    raise RuleError("unterminated quote", start)


def _scan_word(text: str, start: int) -> int:
    i = start
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char.isspace() or char in '()"':
            break
        i += 1
    return min(i, len(text))


# --- Parser ------------------------------------------------------------------


class _Parser:
    """Recursive descent, bounded: each "(" adds one level, at most MAX_DEPTH."""

    def __init__(self, tokens: list[_Token]) -> None:
        self._tokens = tokens
        self._next_index = 0

    def parse(self) -> Node:
        node = self._or(0, None)
        leftover = self._peek()
        if leftover is not None:
            raise RuleError(f'unexpected "{leftover.kind}"', leftover.position)
        return node

    def _peek(self) -> _Token | None:
        if self._next_index < len(self._tokens):
            return self._tokens[self._next_index]
        return None

    def _take(self) -> _Token:
        token = self._tokens[self._next_index]
        self._next_index += 1
        return token

    def _or(self, depth: int, field: str | None) -> Node:
        operands = [self._and(depth, field)]
        while (token := self._peek()) is not None and token.kind == "OR":
            self._check_operand_follows(self._take())
            operands.append(self._and(depth, field))
        return operands[0] if len(operands) == 1 else Or(tuple(operands))

    def _and(self, depth: int, field: str | None) -> Node:
        positives = [self._operand(depth, field)]
        negatives: list[Node] = []
        while (token := self._peek()) is not None:
            if token.kind in ("AND", "ANDNOT"):
                self._check_operand_follows(self._take())
                operands = negatives if token.kind == "ANDNOT" else positives
                operands.append(self._operand(depth, field))
            elif token.kind in ("term", "group", "("):
                positives.append(self._operand(depth, field))  # implicit AND
            else:
                break
        left = positives[0] if len(positives) == 1 else And(tuple(positives))
        if not negatives:
            return left
        # (a ANDNOT b) ANDNOT c is a ANDNOT (b OR c): this keeps the tree shallow
        # however long the chain is.
        right = negatives[0] if len(negatives) == 1 else Or(tuple(negatives))
        return AndNot(left, right)

    def _check_operand_follows(self, operator: _Token) -> None:
        token = self._peek()
        if token is None or token.kind == ")":
            raise RuleError(
                f'"{operator.kind}" needs a term after it', operator.position
            )
        if token.kind in OPERATORS:
            raise RuleError(
                f'unexpected "{token.kind}" after "{operator.kind}"', token.position
            )

    def _operand(self, depth: int, field: str | None) -> Node:
        token = self._take()
        if token.kind == "term":
            return self._term(token, field)
        if token.kind == "(":
            return self._group(token, depth, field)
        if token.kind == "group":
            self._check_not_nested(token, field)
            return self._group(self._take(), depth, token.field)
        if token.kind == ")":
            raise RuleError('unexpected ")"', token.position)
        raise RuleError(f'"{token.kind}" needs a term before it', token.position)

    def _group(self, opening: _Token, depth: int, field: str | None) -> Node:
        if depth >= MAX_DEPTH:
            raise RuleError(
                f"parentheses nested too deeply (limit {MAX_DEPTH})", opening.position
            )
        token = self._peek()
        if token is not None and token.kind == ")":
            raise RuleError("empty parentheses", opening.position)
        if token is None:
            raise RuleError('unclosed "("', opening.position)
        node = self._or(depth + 1, field)
        if self._peek() is None:
            raise RuleError('unclosed "("', opening.position)
        self._take()  # ")": _or stops only there or at the end
        return node

    def _term(self, token: _Token, field: str | None) -> Term:
        self._check_not_nested(token, field)
        term = Term(
            field=token.field or field or "all",
            value=token.value,
            source=token.source,
            position=token.position,
            quoted=token.quoted,
            wildcard=token.wildcard,
        )
        _check_term(term)
        return term

    @staticmethod
    def _check_not_nested(token: _Token, field: str | None) -> None:
        if token.field is not None and field is not None:
            raise RuleError(
                f'field "{token.field}:" inside "{field}:(...)"', token.position
            )


def _check_term(term: Term) -> None:
    if term.field == "cat":
        category_of(term)
        return
    words = split_words(term.value)
    if not words:
        shown = term.source if term.quoted else f'"{term.source}"'
        raise RuleError(f"{shown} has no letters or digits to match", term.position)
    count = sum(len(parts) for parts in words)
    if count > MAX_PHRASE_WORDS:
        raise RuleError(
            f"phrase is too long ({count} words, limit {MAX_PHRASE_WORDS})",
            term.position,
        )
    if term.wildcard and len(wildcard_prefix(words)) < MIN_WILDCARD_PREFIX:
        raise RuleError(
            f'a wildcard needs at least {MIN_WILDCARD_PREFIX} letters before "*"',
            term.position,
        )


def wildcard_prefix(words: list[tuple[str, ...]]) -> str:
    """Return the prefix a ``word*`` term matches: its words with no separators."""
    return "".join("".join(parts) for parts in words)
