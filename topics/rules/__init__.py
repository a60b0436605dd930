"""Topic rules: arXiv's search syntax, matched against local papers.

A rule is the text one would give arXiv's API as ``search_query``::

    ti:"multi agent" OR abs:(agent* AND "tool use") ANDNOT cat:cs.RO
    au:del_maestro cat:cond-mat.*

Syntax
    Fields ``ti:`` title, ``abs:`` abstract, ``au:`` authors, ``co:`` comment,
    ``cat:`` category and ``all:`` (title, abstract, authors and comment; the
    default). A field applies to a word, a quoted phrase or a parenthesised group.
    Operators are the upper-case words AND, OR and ANDNOT, as in arXiv. Words
    written side by side are ANDed (arXiv itself would OR them; to_arxiv_query
    writes every operator out). AND, ANDNOT and juxtaposition bind tighter than
    OR and read left to right. Lower-case "and", "or", "not" and a leading "-"
    are refused rather than searched for, since a curator who writes them means
    an operator; quote them to search for the word. ``word*`` matches words
    starting with at least three letters. Errors are RuleError, with a position.

Matching
    Case, accents (Pérez = Perez), LaTeX markup ($\\Lambda$CDM, \\textit{x},
    Schr\\"odinger) and Greek letters (β = beta) are normalised the same way in
    rules and papers. Words match whole words; a phrase matches consecutive words
    within one field (one author's name, for ``au:``), punctuation aside. Plural
    forms agree with singular ones by a few rules (text.fold_plural), except in
    author names. A hyphenated word also matches its parts apart or joined up:
    "multi-turn" matches "multi turn" and "multiturn", and a rule's "multiturn"
    matches a paper's "multi-turn". ``au:`` takes a surname or a full name in
    order; arXiv's underscores stand for spaces (``au:del_maestro``).
    ``cat:cs.LG`` matches that category; ``cat:cs`` and ``cat:cs.*`` any category
    of the archive. A rule being written (``compile_new_rule``) must name
    categories of arXiv's taxonomy.

Use
    ``compile_rule(text).match(Document.from_fields(...))`` answers one rule for
    one paper with the terms that matched; ``RuleSet`` answers many rules per
    paper through an inverted index; ``to_arxiv_query(parse_rule(text))`` asks
    arXiv with the same rule. All objects are immutable and safe to share across
    threads; compiled rules pickle as their text.
"""

from __future__ import annotations

from topics.rules.arxiv import to_arxiv_query
from topics.rules.document import Document
from topics.rules.errors import RuleError
from topics.rules.matching import CompiledRule
from topics.rules.matching import compile_new_rule
from topics.rules.matching import compile_rule
from topics.rules.ruleset import RuleSet
from topics.rules.syntax import MAX_DEPTH
from topics.rules.syntax import MAX_PHRASE_WORDS
from topics.rules.syntax import MAX_RULE_LENGTH
from topics.rules.syntax import MAX_TERMS
from topics.rules.syntax import And
from topics.rules.syntax import AndNot
from topics.rules.syntax import Node
from topics.rules.syntax import Or
from topics.rules.syntax import Term
from topics.rules.syntax import parse_rule

__all__ = [
    "MAX_DEPTH",
    "MAX_PHRASE_WORDS",
    "MAX_RULE_LENGTH",
    "MAX_TERMS",
    "And",
    "AndNot",
    "CompiledRule",
    "Document",
    "Node",
    "Or",
    "RuleError",
    "RuleSet",
    "Term",
    "compile_new_rule",
    "compile_rule",
    "parse_rule",
    "to_arxiv_query",
]
