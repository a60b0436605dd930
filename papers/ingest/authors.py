"""Author names and affiliations from every arXiv source, in one shape.

Every parser builds its AuthorRecords here so that the same person reads the same
from the API, the listings, OAI-PMH and the snapshot: "Forenames Keyname Suffix",
LaTeX accents turned into Unicode, whitespace collapsed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from pylatexenc.latex2text import LatexNodes2Text
from pylatexenc.latex2text import get_default_latex_context_db

from core.text import shown
from papers.ingest.records import AuthorRecord
from papers.ingest.records import repair_text

MAX_NAME_LENGTH = 300
MAX_AFFILIATION_LENGTH = 500

_LATEX = LatexNodes2Text()
_LATEX_MACROS = get_default_latex_context_db()
# Only strings with these characters need the (slow) LaTeX converter.
_LATEX_HINT_RE = re.compile(r"[\\{}~$]|``|''")
# Authors glue letter-named accents to their letter ("Fran\ccois"), which TeX
# would read as the unknown macro \ccois; pylatexenc then drops it.
_GLUED_ACCENT_RE = re.compile(r"\\([cvuHk])([A-Za-z]+)")

# Separators between authors outside parentheses: "A, B and C", "A, B, and C",
# and the colon after a group, as arXiv's own parser reads it: "Gemma Team: A, B".
_SEPARATOR_RE = re.compile(r"\s*(?:[,;:&]|\band\b)\s*")
# "(1)", "(1 and 2)", "(1, 3, and 4)": references into a trailing affiliation block.
_FOOTNOTE_REF_RE = re.compile(r"\s*\d+(?:\s*(?:,|&|and)\s*(?:and\s+)?\d+)*\s*")
_FOOTNOTE_MARK_RE = re.compile(r"\((\d+)\)")
_GLUED_INITIAL_RE = re.compile(r"\b([^\W\d_]{1,2}\.)(?=[^\W\d_])")
_SUFFIXES = frozenset({"Jr", "Jr.", "Sr", "Sr.", "II", "III", "IV"})
_NOT_AUTHORS = frozenset({"et al", "et al.", "others"})
_ET_AL_RE = re.compile(r"\s+et\s+al\.?$")
_MASK = "\x00"
_LAST_GROUP_RE = re.compile(rf"\({_MASK}*\)?[\s.]*$")


@dataclass
class _Draft:
    name: str = ""
    groups: list[str] = field(default_factory=list)


def clean_name(text: str) -> str:
    """Return a display name: LaTeX accents as Unicode, one space between words,
    no control characters (core.text), as a title has none."""
    name = shown(" ".join(_delatex(repair_text(text)).split())).strip(" ,;")
    # "J.P.Hague" -> "J. P. Hague", as arXiv itself writes parsed forenames, so a
    # name reads the same from the raw string and from keyname/forenames sources.
    name = _GLUED_INITIAL_RE.sub(_space_initial, name)
    return name[:MAX_NAME_LENGTH]


def clean_affiliation(text: str) -> str:
    """Return an affiliation with LaTeX decoded, whitespace collapsed and no
    control characters."""
    affiliation = shown(" ".join(_delatex(repair_text(text)).split())).strip(" ,;")
    return affiliation[:MAX_AFFILIATION_LENGTH]


def author_from_parts(
    keyname: str,
    forenames: str = "",
    suffix: str = "",
    affiliations: Iterable[str] = (),
) -> AuthorRecord:
    """Build an author from OAI `arXiv` keyname/forenames/suffix/affiliation fields."""
    # OAI records sometimes keep the comma that preceded a suffix ("Heath,").
    parts = (part.strip(" ,") for part in (forenames, keyname, suffix))
    name = clean_name(" ".join(part for part in parts if part))
    cleaned = (clean_affiliation(text) for text in affiliations)
    return AuthorRecord(name=name, affiliations=tuple(a for a in cleaned if a))


def authors_from_parsed(parsed: Iterable[Sequence[str]]) -> tuple[AuthorRecord, ...]:
    """Build authors from `authors_parsed` [keyname, forenames, ...] lists."""
    authors = []
    for entry in parsed:
        keyname, forenames, suffix = [*entry, "", "", ""][:3]
        # Items after the third are footnote numbers ("1 and 2") when the raw
        # string used a numbered affiliation block; alone they name nothing.
        extra = entry[3:]
        affiliations = [a for a in extra if a and not _FOOTNOTE_REF_RE.fullmatch(a)]
        author = author_from_parts(keyname, forenames, suffix, affiliations)
        if author.name:
            authors.append(author)
    return tuple(authors)


def split_authors(raw: str) -> tuple[AuthorRecord, ...]:
    """Split arXiv's raw author string ("A (Inst), B and C") into authors in order."""
    # Without control characters first: a NUL is the parentheses' mask.
    text, footnotes = _take_footnote_block(shown(" ".join(raw.split())))
    drafts: list[_Draft] = []
    for chunk in _split_outside_parens(text):
        drafts.extend(_chunk_drafts(chunk))
    return tuple(_finish(drafts, footnotes))


