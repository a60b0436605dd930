"""Plain text for the LaTeX that arXiv titles and abstracts carry.

`$\\alpha$-divergence` reads "\u03b1-divergence", `\\emph{x}` reads "x",
`$O(n^2)$` reads "O(n²)" and `\\href{https://x.org}{our code}` reads "our code
(https://x.org)", which pages then link (papers.links). TeX's quotes and
dashes read as typeset, in text with no other TeX too: ``quoted'' reads
"\u201cquoted\u201d" (369 demo papers), "4--12" reads "4\u201312" and "a---b"
"a\u2014b" (2,715). Only the LaTeX "islands" of a text go through pylatexenc
(math between dollars, and runs of text holding a backslash or a brace): it is
pure Python and costs about 10 ms for a whole abstract, against a fraction of
that for the few islands. The result is plain text, to be escaped like any
other paper text.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from functools import lru_cache

from pylatexenc import latexwalker
from pylatexenc import macrospec
from pylatexenc.latex2text import LatexNodes2Text
from pylatexenc.latex2text import MacroTextSpec
from pylatexenc.latex2text import get_default_latex_context_db

logger = logging.getLogger(__name__)

# A brace group, nested up to three levels: {x}, {\bf {x}}.
GROUP = r"\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\}"
# Pandoc's rule for inline math, which tells "$5 and $10" from math: the opening
# dollar has no space after it, the closing one no space before it.
MATH = (
    r"\$\$.+?\$\$"
    r"|(?<!\\)\$(?!\s)(?:[^$\\]|\\.)+?(?<![\s\\])\$"
    r"|\\\(.+?\\\)"
    r"|\\\[.+?\\\]"
)
# A run of non-space text, where brace groups and escapes may hold spaces.
RUN = rf"(?:{GROUP}|\\.|[^\s{{}}$\\])+"
ISLAND = re.compile(rf"(?P<math>{MATH})|(?P<run>{RUN})", re.DOTALL)
# Outside math, %, & and # are text in an abstract, not LaTeX's comment,
# alignment and parameter characters: "50% of" must not drop the rest.
SPECIAL = re.compile(r"(?<!\\)([%&#])")
# An address keeps its characters, escaped for LaTeX or by SPECIAL: a\_b, a\%20.
ESCAPED = re.compile(r"\\([%&#_~$])")
WEB_PREFIX = re.compile(r"^(?:https?://)?(?:www\.)?", re.IGNORECASE)
# TeX's quotes, ``so'' and `so', in plain text too: each `` closes at the next
# '' or " (which TeX sets as a closing quote as well); a ` at the next ' within
# a few words (an apostrophe inside, as in `don't', leaves it as it is).
QUOTED = re.compile(r"``((?:(?!``).){1,400}?)(?:''|\")", re.DOTALL)
SINGLE_QUOTED = re.compile(r"`([^`'\s][^`']{0,80}?)'(?![\w'])")
# TeX's dashes, -- and ---, in plain text too; an address is matched whole, to
# be left as it is, and so are arrows (-->, <--), <!-- and longer runs.
DASH = re.compile(r"(?P<address>\S*(?:://|www\.)\S*)|(?<![-<!])(?P<dash>---?)(?![->])")
# TeX's tie, 28.7~dB: a space that does not break, between two characters; an
# address is matched whole, to be left as it is (https://x.org/~me/), and a "~"
# after a space is "about" (~2x), as abstracts write it.
TIE = re.compile(r"(?P<address>\S*(?:://|www\.)\S*)|(?<=[^\s\\])~(?=\S)")
SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
SUBSCRIPT = str.maketrans("0123456789-", "₀₁₂₃₄₅₆₇₈₉₋")
# In math, a digit or a braced number raised or lowered (n^2, 10^{-3}, H_2) is
# written with Unicode's; pylatexenc would write n^2, and 10^-3 for 10^{-3}.
SCRIPT = re.compile(r"([\^_])(?:\{(-?\d+)\}|(\d))")
NUMBER = re.compile(r"-?\d+")
# 360$^{\circ}$ reads "360°" (41 demo papers), not "360^∘", and so do arXiv's
# 360{\deg} (83) and a \deg after a number; any other \deg is the operator,
# the degree of a vertex: \deg(v).
DEGREE = re.compile(
    r"\^\s*(?:\{\s*\\circ\s*\}|\\circ(?![a-zA-Z]))"
    r"|\{\\deg\}|(?<=\d)\\deg(?![a-zA-Z])"
)
# TeX's \char45 (decimal, "2D hex or '55 octal) is that character, and the
# space after its number ends the number: Day\char45 Ahead reads "Day-Ahead",
# not "Day45 Ahead".
CHAR = re.compile(r"\\char\s*(?:(\d+)|\"([0-9A-Fa-f]+)|'([0-7]+)) ?")
# Standard macros abstracts use that pylatexenc does not know (it would read
# any of them as an author's own macro, by its name): font and size switches,
# delimiter sizes and spacing, which read as nothing ({\rm sign}, \left\{,
# LLaMA\nobreakdash-3.1), with the argument of those that take one...
DROPPED = (
    *"rm it em bf sf tt cal sc small footnotesize scriptsize tiny".split(),
    *"scriptstyle displaystyle textstyle noindent par nobreakdash".split(),
    *"left right middle big Big bigg Bigg bigl bigr Bigl Bigr biggl biggr".split(),
    *"color citeyearpar ding romannumeral".split(),
    "@",  # SOC\@. (a sentence's end)
)
ONE_ARGUMENT = ("color", "citeyearpar", "ding", "enquote", "unicode")
TWO_ARGUMENTS = ("SI", "tfrac", "dfrac")
# ...and those that stand for a word or a sign.
SHOWN = {
    "eg": "e.g.",
    "ie": "i.e.",
    "etal": "et al.",
    "degree": "°",
    "percent": "%",
    "colon": ":",
    "ne": "≠",
    "neg": "¬",
    "land": "∧",
    "lor": "\u2228",
    "Box": "□",
    "Diamond": "◇",
    "leadsto": "⇝",
    "dashrightarrow": "⇢",
    "bmod": "mod",
    "S": "§",
    "pounds": "£",
    "textless": "<",
    "textgreater": ">",
    "thinsp": "\u2009",
    "|": "‖",  # a norm, \|x\|
}
# Operators TeX sets apart from what comes before them: n\log n reads "n log n",
# not "nlog n" (64 demo papers), but d/\log n reads "d/log n". Each is written
# after a mark that SPACING makes a space or nothing (no arXiv text holds the
# mark: XML cannot).
OPERATORS = (
    *"log ln lg exp sin cos tan sinh cosh tanh arcsin arccos arctan".split(),
    *"max min sup inf lim det arg ker dim gcd Pr argmax argmin deg".split(),
)
OPERATOR = "\x00"
# Spaces as TeX's spacing shows in plain text. After an opening bracket or a
# script, none: (\log n) reads "(log n)", \lambda_\min "λ_min", d_{\rm eff}
# "d_eff". Before an operator, one after a letter (with its accent: k̅ log n),
# a digit, a closing bracket, ∇ or ∂ (∇ log p), and none after a sign:
# "d/log n", "f(x)=ln x", "1-exp(-t)".
SPACING = re.compile(
    r"(?P<opened>[(\[{_^])[\s\x00]+"
    r"|(?P<operand>[^\W_]|[\u0300-\u036f)\]}∇∂])?\x00"
)
# A macro neither side of pylatexenc knows, with an argument, \revise{Type 2} or
# \boldsymbol{x}: markup whose argument is the text (not after a line
# break's \\; an environment's \begin{...} is not a macro).
UNKNOWN_MARKUP = re.compile(r"(?<!\\)\\(?!(?:begin|end)\b)([A-Za-z]+)\*?(?=\{(?!\}))")
# \verb|OLMo2-1B|: its text as it is, between any two equal characters.
VERB = re.compile(r"\\verb\*?([^\sA-Za-z*])(.*?)\1")
# What is left of an island pylatexenc cannot read: its commands and braces go.
COMMAND = re.compile(r"\\[a-zA-Z]+\*?|\\(?=\W)|[{}$]")


def _link(node: latexwalker.LatexMacroNode, l2tobj: LatexNodes2Text) -> str:
    """`\\url{address}` or `\\href{address}{text}`: the address, after the text in
    brackets, so that a reader can follow it (pages link it: papers.links)."""
    address_node, *text_nodes = node.nodeargd.argnlist
    address = ""
    if address_node is not None:
        verbatim = address_node.latex_verbatim().strip().removeprefix("{")
        address = ESCAPED.sub(r"\1", verbatim.removesuffix("}")).strip()
    text = l2tobj.nodelist_to_text([n for n in text_nodes if n]).strip()
    if not address or _place(text) in ("", _place(address)):
        return address or text
    return f"{text} ({address})"


def _scripted(
    table: dict[int, int],
) -> Callable[[latexwalker.LatexMacroNode, LatexNodes2Text], str]:
    """`\\textsuperscript{2}` reads "²": a number raised or lowered as in math
    (SCRIPT); other text ("4\\textsuperscript{th}") as it is."""

    def text(node: latexwalker.LatexMacroNode, l2tobj: LatexNodes2Text) -> str:
        argument = node.nodeargd.argnlist[-1]
        inner = l2tobj.nodelist_to_text([argument]) if argument else ""
        return inner.translate(table) if NUMBER.fullmatch(inner) else inner

    return text


def _place(address: str) -> str:
    """The address as a link's text may show it, without scheme, "www." or a
    closing slash: \\href{https://github.com/a/}{github.com/a} reads once."""
    return WEB_PREFIX.sub("", address).rstrip("/").lower()


def _context() -> tuple[macrospec.LatexContextDb, macrospec.LatexContextDb]:
    """pylatexenc's macros, plus the ones abstracts use that it gets wrong."""
    parsing = latexwalker.get_default_latex_context_db()
    parsing.add_context_category(
        "momentum",
        prepend=True,
        macros=[
            macrospec.std_macro("href", False, 2),
            macrospec.std_macro("textsuperscript", False, 1),
            macrospec.std_macro("textsubscript", False, 1),
            *(macrospec.std_macro(name, False, 1) for name in ONE_ARGUMENT),
            *(macrospec.std_macro(name, False, 2) for name in TWO_ARGUMENTS),
        ],
    )
    text = get_default_latex_context_db()
    text.add_context_category(
        "momentum",
        prepend=True,
        macros=[
            MacroTextSpec("texttt", "%(1)s"),  # discarded by default
            MacroTextSpec("href", _link),
            MacroTextSpec("url", _link),
            MacroTextSpec("cite", ""),
            MacroTextSpec("textsuperscript", _scripted(SUPERSCRIPT)),
            MacroTextSpec("textsubscript", _scripted(SUBSCRIPT)),
            MacroTextSpec("LaTeX", "LaTeX"),
            MacroTextSpec("TeX", "TeX"),
            MacroTextSpec("enquote", "\u201c%(1)s\u201d"),
            MacroTextSpec("SI", "%(1)s %(2)s"),
            MacroTextSpec("tfrac", text.get_macro_spec("frac").simplify_repl),
            MacroTextSpec("dfrac", text.get_macro_spec("frac").simplify_repl),
            MacroTextSpec("unicode", _unicode),
            MacroTextSpec("textsf", "%(1)s"),  # discarded by default
            MacroTextSpec("mbox", "%(1)s"),
            *(MacroTextSpec(name, "") for name in DROPPED),
            *(MacroTextSpec(name, OPERATOR + name) for name in OPERATORS),
            *(MacroTextSpec(name, shown) for name, shown in SHOWN.items()),
        ],
    )
    # An author's own macro (\STAC, \NP-hard, \ours{}) reads as its name, as
    # arXiv's listing shows it: pylatexenc would drop it, and its word with it.
    # One followed by a group (\revise{text}) is markup: only the group is
    # read (UNKNOWN_MARKUP).
    text.set_unknown_macro_spec(MacroTextSpec("", _macro_name))
    return parsing, text


def _macro_name(node: latexwalker.LatexMacroNode, l2tobj: LatexNodes2Text) -> str:
    # One the parser took arguments for (\label{x}, \citeauthor{x}) is not
    # text: it reads as nothing, as pylatexenc has it.
    return "" if _has_arguments(node) else node.macroname


def _has_arguments(node: latexwalker.LatexMacroNode) -> bool:
    return node.nodeargd is not None and any(node.nodeargd.argnlist)


def _unicode(node: latexwalker.LatexMacroNode, l2tobj: LatexNodes2Text) -> str:
    """MathJax's `\\unicode{x2013}` is that character."""
    argument = node.nodeargd.argnlist[-1]
    code = l2tobj.nodelist_to_text([argument]) if argument else ""
    try:
        return _character(int(code[1:], 16) if code[:1] in "xX" else int(code))
    except ValueError:
        return ""


class _Converter(LatexNodes2Text):
    """pylatexenc's text, keeping in math the space written after a command:
    TeX eats it, and so does pylatexenc unless text follows, so "\\le \\pi"
    would read "≤π" and "\\bar\\Theta = x" "Θ̅= x". It is kept after parsing,
    never as a control space a command would take for its argument: \\sqrt n
    is \\sqrt{n}, as TeX reads it."""

    def nodelist_to_text(self, nodelist: list[latexwalker.LatexNode]) -> str:
        runs: list[list[latexwalker.LatexNode]] = [[]]
        for node in nodelist:
            if runs[-1] and _space_after(runs[-1][-1]):
                runs.append([])
            runs[-1].append(node)
        # A space doubled before text goes with the others in _render.
        text = super().nodelist_to_text
        return " ".join(text(run) for run in runs)


def _space_after(node: latexwalker.LatexNode | None) -> str:
    """The space written after a command in math, or after the command that is
    a macro's last argument: "\\alpha ", "\\bar\\Theta "."""
    if node is None or not node.isNodeType(latexwalker.LatexMacroNode):
        return ""
    if _has_arguments(node):
        return _space_after(node.nodeargd.argnlist[-1])
    return node.macro_post_space if node.parsing_state.in_math_mode else ""


PARSING_CONTEXT, TEXT_CONTEXT = _context()
UNKNOWN_MACRO = TEXT_CONTEXT.unknown_macro_spec
UNKNOWN_PARSED = PARSING_CONTEXT.unknown_macro_spec
CONVERTER = _Converter(latex_context=TEXT_CONTEXT, math_mode="text")


@lru_cache(maxsize=8192)
def latex_to_text(text: str) -> str:
    """The text with its LaTeX rendered as plain Unicode; unchanged without any."""
    if "`" in text:
        text = QUOTED.sub("\u201c\\1\u201d", text)
        text = SINGLE_QUOTED.sub("\u2018\\1\u2019", text)
    if "--" in text:
        text = DASH.sub(_dash, text)
    if "~" in text:
        text = TIE.sub(lambda match: match.group("address") or "\u00a0", text)
    if "\\char" in text:
        text = CHAR.sub(_char, text)
    # Braces alone are TeX too: 13{,}600 reads 13,600.
    if "$" not in text and "\\" not in text and "{" not in text:
        return text
    # An island may read as nothing (\cite{x}): the spaces around it close up.
    return " ".join(ISLAND.sub(_island, text).split())


def _dash(match: re.Match[str]) -> str:
    dash = match.group("dash")
    if dash is None:
        return match.group("address")
    text, start, end = match.string, match.start(), match.end()
    # A command-line flag ("--help"): a space before, a letter after.
    if (
        dash == "--"
        and (start == 0 or text[start - 1].isspace())
        and (end < len(text) and text[end].isalpha())
    ):
        return dash
    return "\u2014" if dash == "---" else "\u2013"


def _island(match: re.Match[str]) -> str:
    source = match.group(0)
    if match.group("run") and "\\" not in source and "{" not in source:
        return source
    return _render(source, bool(match.group("math")))


@lru_cache(maxsize=8192)
def _render(source: str, math: bool) -> str:
    latex = DEGREE.sub("°", SPECIAL.sub(r"\\\1", source))
    if math or "$" in latex:
        latex = SCRIPT.sub(_script, latex)
    latex = UNKNOWN_MARKUP.sub(_without_unknown, VERB.sub(r"\\texttt{\2}", latex))
    try:
        walker = latexwalker.LatexWalker(latex, latex_context=PARSING_CONTEXT)
        nodes, _, _ = walker.get_latex_nodes()
        text = CONVERTER.nodelist_to_text(nodes)
    except Exception:  # pylatexenc raises many kinds of errors on odd input
        logger.debug("Could not read LaTeX %r", source, exc_info=True)
        text = COMMAND.sub("", source)
    return SPACING.sub(_spacing, " ".join(text.split()))


def _spacing(match: re.Match[str]) -> str:
    if match.group("opened"):
        return match.group("opened")
    operand = match.group("operand")
    return f"{operand} " if operand else ""


def _without_unknown(match: re.Match[str]) -> str:
    """An unknown macro before its argument goes; one either side knows stays."""
    name = match.group(1)
    unknown = (
        TEXT_CONTEXT.get_macro_spec(name) is UNKNOWN_MACRO
        and PARSING_CONTEXT.get_macro_spec(name) is UNKNOWN_PARSED
    )
    return "" if unknown else match.group(0)


def _script(match: re.Match[str]) -> str:
    table = SUPERSCRIPT if match.group(1) == "^" else SUBSCRIPT
    return (match.group(2) or match.group(3)).translate(table)


def _char(match: re.Match[str]) -> str:
    decimal, hexadecimal, octal = match.groups()
    if decimal:
        code = int(decimal)
    else:
        code = int(hexadecimal, 16) if hexadecimal else int(octal, 8)
    # Not a character that would be read as TeX again.
    character = _character(code)
    return "" if character in "\\{}$" else character


def _character(code: int) -> str:
    """The character of a code TeX names, or nothing for one no page, feed or
    mail can hold: a control character, half of a surrogate pair, a
    non-character."""
    if code < 32 or 0xD800 <= code <= 0xDFFF or code & 0xFFFE == 0xFFFE:
        return ""
    return chr(code) if code < 0x110000 else ""
