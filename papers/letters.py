"""Letters written more than one way, made one: TeX's accents and special
letters (B\\'ezier, Erd\\H{o}s, {\\o}), Unicode's (Bézier, Erdős, ø) and none
(Bezier).

arXiv's metadata writes an accented letter either way, and a reader types it
either way or without its accent. Search (papers/search.py, whose index and
queries read text through `search_text`, and its highlights through `fold`)
and topic rules (topics.rules.text, through `plain_letters` and `fold`) compare
words with the accents gone, so all three match.
"""

from __future__ import annotations

import re
import unicodedata

# {\ss}, \o, {\aa}: a letter TeX writes as a command, braced or not; å (aa)
# first, as its own step, as PostgreSQL's function takes it (migration
# papers/0014), so both read "\o\aa" alike.
RING_A = re.compile(r"\{\\([aA])\1\}|\\([aA])\2(?![A-Za-z])")
_SPECIAL = r"(ss|ae|AE|oe|OE|o|O|l|L|i|j)"
SPECIAL_LETTER = re.compile(rf"\{{\\{_SPECIAL}\}}|\\{_SPECIAL}(?![A-Za-z])")
# \'e, \'{e}, {\'e}, \"o, \v{c}, \c c: the accent goes (folding would drop it
# anyway), with the braces around the letter or around it all.
_ACCENT = r"""\\(?:[`'^"~=.]\s*|[uvHckrbdt](?:\s+|(?=\{)))"""
_LETTER = r"(?:\{\s*([A-Za-z])\s*\}|([A-Za-z]))"
ACCENT = re.compile(rf"\{{{_ACCENT}{_LETTER}\}}|{_ACCENT}{_LETTER}")

_GREEK_NAMES = """
    alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron
    pi rho sigma tau upsilon phi chi psi omega theta phi pi rho
"""
_GREEK = dict(zip("αβγδεζηθικλμνξοπρστυφχψωϑϕϖϱ", _GREEK_NAMES.split(), strict=True))
_LETTERS_WITHOUT_DECOMPOSITION = {
    "ø": "o",
    "đ": "d",
    "ð": "d",
    "ł": "l",
    "æ": "ae",
    "œ": "oe",
    "þ": "th",
    "\u0131": "i",  # dotless i
    "\u2010": "-",  # hyphen
    "\u2011": "-",  # non-breaking hyphen
    "\u00ad": "",  # soft hyphen
    "\u2019": "'",  # typographic apostrophe
}
_FOLD = str.maketrans(_GREEK | _LETTERS_WITHOUT_DECOMPOSITION)
# What search_text spells out: Greek letters of either case, and the letters
# no decomposition makes plain (SQLite's tokenizer keeps them; PostgreSQL's
# unaccent would write them so anyway).
SPELLED = (
    _GREEK
    | {letter.upper(): name.capitalize() for letter, name in _GREEK.items()}
    | {"ς": "sigma"}
    # Accented Greek letters whole, so that no accent is left between names.
    | {
        letter: _GREEK[unicodedata.normalize("NFD", letter.lower())[0]].capitalize()
        if letter.isupper()
        else _GREEK[unicodedata.normalize("NFD", letter)[0]]
        for letter in "άέήίόύώϊϋΐΰΆΈΉΊΌΎΏΪΫ"
    }
    | {
        letter: plain
        for letter, plain in _LETTERS_WITHOUT_DECOMPOSITION.items()
        if letter.isalpha()
    }
    | {"Ø": "O", "Đ": "D", "Ð": "D", "Ł": "L", "Æ": "AE", "Œ": "OE", "Þ": "TH"}
    | {"ß": "ss"}
)
_SPELL = str.maketrans(SPELLED)
# A superscript or subscript of digits written in TeX after a letter, as in
# H$^2$SD: shown (and pasted) as H²SD, which NFKC makes H2SD. (A letter's,
# T$_c$, is shown as written, T_c.)
GLUED_SCRIPT = re.compile(r"([A-Za-z])\$[\^_]\{?([0-9]+)\}?\$")
# A Greek letter alone in math, as in $\tau$-Rec: shown τ-Rec, and so spelled
# as the Greek letter typed is (tau-Rec), one word with what it is joined to.
_TEX_CAPITALS = "Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega"
_TEX_GREEK = "|".join([*dict.fromkeys(_GREEK.values()), *_TEX_CAPITALS.split()])
GREEK_MATH = re.compile(rf"\$\\(?:var)?({_TEX_GREEK})\$")
# The combining accents NFKD splits off Latin, Greek and Cyrillic letters.
_COMBINING_MARK = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff]")


def plain_letters(text: str) -> str:
    """The text with TeX's accented and special letters as plain ones
    (B\\'ezier is Bezier, {\\ss} is ss); the rest of its TeX as it was."""
    if "\\" not in text:
        return text
    for pattern in (RING_A, SPECIAL_LETTER, ACCENT):
        text = pattern.sub(_letter, text)
    return text


def search_text(text: str) -> str:
    """The text as the search index reads it, and a query: `plain_letters`,
    then a TeX super- or subscript of digits after a letter joined to it
    (H$^2$SD is H2SD), a Greek letter alone in math written as its name
    ($\\tau$-Rec is tau-Rec) and the letters of SPELLED spelled out (the
    Greek letter is alpha, as `$\\alpha$` reads; ø is o). Migration papers/0015
    is its twin for PostgreSQL."""
    text = plain_letters(text)
    if "$" in text:
        text = GREEK_MATH.sub(r"\1", GLUED_SCRIPT.sub(r"\1\2", text))
    if text.isascii():
        return text
    return text.translate(_SPELL)


def _letter(match: re.Match[str]) -> str:
    """The one group of the alternatives that matched."""
    return next(letter for letter in match.groups() if letter)


def fold(text: str) -> str:
    """Return text lower-cased, with accents removed and Greek letters spelled out."""
    if text.isascii():
        return text.lower()
    text = unicodedata.normalize("NFKD", text.casefold())
    return _COMBINING_MARK.sub("", text).translate(_FOLD)
