"""BibTeX of arXiv metadata, which is TeX already: kept, and made safe."""

from __future__ import annotations

import pytest

from papers.bibtex import bibtex_entry
from papers.models import Paper


def title_of(title: str) -> str:
    entry = bibtex_entry(Paper(arxiv_id="2607.00001", title=title), authors=[])
    return entry.split("title = {", 1)[1].split("},\n", 1)[0]


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        # Already escaped by the authors: kept, not escaped twice.
        (r"Chess\_db: a dataset", r"{Chess\_db: a dataset}"),
        (r"Q\&A at 100\%", r"{Q\&A at 100\%}"),
        # Bare specials that would break the entry or the document.
        ("Chess_db: 100% & #1", r"{Chess\_db: 100\% \& \#1}"),
        (r"A back\ slash", r"{A back\textbackslash{} slash}"),
        ("x^2 and a lone $ sign", r"{x\textasciicircum{}2 and a lone \$ sign}"),
        # Math and commands stay as written.
        (r"$\Lambda_{\alpha}$ models with \emph{few} shots", None),
        (r"Schr\"odinger and {GPT}-4", None),
        # Math's commands outside math, which TeX refuses there: put in math.
        (
            r"{\alpha}-Fair pricing in \mathcal{O}(\sqrt{n}) \times faster",
            r"{{$\alpha$}-Fair pricing in $\mathcal{O}$($\sqrt{n}$) $\times$ faster}",
        ),
        # Unbalanced braces are escaped so the entry still closes.
        ("A {broken title", r"{A \{broken title}"),
    ],
)
def test_titles_keep_their_tex_and_escape_only_what_breaks(title, expected):
    assert title_of(title) == (expected or "{" + title + "}")


def test_author_names_keep_their_tex_accents():
    entry = bibtex_entry(
        Paper(arxiv_id="2607.00001", title="T"),
        authors=[r"B\'ela Bollob\'as", r"S{\l}upi\'nski", "Ada_Lovelace"],
    )

    assert r"author = {B\'ela Bollob\'as and S{\l}upi\'nski and Ada\_Lovelace}" in entry