def _space_initial(match: re.Match[str]) -> str:
    initial = match.group(1)
    return f"{initial} " if initial[0].isupper() else initial


def _delatex(text: str) -> str:
    if not _LATEX_HINT_RE.search(text):
        return text
    # A bare % starts a LaTeX comment and would swallow the rest of the name.
    text = _GLUED_ACCENT_RE.sub(_unglue_accent, text.replace("%", r"\%"))
    try:
        return str(_LATEX.latex_to_text(text))
    except Exception:  # pylatexenc raises assorted errors on malformed input
        return text


def _unglue_accent(match: re.Match[str]) -> str:
    accent, letters = match.groups()
    if _LATEX_MACROS.get_macro_spec(accent + letters) is not None:
        return match.group(0)
    return f"\\{accent}{{{letters[0]}}}{letters[1:]}"


def _mask_parens(text: str) -> str:
    """Replace everything inside parentheses (at any depth) with a mask character."""
    masked, depth = [], 0
    for char in text:
        if char == ")" and depth:
            depth -= 1
        masked.append(_MASK if depth else char)
        if char == "(":
            depth += 1
    return "".join(masked)


def _take_footnote_block(text: str) -> tuple[str, dict[str, str]]:
    """Cut a trailing "((1) Inst A, (2) Inst B)" block and map its numbers to names."""
    # The block is the last top-level group and ends the string; it may lack its
    # closing parenthesis when arXiv cut a long author field short.
    last_group = _LAST_GROUP_RE.search(_mask_parens(text))
    if last_group is None:
        return text, {}
    start = last_group.start()
    inner = text[start + 1 : last_group.end()].strip(" .")
    inner = inner[:-1] if inner.endswith(")") else inner
    if not _FOOTNOTE_MARK_RE.match(inner):
        return text, {}
    pieces = _FOOTNOTE_MARK_RE.split(inner)[1:]
    footnotes = {
        number: clean_affiliation(body)
        for number, body in zip(pieces[::2], pieces[1::2], strict=True)
    }
    return text[:start].rstrip(" ,"), footnotes


def _split_outside_parens(text: str) -> list[str]:
    masked = _mask_parens(text)
    chunks, begin = [], 0
    for match in _SEPARATOR_RE.finditer(masked):
        chunks.append(text[begin : match.start()])
        begin = match.end()
    chunks.append(text[begin:])
    return [chunk for chunk in chunks if chunk.strip()]


def _chunk_parts(chunk: str) -> list[tuple[bool, str]]:
    """Split one author chunk into (is_group, text) parts at top-level parentheses."""
    masked = _mask_parens(chunk)
    parts, pos = [], 0
    for match in re.finditer(rf"\({_MASK}*\)?", masked):
        parts.append((False, chunk[pos : match.start()]))
        inner = chunk[match.start() + 1 : match.end()]
        parts.append((True, inner[:-1] if inner.endswith(")") else inner))
        pos = match.end()
    parts.append((False, chunk[pos:]))
    return [(is_group, text.strip()) for is_group, text in parts if text.strip()]


def _chunk_drafts(chunk: str) -> list[_Draft]:
    drafts = [_Draft()]
    for is_group, text in _chunk_parts(chunk):
        current = drafts[-1]
        if is_group:
            current.groups.append(text)
        elif not current.groups:
            current.name = f"{current.name} {text}".strip()
        elif len(text.split()) == 1 and current.name:
            # "Tenglong (Victor) Gu": a parenthesis inside a name is a nickname.
            current.name = f"{current.name} ({current.groups.pop()}) {text}"
        else:
            # "Isabel Xu (School) Cynthia Xu (School)": a comma was left out.
            drafts.append(_Draft(name=text))
    return drafts


def _finish(drafts: list[_Draft], footnotes: dict[str, str]) -> list[AuthorRecord]:
    authors: list[AuthorRecord] = []
    for draft in drafts:
        affiliations = _resolve_groups(draft.groups, footnotes)
        if authors and (not draft.name or draft.name in _SUFFIXES):
            # "Smith, Jr." or "Smith, (MIT)": the piece belongs to the author before.
            previous = authors.pop()
            name = clean_name(f"{previous.name} {draft.name}")
            affiliations = (*previous.affiliations, *affiliations)
            authors.append(AuthorRecord(name=name, affiliations=affiliations))
            continue
        name = clean_name(_ET_AL_RE.sub("", draft.name))
        if name and name.lower() not in _NOT_AUTHORS:
            authors.append(AuthorRecord(name=name, affiliations=affiliations))
    return authors


def _resolve_groups(groups: list[str], footnotes: dict[str, str]) -> tuple[str, ...]:
    affiliations: list[str] = []
    for group in groups:
        if _FOOTNOTE_REF_RE.fullmatch(group):
            numbers = re.findall(r"\d+", group)
            affiliations.extend(footnotes[n] for n in numbers if n in footnotes)
        else:
            affiliations.append(clean_affiliation(group))
    # Keep the first occurrence of each affiliation, in order.
    return tuple(dict.fromkeys(a for a in affiliations if a))
