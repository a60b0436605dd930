"""Plain-text helpers shared by retrieval and the answerers: terms and sentences.

Paper text and model output are untrusted: nothing here builds markup, and
everything here is pure and fast enough to run over a few dozen abstracts.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from papers.letters import fold

MAX_TERMS = 24
# Words as the papers' English is written, their accents dropped (fold): the
# "naïve" or "Schrödinger" of a question or a paper is one word, not two.
WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*")
# English stop words, plus the words every question about papers carries: they
# match almost every abstract and would drown the terms that carry the question.
STOP_WORDS = frozenset(
    """a about above after again against all also am an and any are as at be
    because been before being below between both but by can could did do does
    doing down during each few for from further had has have having he her here
    hers how i if in into is it its itself just me more most my no nor not now of
    off on once only or other our out over own same she should so some such than
    that the their them then there these they this those through to too under
    until up very was we were what when where which while who whom why will with
    would you your
    paper papers work works study studies approach approaches method methods
    propose proposed proposes use used uses using show shows shown present
    presents recent recently new novel model models way ways anyone someone
    something tell explain describe find found there's what's does do how's
    better best good improve improves improving improved change changed""".split()
)
# Words a question is phrased with that a quoted sentence need not contain:
# rare in abstracts (so retrieval's rarity weights would favour them) yet they
# say nothing about the subject. The answerer ignores them; retrieval keeps
# them, where they cost nothing measurable (bench/ask).
QUESTION_WORDS = frozenset(
    """get gets getting instead one actually really know known help helps
    appear appeared appears month months week weeks year years right several
    lately latest kind kinds happen happens exist exists""".split()
)
# The commonest function words of the other languages most often written in
# Latin letters, accents dropped (fold), as stop-word lists give them: a
# question holding more of one language's than of English's is in that
# language (the usual stop-word guess of a text's language).
FOREIGN_STOP_WORDS = {
    language: frozenset(words.split())
    for language, words in {
        "German": """der die das den dem des ein eine einer eines einem einen und
            oder aber ist sind war wird werden wurde wurden hat haben nicht auch
            mit von zu zum zur bei fur uber auf aus nach wie was wer wo warum
            welche welcher welches ich wir sie es er man sich kann konnen gibt
            durch zwischen dass wenn im am vom ins noch mehr sehr diese dieser
            dieses""",
        "Spanish": """el la los las un una unos unas y o pero es son esta estan
            fue ser de del al en con por para sin sobre que como cual cuales
            cuando donde quien porque se su sus lo le les mas muy entre hay
            puede pueden este estos estas""",
        "French": """le la les un une des du de et ou mais est sont etait etre a
            au aux avec pour par sur dans sans que qu qui quoi quel quelle quels
            quelles comment pourquoi ce cette ces il elle ils elles on se son sa
            ses leur leurs ne pas plus tres entre peut peuvent""",
        "Italian": """il lo la i gli le un una uno e o ma di del della dei delle
            da in con per su tra fra che come quale quali quando dove chi perche
            si non sono sia essere ha hanno piu molto questo questa questi
            queste""",
        "Portuguese": """o a os as um uma uns umas e ou mas de do da dos das em
            no na nos nas com por para sem sobre que como qual quais quando onde
            quem porque se seu sua nao sao esta estao foi ser mais muito entre
            pode podem este isto""",
        "Dutch": """de het een en of maar is zijn was wordt worden werd van in op
            met voor door naar bij uit over tot dat die wat wie waar waarom hoe
            welke niet ook er kan kunnen hebben heeft deze dit""",
    }.items()
}
# Of those, words English uses too ("die casting", "de novo", "per token"):
# they count for a language but cannot tell it from English alone.
ENGLISH_TOO = STOP_WORDS | frozenset(
    """die war man son con sin hay pas sans par plus come per chi ma door van er
    hoe sem lo de et al la le non""".split()
)
# Text in double quotes or guillemets is quoted (a title), not the asker's own.
QUOTED = re.compile(
    '"[^"]*"|\u201c[^\u201d]*\u201d|\u201e[^\u201c\u201d]*[\u201c\u201d]'
    "|\u00ab[^\u00bb]*\u00bb|\u00bb[^\u00ab]*\u00ab"
)
APOSTROPHE = re.compile("['\u2019]")  # "qu'est-ce", "what's"
PUNCTUATION = ".,;:!?¿¡()[]'\"\u2018\u2019\u201c\u201d\u201e\u00ab\u00bb"
# A citation group as models write them: [1], [1, 2], [1-3], or with an en dash.
GROUP = re.compile(r"\[\s*\d{1,3}(?:\s*[-\u2013,;]\s*\d{1,3})*\s*\]")
CITED_NUMBERS = re.compile(r"(\d{1,3})(?:\s*[-\u2013]\s*(\d{1,3}))?")
INTERVAL = re.compile(r"\[\s*\d{1,3}\s*,\s*\d{1,3}\s*\]")  # [0, 1], [2, 8]
ZERO = re.compile(r"(?<!\d)0+(?!\d)")
# An abstract's own reference numbers, after a word and a space: "encoders [1]",
# "irregularities [2, 3]", "trees [21], [68]"; not an interval after "in" or "="
# ("m in [2, 10]"), nor one glued to its word, an index or a name ("ICC[2,1]").
REFERENCE = re.compile(rf"(\S*)\s+((?:{GROUP.pattern})(?:\s*,?\s*{GROUP.pattern})*)")
REFERRED_AFTER = frozenset("in of and or by see cf from to with as on at than".split())
INTERVAL_AFTER = frozenset("in \u2208 = within between range interval".split())
SENTENCE_END = re.compile(r"[.!?]+$")  # "." "!!" "..."
# A list item's mark at the start of a line: "- ", "* ", "• ", "1. ", "2) ".
LIST_MARK = r"(?:[-*\u2022]|\d{1,2}[.)])[ \t]"
LIST_ITEM = re.compile(rf"^{LIST_MARK}\s*")
# A sentence ends at . ! or ? (and the citations right after it) when a capital,
# digit, quote, bracket or TeX starts the next one; at a blank line; or where
# a line starts a list's item (a model asked for plain text may write a list).
BOUNDARY = re.compile(
    rf"[.!?](?:\s*{GROUP.pattern})*(?=\s+[A-Z0-9\"'\u201c\u2018(\\$])|\n\s*\n"
    rf"|\n(?=[ \t]*{LIST_MARK})"
)
ABBREVIATIONS = frozenset(
    "al e.g i.e vs fig figs eq eqs etc cf resp approx no sec ref refs dr prof".split()
)


def question_terms(text: str) -> list[str]:
    """The distinct content words of a question, lower-cased, in order."""
    terms: list[str] = []
    stop_words = STOP_WORDS | FOREIGN_STOP_WORDS.get(
        question_language(text), frozenset()
    )
    for match in WORD.finditer(fold(text)):
        word = match.group(0)
        if word in stop_words or (len(word) < 2 and not word.isdigit()):
            continue
        if word not in terms:
            terms.append(word)
    return terms[:MAX_TERMS]


def question_sequence(text: str) -> list[str | None]:
    """The question's words in order, hyphenated ones by part, lower-cased, with
    None where a stop word stands (so side-by-side content words can be told)."""
    sequence: list[str | None] = []
    stop_words = STOP_WORDS | FOREIGN_STOP_WORDS.get(
        question_language(text), frozenset()
    )
    for match in WORD.finditer(fold(text)):
        for part in match.group(0).split("-"):
            short = len(part) < 2 and not part.isdigit()
            ignored = part in stop_words or part in QUESTION_WORDS or short
            sequence.append(None if ignored else part)
    return sequence


def stem(word: str) -> str:
    """A crude English stem, enough to match "rollouts" with "rollout"."""
    word = word.lower()
    if word.endswith("ly") and len(word) >= 6:
        word = word[:-2]  # "safely" -> "safe", but "apply" and "only" stay
    for suffix, replacement in (
        ("ation", "at"),  # "violation" with "violating"
        ("ies", "y"),
        ("sses", "ss"),
        ("ing", ""),
        ("ed", ""),
        ("es", "e"),
        ("s", ""),
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                return word
            root = word[: -len(suffix)] + replacement
            if suffix in ("ing", "ed") and _doubled(root):
                return root[:-1]  # "planned" and "planning" with "plan"
            return root
    return word


def _doubled(root: str) -> bool:
    return len(root) >= 4 and root[-1] == root[-2] and root[-1] not in "aeioulsz"


def stems(text: str) -> set[str]:
    """The stems of every word of the text (hyphenated words also by part)."""
    found: set[str] = set()
    for match in WORD.finditer(fold(text)):
        word = match.group(0)
        found.add(stem(word))
        if "-" in word:
            found.update(stem(part) for part in word.split("-"))
    return found


def token_stems(text: str) -> list[str]:
    """The stems of the text's words in order, hyphenated words by part."""
    return [
        stem(part)
        for match in WORD.finditer(fold(text))
        for part in match.group(0).split("-")
    ]


