"""BibTeX entries for papers, in the form arXiv's own export uses (@misc + eprint)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from papers.models import Paper

# Characters with a meaning in BibTeX/LaTeX, escaped so a title can't break the file.
_SPECIAL = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "%": r"\%",
    "&": r"\&",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_SPECIAL_RE = re.compile("|".join(map(re.escape, _SPECIAL)))
# Titles already written in LaTeX (most arXiv titles with math) are kept as they are.
_LATEX_RE = re.compile(r"\$|\\[a-zA-Z]")


def bibtex_entry(paper: Paper, authors: Iterable[str] | None = None) -> str:
    """One @misc entry; authors default to the paper's stored author line."""
    names = list(authors) if authors is not None else _split(paper.author_names)
    fields = [
        ("title", _braced(paper.title)),
        ("author", " and ".join(_escape(name) for name in names)),
        ("year", str(paper.published.year) if paper.published else ""),
        ("eprint", paper.arxiv_id),
        ("archivePrefix", "arXiv"),
        ("primaryClass", paper.primary_category_id and paper.primary_category.code),
        ("doi", _escape(paper.doi)),
        ("journal", _escape(paper.journal_ref)),
        ("url", f"https://arxiv.org/abs/{paper.arxiv_id}"),
    ]
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields if value)
    return f"@misc{{{cite_key(paper)},\n{body}\n}}\n"


def bibtex_file(papers: Iterable[Paper]) -> str:
    return "\n".join(bibtex_entry(paper) for paper in papers)


def cite_key(paper: Paper) -> str:
    """arXiv's own key form: "arxiv:2606.01234" (old ids: "arxiv:math/0601001")."""
    return f"arxiv:{paper.arxiv_id}"


def _braced(title: str) -> str:
    # Double braces keep the title's capitalisation in every bibliography style.
    return "{" + (title if _LATEX_RE.search(title) else _escape(title)) + "}"


def _escape(text: str) -> str:
    return _SPECIAL_RE.sub(lambda m: _SPECIAL[m.group()], text or "")


def _split(author_names: str) -> list[str]:
    return [name for name in author_names.split(", ") if name]
