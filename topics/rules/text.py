"""Text normalisation shared by rule terms and paper fields.

Rule terms and paper text go through the same functions, so whatever a rule says is
compared with text that was cleaned in exactly the same way.
"""

from __future__ import annotations

import re

from papers.letters import fold
from papers.letters import plain_letters

# --- LaTeX -------------------------------------------------------------------

# Citations and labels carry keys, not words; they are dropped with their argument.
_DROPPED_COMMAND = re.compile(
    r"\\(?:cite[a-z]*|ref|eqref|autoref|[cC]ref|label|url)\*?"
    r"(?:\[[^\]]*\])*\{[^{}]*\}"
)
_COMMAND = re.compile(r"\\([A-Za-z]+)\*?")
_ESCAPE = re.compile(r"\\.?", re.DOTALL)
# Font, size and spacing commands wrap words without being words themselves.
_SILENT_COMMANDS_TEXT = """
    text textit textbf textrm textsf texttt textsc textup textsl textnormal emph em
    it bf rm sf tt sc sl up mathrm mathit mathbf mathsf mathtt mathcal mathbb
    mathfrak mathscr mathnormal boldsymbol bm operatorname mbox hbox ensuremath
    footnote underline overline tiny scriptsize footnotesize small normalsize large
    Large LARGE huge Huge left right big Big bigl bigr Bigl Bigr displaystyle
    textstyle scriptstyle quad qquad noindent newline linebreak hspace vspace
"""
_SILENT_COMMANDS = frozenset(_SILENT_COMMANDS_TEXT.split())
_LATEX_LEFTOVERS = str.maketrans({"$": None, "{": None, "}": None, "~": " "})


def _command_to_text(match: re.Match[str]) -> str:
    name = match.group(1)
    # A command starts a new word, but what follows it may continue that word:
    # "$\Lambda$CDM" reads "LambdaCDM", as it renders.
    return " " if name in _SILENT_COMMANDS else " " + name


def strip_latex(text: str) -> str:
    """Return text with LaTeX markup replaced by the plain words it renders."""
    if "\\" not in text:
        # Every command, accent and escape starts with a backslash; math such
        # as "$k$-means" only needs its delimiters gone.
        if "$" not in text and "{" not in text and "~" not in text:
            return text
        return text.translate(_LATEX_LEFTOVERS)
    return _strip_latex_fully(text)


def _strip_latex_fully(text: str) -> str:
    # strip_latex's slow path, kept whole so tests can compare the fast ones.
    text = _DROPPED_COMMAND.sub(" ", text)
    text = plain_letters(text)
    text = _COMMAND.sub(_command_to_text, text)
    text = _ESCAPE.sub(" ", text)
    return text.translate(_LATEX_LEFTOVERS)


# --- Words -------------------------------------------------------------------

# "LLMs", "GANs", "mRNAs": an "s" after two capitals is a plural that only the
# original casing reveals, so it goes before folding. (Written "s" first so that
# the regex engine can scan for the letter.)
_ACRONYM_PLURAL = re.compile(r"s\b(?<=[A-Z][A-Z]s)", re.ASCII)
# A hyphen joins a compound only between two letters or digits.
_LOOSE_HYPHEN = re.compile(r"-(?:(?![^\W_])|(?<![^\W_]-))")
_ASCII_SEPARATORS = str.maketrans(
    {chr(code): " " for code in range(128) if not chr(code).isalnum()} | {"-": "-"}
)
_COMPOUND = re.compile(r"[^\W_]+(?:-[^\W_]+)*")


def raw_words(text: str) -> list[str]:
    """Return the folded words of text; hyphenated words keep their hyphens.

    Apostrophes are dropped ("O'Brien" is "obrien"); every other character that is
    not a letter or digit separates words.
    """
    text = fold(_ACRONYM_PLURAL.sub("", strip_latex(text))).replace("'", "")
    if "-" in text:
        text = _LOOSE_HYPHEN.sub(" ", text)
    if text.isascii():
        # Same words as the regex below, several times faster.
        return text.translate(_ASCII_SEPARATORS).split()
    return _COMPOUND.findall(text)


def split_words(text: str) -> list[tuple[str, ...]]:
    """Return the words of text, each as the tuple of its hyphen-separated parts.

    "Multi-turn RL" gives [("multi", "turn"), ("rl",)].
    """
    return [tuple(word.split("-")) for word in raw_words(text)]


# --- Plurals -----------------------------------------------------------------

# Words that end in "s" but are not plurals, where stripping it would cause a
# collision ("news" is not "new") or break the match with the real plural.
_NOT_PLURAL = frozenset({"alias", "atlas", "bias", "canvas", "lens", "news"})
_IRREGULAR_PLURALS = {
    "aliases": "alias",
    "analyses": "analysis",
    "appendices": "appendix",
    "atlases": "atlas",
    "axes": "axis",
    "biases": "bias",
    "buses": "bus",
    "canvases": "canvas",
    "children": "child",
    "corpora": "corpus",
    "criteria": "criterion",
    "diagnoses": "diagnosis",
    "foci": "focus",
    "focuses": "focus",
    "gases": "gas",
    "hypotheses": "hypothesis",
    "indices": "index",
    "lenses": "lens",
    "loci": "locus",
    "matrices": "matrix",
    "nuclei": "nucleus",
    "phenomena": "phenomenon",
    "radii": "radius",
    "statuses": "status",
    "syntheses": "synthesis",
    "theses": "thesis",
    "vertices": "vertex",
    "viruses": "virus",
}


def fold_plural(word: str) -> str:
    """Return the singular form used for matching: "policies" and "policy" agree.

    The rules are deliberately few. Both forms of a word must map to the same
    string; the string itself need not be a real word ("cache" gives "cach").
    """
    irregular = _IRREGULAR_PLURALS.get(word)
    if irregular is not None:
        return irregular
    if len(word) < 4 or word in _NOT_PLURAL or not word.isalpha():
        return word
    if word[-1] == "e":
        if word[-2] == "i":  # movie/movies both become "movy"
            return word[:-2] + "y"
        if word.endswith("che"):  # cache/caches both become "cach"
            return word[:-1]
        return word
    if word[-1] != "s" or word[-2] in "sui" or not word.isascii():
        return word
    if word.endswith("ies"):
        return word[:-3] + "y" if len(word) > 4 else word
    if word.endswith(("sses", "ches", "shes", "xes")):
        return word[:-2]
    return word[:-1]


class _PluralCache(dict[str, str]):
    """word -> fold_plural(word), filled on first use; a bounded memo."""

    # Paper vocabularies overlap heavily, so most words of a new paper were
    # folded before. The bound keeps memory flat on endless ingests.
    LIMIT = 100_000

    def __missing__(self, word: str) -> str:
        if len(self) >= self.LIMIT:
            self.clear()
        form = self[word] = fold_plural(word)
        return form


_PLURALS = _PluralCache()
# Look-ups run in C; fold_plural only runs for words not seen yet.
cached_plural = _PLURALS.__getitem__
