"""A paper's names as arXiv prints them: its stored author line
(Paper.author_names), and how a name ("Forenames Keyname Suffix") splits into a
person's family and given names, for the citation formats (papers.bibtex,
papers.export), which each write a person's parts and a group's name whole."""

from __future__ import annotations

# How Paper.author_names joins a paper's names, in order (papers.ingest.upsert).
AUTHOR_SEPARATOR = ", "

# Words that end a name without being its family name ("Martin Luther King Jr.").
SUFFIXES = frozenset({"Jr", "Jr.", "Sr", "Sr.", "II", "III", "IV"})
# A name with one of these words is a group's, not a person's: never split.
GROUPS = frozenset(
    {"collaboration", "consortium", "team", "group", "collaborations", "project"}
    | {"committee", "initiative", "network", "survey", "observatory", "experiment"}
)


def printed_authors(author_names: str) -> list[str]:
    """A paper's authors in order, as it prints them, from its stored author
    line (no query; not the names its author pages show, which are as an
    author was first seen)."""
    return [name for name in author_names.split(AUTHOR_SEPARATOR) if name]


def split_name(name: str) -> tuple[str, str, str] | None:
    """(family, given, suffix) of a person's name as arXiv prints it ("Forenames
    Keyname Suffix"), or None when it is not splittable: one word, or a group
    ("ATLAS Collaboration"), which the formats then keep whole."""
    words = name.split()
    suffix = ""
    if len(words) > 2 and words[-1] in SUFFIXES:
        suffix = words.pop()
    if len(words) < 2 or any(word.lower() in GROUPS for word in words):
        return None
    # BibTeX's rule, so that every format splits a name alike: the family name
    # starts at the first word in lower case after the first ("van der Waals",
    # "dos Santos Macedo", "y Arcas"), else it is the last word.
    start = next(
        (i for i, word in enumerate(words[1:-1], 1) if word[0].islower()),
        len(words) - 1,
    )
    return " ".join(words[start:]), " ".join(words[:start]), suffix
