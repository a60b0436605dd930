"""RIS and CSL-JSON of papers, beside BibTeX (papers.bibtex): what Zotero, Mendeley,
EndNote and citeproc-based tools import.

RIS: type RPRT, which Zotero's RIS translator reads as a report with arXiv as the
institution (PB), the arXiv id as the report number (SN) and "Preprint" as its
type (M3), the form a preprint server's paper keeps through an import. The
translator has no preprint type: UNPB or GEN would become a journal article with
no journal, ELEC a web page. CSL-JSON: type "article", CSL 1.0.2's type for "a
preprint, working paper, or other prepublication material" (CSL has no
"preprint"; Zotero's preprints export as "article"), arXiv as the publisher and
the arXiv id as the number. Unlike BibTeX, neither format is TeX: titles and
abstracts are plain Unicode text (papers.latex), as their readers show text as
it is.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterable
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from papers.bibtex import author_list
from papers.bibtex import cite_key
from papers.latex import latex_to_text
from papers.models import Paper
from papers.names import split_name

RIS_CONTENT_TYPE = "application/x-research-info-systems; charset=utf-8"
CSL_CONTENT_TYPE = "application/vnd.citationstyles.csl+json; charset=utf-8"
REPOSITORY = "arXiv"
PREPRINT = "Preprint"

# RIS
# ------------------------------------------------------------------------------


def ris_entry(paper: Paper) -> str:
    """One RIS record (TY ... ER), one line per tag and value."""
    published = paper.published
    lines = [
        ("TY", "RPRT"),
        *(("AU", _ris_name(name)) for name in author_list(paper)),
        ("TI", _text(paper.title)),
        ("AB", _text(paper.abstract)),
        ("PY", str(published.year) if published else ""),
        ("DA", published.strftime("%Y/%m/%d") if published else ""),
        ("PB", REPOSITORY),
        ("SN", _arxiv_number(paper)),
        ("M3", PREPRINT),
        ("DB", REPOSITORY),
        ("UR", paper.cited_url),
        *(("DO", doi) for doi in paper.dois),
        ("N1", _journal_note(paper)),
        *(("KW", code) for code in _category_codes(paper)),
    ]
    # A line break inside a value would end it: RIS values are one line each.
    body = "".join(
        f"{tag}  - {' '.join(value.split())}\r\n" for tag, value in lines if value
    )
    return body + "ER  - \r\n"


def ris_file(papers: Iterable[Paper]) -> Iterator[str]:
    """The records, a blank line between them, one at a time (a download
    streams them)."""
    for index, paper in enumerate(papers):
        yield ("\r\n" if index else "") + ris_entry(paper)


def _ris_name(name: str) -> str:
    """ "Family, Given" (and ", Suffix"), the form RIS readers split on commas."""
    parts = split_name(name)
    if parts is None:
        return name
    return ", ".join(part for part in parts if part)


# CSL-JSON
# ------------------------------------------------------------------------------


def csl_item(paper: Paper) -> dict[str, Any]:
    """One CSL-JSON item (CSL 1.0.2), only with the variables the paper has."""
    item: dict[str, Any] = {
        "id": cite_key(paper),
        "type": "article",
        "title": _text(paper.title),
        "author": [_csl_name(name) for name in author_list(paper)],
        "issued": _date_parts(paper.published),
        "abstract": _text(paper.abstract),
        "publisher": REPOSITORY,
        "genre": PREPRINT,
        "number": _arxiv_number(paper),
        "version": str(paper.version) if paper.version else None,
        "URL": paper.cited_url,
        "DOI": paper.dois[0] if paper.doi else None,
        "note": _journal_note(paper),
        "keyword": ", ".join(_category_codes(paper)),
    }
    return {name: value for name, value in item.items() if value}


def csl_json(papers: Iterable[Paper]) -> Iterator[str]:
    """A CSL-JSON file, an array of items, an item at a time (a download
    streams them), as json.dumps(items, indent=2) would write it."""
    before = "[\n"
    for paper in papers:
        item = json.dumps(csl_item(paper), ensure_ascii=False, indent=2)
        yield before + textwrap.indent(item, "  ")
        before = ",\n"
    yield "[]\n" if before == "[\n" else "\n]\n"


def _csl_name(name: str) -> dict[str, str]:
    parts = split_name(name)
    if parts is None:
        return {"literal": name}
    family, given, suffix = parts
    return {"family": family, "given": given, **({"suffix": suffix} if suffix else {})}


def _date_parts(moment: datetime | None) -> dict[str, list[list[int]]] | None:
    if moment is None:
        return None
    return {"date-parts": [[moment.year, moment.month, moment.day]]}


# SHARED
# ------------------------------------------------------------------------------


def _text(text: str) -> str:
    """TeX as plain text, on one line: arXiv's line breaks only wrap the text."""
    return " ".join(latex_to_text(text).split())


def _journal_note(paper: Paper) -> str:
    if not paper.journal_ref:
        return ""
    return f"Journal reference: {_text(paper.journal_ref)}"


def _arxiv_number(paper: Paper) -> str:
    """arXiv's own citation form of the id: "arXiv:2606.01234"."""
    return f"arXiv:{paper.arxiv_id}"


def _category_codes(paper: Paper) -> list[str]:
    """The primary category first, then the others (as prefetched, if they are)."""
    primary = paper.primary_category.code if paper.primary_category else None
    codes = [category.code for category in paper.categories.all()] if paper.pk else []
    return list(dict.fromkeys(code for code in [primary, *codes] if code))
