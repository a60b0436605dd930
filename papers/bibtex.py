"""BibTeX entries for papers, in the form arXiv's own export uses (@misc + eprint)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Iterator

from papers.models import Paper
from papers.names import printed_authors
from papers.names import split_name

# arXiv's metadata is written in TeX already ("Chess\_db", "B\'ela", "$\alpha$"):
# what is TeX stays as it is, and only characters that would break the entry are
# escaped. Math ($...$) is kept whole; outside it, a backslash command or escape
# is kept (put in math when only math allows it), and a bare special character
# is escaped.
_MATH_RE = re.compile(r"(\$[^$]*\$)")
_TOKEN_RE = re.compile(
    r"\\(?:math[a-z]+|boldsymbol|sqrt)\{[^{}]*\}|\\(?:[a-zA-Z]+|[^a-zA-Z\s])|[\\%&#_^$]"
)
# Commands TeX allows only in math, which arXiv's titles use outside it too
# ("{\alpha}-Fair", as its pages render them): put in math.
_MATH_ONLY = frozenset(
    """
    alpha beta gamma delta epsilon varepsilon zeta eta theta vartheta iota kappa
    lambda mu nu xi pi varpi rho varrho sigma varsigma tau upsilon phi varphi chi
    psi omega Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega
    infty partial nabla ell hbar pm mp times cdot circ leq geq le ge neq ll gg
    approx sim simeq propto equiv to rightarrow leftarrow Rightarrow mapsto in
    notin subset subseteq cup cap emptyset forall exists sum prod int log exp
    """.split()
)
_BRACE = re.compile(r"\\?[{}]")
_BRACES = {"{": r"\textbraceleft{}", "}": r"\textbraceright{}"}
_ESCAPES = {
    "\\": r"\textbackslash{}",
    "%": r"\%",
    "&": r"\&",
    "#": r"\#",
    "_": r"\_",
    "^": r"\textasciicircum{}",
    "$": r"\$",
}


def bibtex_entry(paper: Paper) -> str:
    """One @misc entry."""
    names = author_list(paper)
    fields = [
        ("title", _braced(paper.title)),
        ("author", " and ".join(_bibtex_name(name) for name in names)),
        ("year", str(paper.published.year) if paper.published else ""),
        ("eprint", paper.arxiv_id),
        ("archivePrefix", "arXiv"),
        ("primaryClass", paper.primary_category and paper.primary_category.code),
        # Read as written (biblatex's doi is verbatim), as arXiv writes it.
        ("doi", paper.dois[0].replace("{", "").replace("}", "") if paper.doi else ""),
        # A note, which every style prints for @misc (none prints its journal).
        (
            "note",
            _escape(
                f"Journal reference: {paper.journal_ref}" if paper.journal_ref else ""
            ),
        ),
        ("url", paper.cited_url),
    ]
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields if value)
    return f"@misc{{{cite_key(paper)},\n{body}\n}}\n"


def bibtex_file(papers: Iterable[Paper]) -> Iterator[str]:
    """The entries, a blank line between them, one at a time (a download
    streams them)."""
    for index, paper in enumerate(papers):
        yield ("\n" if index else "") + bibtex_entry(paper)


def cite_key(paper: Paper) -> str:
    """arXiv's own key form: "arxiv:2606.01234" (old ids: "arxiv:math/0601001")."""
    return f"arxiv:{paper.arxiv_id}"


def _bibtex_name(name: str) -> str:
    """A name as BibTeX splits names: a group's braced whole (BibTeX would read
    "ATLAS Collaboration" as a Mr Collaboration), a suffix after the family
    name ("King, Jr., Martin Luther"), other names as arXiv prints them."""
    escaped = _escape(name)
    parts = split_name(name)
    if parts is None:
        return "{" + escaped + "}" if len(name.split()) > 1 else escaped
    family, given, suffix = (_escape(part) for part in parts)
    return f"{family}, {suffix}, {given}" if suffix else escaped


def _braced(title: str) -> str:
    # Double braces keep the title's capitalisation in every bibliography style.
    return "{" + _escape(title) + "}"


def _escape(text: str) -> str:
    """The text as TeX that cannot break a BibTeX entry."""
    text = _without_stray_braces(text or "")
    return "".join(
        part if index % 2 else _TOKEN_RE.sub(_prose_token, part)
        for index, part in enumerate(_MATH_RE.split(text))
    )


def _prose_token(match: re.Match[str]) -> str:
    token = match.group()
    # A command with its argument (\mathcal{O}), or a bare one (\alpha).
    if token.endswith("}") or token[1:] in _MATH_ONLY:
        return f"${token}$"
    return _ESCAPES.get(token, token)


def _without_stray_braces(text: str) -> str:
    """The text with each brace BibTeX would pair with none (it counts every
    brace, escaped or not: a stray one ends the field, or the file, early) as
    a command that prints it; paired braces stay, grouping as they did."""
    opened: list[re.Match[str]] = []
    stray: list[re.Match[str]] = []
    for brace in _BRACE.finditer(text):
        if brace.group().endswith("{"):
            opened.append(brace)
        elif opened:
            opened.pop()
        else:
            stray.append(brace)
    for brace in sorted(stray + opened, key=re.Match.start, reverse=True):
        text = text[: brace.start()] + _BRACES[brace.group()[-1]] + text[brace.end() :]
    return text


def author_list(paper: Paper) -> list[str]:
    """The paper's authors as it prints them (papers.names.printed_authors).
    Every export format and feed reads this, so a citation is the same
    wherever it comes from."""
    return printed_authors(paper.author_names)
