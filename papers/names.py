"""How a name as arXiv prints it ("Forenames Keyname Suffix") splits into a
person's family and given names, for the citation formats (papers.bibtex,
papers.export), which each write a person's parts and a group's name whole."""

from __future__ import annotations

# Words that end a name without being its family name ("Martin Luther King Jr.").
SUFFIXES = frozenset({"Jr", "Jr.", "Sr", "Sr.", "II", "III", "IV"})
# Lower-case words that belong to the family name that follows ("van der Waals").
PARTICLES = frozenset(
    {"van", "von", "der", "den", "de", "del", "della", "di", "da", "du", "dos", "la"}
    | {"le", "ten", "ter", "zu", "bin", "ibn", "al", "el", "st."}
)
# A name with one of these words is a group's, not a person's: never split.
GROUPS = frozenset(
    {"collaboration", "consortium", "team", "group", "collaborations", "project"}
    | {"committee", "initiative", "network", "survey", "observatory", "experiment"}
)


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
    start = len(words) - 1
    while start > 1 and words[start - 1] in PARTICLES:
        start -= 1
    return " ".join(words[start:]), " ".join(words[:start]), suffix