def join_names(names: list[str]) -> str:
    """'A', 'A and B', 'A, B and C'."""
    if len(names) < 2:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def split_sentences(text: str) -> list[str]:
    """The sentences of a text, each with the citations written right after it."""
    return [sentence for sentence, _ in _sentences(text)]


def split_complete(text: str) -> tuple[list[str], str]:
    """The sentences known to be complete, and the unfinished rest (streaming)."""
    complete: list[str] = []
    rest = text
    for sentence, end in _sentences(text, final=False):
        complete.append(sentence)
        rest = text[end:]
    return complete, rest.lstrip() if complete else rest


def _sentences(text: str, final: bool = True) -> Iterator[tuple[str, int]]:
    start = 0
    for match in BOUNDARY.finditer(text):
        before = text[start : match.start()].split()
        abbreviated = before and before[-1].lower().rstrip(".") in ABBREVIATIONS
        if match.group(0).startswith(".") and abbreviated:
            continue
        if match.group(0) == "." and "".join(before).isdigit():
            continue  # "2." marks a list's item: its sentence follows
        sentence = LIST_ITEM.sub("", " ".join(text[start : match.end()].split()))
        start = match.end()
        if sentence:
            yield sentence, start
    tail = LIST_ITEM.sub("", " ".join(text[start:].split()))
    if final and tail:
        yield tail, len(text)


