"""BibTeX of arXiv metadata, which is TeX already: kept, and made safe."""

from __future__ import annotations

import pytest
from pybtex.database import parse_string

from papers.bibtex import bibtex_entry
from papers.models import Paper


def title_of(title: str) -> str:
    entry = bibtex_entry(Paper(arxiv_id="2607.00001", title=title))
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
        # Unbalanced braces, escaped or not, become commands that print them
        # (BibTeX counts every brace), so the entry still closes.
        ("A {broken title", r"{A \textbraceleft{}broken title}"),
        (r"A \{broken title", r"{A \textbraceleft{}broken title}"),
        (
            r"\mathcal{O}(n) for {a {broken} title",
            r"{$\mathcal{O}$(n) for \textbraceleft{}a {broken} title}",
        ),
    ],
)
def test_titles_keep_their_tex_and_escape_only_what_breaks(title, expected):
    assert title_of(title) == (expected or "{" + title + "}")


def test_author_names_keep_their_tex_accents():
    entry = bibtex_entry(
        Paper(
            arxiv_id="2607.00001",
            title="T",
            author_names=r"B\'ela Bollob\'as, S{\l}upi\'nski, Ada_Lovelace",
        )
    )

    assert r"author = {B\'ela Bollob\'as and S{\l}upi\'nski and Ada\_Lovelace}" in entry


def test_doi_and_journal_reference_are_read_back_as_arxiv_has_them():
    """A DOI as written (biblatex reads it verbatim), the first of several; a
    journal reference as a note, which @misc styles print, and one with a
    stray brace (arXiv has one) does not break the file."""
    paper = Paper(
        arxiv_id="2602.21160",
        title="T",
        doi="10.1007/978-3-030-02520-5_5 10.1007/978-3-030-02520-5_5 10.2/x",
        journal_ref="Forty-Second UAI}, year={2026}, url={https://example.org/?a_b}}",
    )

    [entry] = parse_string(bibtex_entry(paper), "bibtex").entries.values()

    assert entry.fields["doi"] == "10.1007/978-3-030-02520-5_5"
    # Only the stray braces are written out; the pairs group as before.
    assert entry.fields["note"] == (
        r"Journal reference: Forty-Second UAI\textbraceright{}, year={2026}, "
        r"url={https://example.org/?a\_b}\textbraceright{}"
    )
    assert "journal" not in entry.fields
