"""Render a parsed rule as a query for arXiv's search API."""

from __future__ import annotations

from topics.rules.syntax import And
from topics.rules.syntax import AndNot
from topics.rules.syntax import Node
from topics.rules.syntax import Term
from topics.rules.syntax import category_of
from topics.rules.syntax import wildcard_prefix
from topics.rules.text import split_words


def to_arxiv_query(node: Node) -> str:
    """Return the ``search_query`` value for arXiv's API, not yet URL-encoded.

    Every operator is explicit and every compound operand parenthesised: arXiv reads
    juxtaposed terms as OR and documents no precedence, while a rule means AND.
    """
    if isinstance(node, Term):
        return _term(node)
    if isinstance(node, AndNot):
        return f"{_operand(node.left)} ANDNOT {_operand(node.right)}"
    operator = " AND " if isinstance(node, And) else " OR "
    return operator.join(_operand(operand) for operand in node.operands)


def _operand(node: Node) -> str:
    text = to_arxiv_query(node)
    return text if isinstance(node, Term) else f"({text})"


def _term(term: Term) -> str:
    if term.field == "cat":
        return _category(term)
    words = split_words(term.value)
    prefix = f"{term.field}:"
    if term.wildcard:
        return f"{prefix}{wildcard_prefix(words)}*"
    if term.field == "au":
        # arXiv's own idiom for a name: au:del_maestro.
        return prefix + "_".join(part for parts in words for part in parts)
    if len(words) == 1 and len(words[0]) == 1:
        return prefix + words[0][0]
    phrase = " ".join(part for parts in words for part in parts)
    if len(words) == 1:
        # One hyphenated word also matches its joined-up spelling locally.
        return f'({prefix}"{phrase}" OR {prefix}{"".join(words[0])})'
    return f'{prefix}"{phrase}"'


def _category(term: Term) -> str:
    name, archive = category_of(term)
    if not archive:
        # arXiv spells two-letter subject classes in capitals (cs.LG, math.AG) and
        # longer ones in lower case (cond-mat.stat-mech, physics.optics).
        archive_name, _, subject = name.partition(".")
        return f"cat:{archive_name}.{subject.upper() if len(subject) == 2 else subject}"
    # Old papers carry the bare archive ("astro-ph"), newer ones "astro-ph.GA".
    return f"(cat:{name} OR cat:{name}.*)"
