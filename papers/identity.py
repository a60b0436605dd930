"""Who an author is: the name as arXiv prints it, normalised to a key.

arXiv has no author ids, so an author is a name. The key makes the printings of
one name that differ only in form the same author: accents ("Müller" and
"Muller"), case ("DE LA CRUZ" and "de la Cruz"), spaces and punctuation ("J.Smith",
"J. Smith" and "J Smith"; "Jean-Pierre" and "Jean Pierre"; "Smith, Jr." and
"Smith Jr"). It cannot tell two people who print one name apart, nor join one
person printed two ways ("J. Smith" and "John Smith", or with and without "Jr.").
"""

from __future__ import annotations

import re
import unicodedata

MAX_KEY_LENGTH = 400
# Any run of what is not a letter or digit (spaces, dots, hyphens, commas,
# apostrophes) separates words; the key keeps one space between them.
_SEPARATORS_RE = re.compile(r"[\W_]+")


def author_key(name: str) -> str:
    """The normalised form of a printed name: NFKD with the combining marks
    dropped, case-folded, words separated by one space."""
    decomposed = unicodedata.normalize("NFKD", name)
    bare = "".join(char for char in decomposed if not unicodedata.combining(char))
    return _SEPARATORS_RE.sub(" ", bare.casefold()).strip()[:MAX_KEY_LENGTH]