def citations_of(sentence: str) -> tuple[list[int], str]:
    """The numbers cited at the end of a sentence (before or after its full
    stop, as the system prompt asks), ranges spelled out, in order and once
    each; and its text without them. Brackets anywhere else are text."""
    text, stop = sentence.strip(), ""
    groups: list[str] = []
    # From the end, so that a long answer costs one pass, not one per bracket.
    while text:
        if not stop and (end := SENTENCE_END.search(text)):
            text, stop = text[: end.start()].rstrip(), end.group()
            continue
        if groups and text[-1] in ",;":  # "[1], [2]."
            text = text[:-1].rstrip()
            continue
        start = text.rfind("[")
        group = text[start:] if start >= 0 else ""
        # An interval before the citations ("k in [2, 8] [4].") is text, and
        # so is one from 0 ("in [0, 1]."): sources are numbered from 1.
        if (
            not GROUP.fullmatch(group)
            or (groups and INTERVAL.fullmatch(group))
            or ZERO.search(group)
        ):
            break
        groups.append(group)
        text = text[:start].rstrip()
    numbers: dict[int, None] = {}  # in order, once each
    for group in reversed(groups):
        for first, last in CITED_NUMBERS.findall(group):
            numbers.update(dict.fromkeys(range(int(first), int(last or first) + 1)))
    return list(numbers), text if text.endswith(stop) else text + stop


def without_references(sentence: str) -> str | None:
    """The sentence without the bracketed reference numbers of its paper's own
    bibliography, which in an answer would read as its citations; None when
    one is a word of the sentence ("as shown in [12]"), which cannot go."""
    kept: list[str | None] = []

    def drop(match: re.Match[str]) -> str:
        word, group = match.groups()
        if ZERO.search(group) or (
            INTERVAL.fullmatch(group) and fold(word) in INTERVAL_AFTER
        ):
            return match.group(0)
        if fold(word).rstrip(".") in REFERRED_AFTER:
            kept.append(None)
        return word

    edited = REFERENCE.sub(drop, sentence)
    return None if kept else edited


def written_in_latin(text: str) -> bool:
    """Whether the text's letters (if any) include Latin ones: a question in
    Chinese or Arabic has no word to match the papers' English."""
    letters = [character for character in text if character.isalpha()]
    return not letters or any(
        unicodedata.name(character, "").startswith("LATIN") for character in letters
    )


def question_language(text: str) -> str:
    """The other language a question in Latin letters is evidently written in
    ("German"), or "" for English or too little to tell: at least two of its
    words, one of them no English word, are that language's stop words, and
    more of them than are English ones. Quoted text (a title) does not count,
    so "Was ist RLHF?" is German and "What does "Die Welt" say?" is English."""
    words = [
        fold(word)
        for word in (
            part.strip(PUNCTUATION)
            for part in APOSTROPHE.sub(" ", QUOTED.sub(" ", text)).split()
        )
        # No language's stop word is hyphenated ("Non-convex", "O-RAN") or an
        # acronym ("KAN").
        if word.isalpha() and not (word.isupper() and len(word) > 1)
    ]
    english = sum(word in STOP_WORDS for word in words)
    best, most = "", english
    for language, stop_words in FOREIGN_STOP_WORDS.items():
        found = [word for word in words if word in stop_words]
        own = any(word not in ENGLISH_TOO for word in found)
        if len(found) >= 2 and own and len(found) > most:
            best, most = language, len(found)
    return best
