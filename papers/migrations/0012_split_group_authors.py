"""Authors printed after a group and a colon ("Gemma Team: Sherif El Abd, ...")
were stored as one author; ingest now reads the colon as arXiv's own parser
does, as a separator. This splits the authors stored before (papers.identity).

It runs a copy of ingest's reading of names (papers.ingest.authors'
split_authors and clean_name, and what they call; names only) as it stood
when migration 0019 was written: a migration keeps its meaning should ingest
change. Migrations 0017 and 0019 clean names and affiliations with it."""

import re
import unicodedata

import ftfy
from django.db import migrations
from ftfy.fixes import fix_surrogates
from pylatexenc.latex2text import LatexNodes2Text, get_default_latex_context_db

# core.text.CONTROL, and papers.identity's key of a printed name.
CONTROL = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f"
    "\u202a-\u202e\u2066-\u2069\ufffe\uffff]"
)
MAX_KEY_LENGTH = 400
KEY_SEPARATORS = re.compile(r"[\W_]+")

MAX_NAME_LENGTH = 300
LATEX = LatexNodes2Text()
LATEX_MACROS = get_default_latex_context_db()
LATEX_HINT = re.compile(r"[\\{}~$]|``|''")
GLUED_ACCENT = re.compile(r"\\([cvuHk])([A-Za-z]+)")
SEPARATOR = re.compile(r"\s*(?:[,;:&]|\band\b)\s*")
FOOTNOTE_REF = re.compile(r"\s*\d+(?:\s*(?:,|&|and)\s*(?:and\s+)?\d+)*\s*")
FOOTNOTE_MARK = re.compile(r"\((\d+)\)")
GLUED_INITIAL = re.compile(r"\b([^\W\d_]{1,2}\.)(?=[^\W\d_])")
SUFFIXES = frozenset({"Jr", "Jr.", "Sr", "Sr.", "II", "III", "IV"})
NOT_AUTHORS = frozenset({"et al", "et al.", "others"})
ET_AL = re.compile(r"\s+et\s+al\.?$")
MASK = "\x00"
LAST_GROUP = re.compile(rf"\({MASK}*\)?[\s.]*$")


def author_key(name):
    decomposed = unicodedata.normalize("NFKD", name)
    bare = "".join(char for char in decomposed if not unicodedata.combining(char))
    return KEY_SEPARATORS.sub(" ", bare.casefold()).strip()[:MAX_KEY_LENGTH]


def shown(text):
    return CONTROL.sub("", text)


def repair_text(text):
    if text.isascii():
        return text
    return unicodedata.normalize("NFC", ftfy.fix_encoding(fix_surrogates(text)))


def delatex(text):
    if not LATEX_HINT.search(text):
        return text
    # A bare % starts a LaTeX comment and would swallow the rest of the name.
    text = GLUED_ACCENT.sub(_unglue_accent, text.replace("%", r"\%"))
    try:
        return str(LATEX.latex_to_text(text))
    except Exception:  # pylatexenc raises assorted errors on malformed input
        return text


def _unglue_accent(match):
    accent, letters = match.groups()
    if LATEX_MACROS.get_macro_spec(accent + letters) is not None:
        return match.group(0)
    return f"\\{accent}{{{letters[0]}}}{letters[1:]}"


def clean_name(text):
    name = shown(" ".join(delatex(repair_text(text)).split())).strip(" ,;")
    name = GLUED_INITIAL.sub(_space_initial, name)
    return name[:MAX_NAME_LENGTH]


def _space_initial(match):
    initial = match.group(1)
    return f"{initial} " if initial[0].isupper() else initial


def split_names(raw):
    """The names split_authors reads from arXiv's raw author string."""
    text = _cut_footnote_block(shown(" ".join(raw.split())))
    drafts = []
    for chunk in _split_outside_parens(text):
        drafts.extend(_chunk_drafts(chunk))
    names = []
    for draft_name in drafts:
        if names and (not draft_name or draft_name in SUFFIXES):
            names.append(clean_name(f"{names.pop()} {draft_name}"))
            continue
        name = clean_name(ET_AL.sub("", draft_name))
        if name and name.lower() not in NOT_AUTHORS:
            names.append(name)
    return names


def _mask_parens(text):
    masked, depth = [], 0
    for char in text:
        if char == ")" and depth:
            depth -= 1
        masked.append(MASK if depth else char)
        if char == "(":
            depth += 1
    return "".join(masked)


def _cut_footnote_block(text):
    last_group = LAST_GROUP.search(_mask_parens(text))
    if last_group is None:
        return text
    start = last_group.start()
    inner = text[start + 1 : last_group.end()].strip(" .")
    inner = inner[:-1] if inner.endswith(")") else inner
    if not FOOTNOTE_MARK.match(inner):
        return text
    return text[:start].rstrip(" ,")


def _split_outside_parens(text):
    masked = _mask_parens(text)
    chunks, begin = [], 0
    for match in SEPARATOR.finditer(masked):
        chunks.append(text[begin : match.start()])
        begin = match.end()
    chunks.append(text[begin:])
    return [chunk for chunk in chunks if chunk.strip()]


def _chunk_parts(chunk):
    masked = _mask_parens(chunk)
    parts, pos = [], 0
    for match in re.finditer(rf"\({MASK}*\)?", masked):
        parts.append((False, chunk[pos : match.start()]))
        inner = chunk[match.start() + 1 : match.end()]
        parts.append((True, inner[:-1] if inner.endswith(")") else inner))
        pos = match.end()
    parts.append((False, chunk[pos:]))
    return [(is_group, text.strip()) for is_group, text in parts if text.strip()]


def _chunk_drafts(chunk):
    """The chunk's names (its groups read as affiliations, which this leaves)."""
    drafts = [["", []]]
    for is_group, text in _chunk_parts(chunk):
        current = drafts[-1]
        if is_group:
            current[1].append(text)
        elif not current[1]:
            current[0] = f"{current[0]} {text}".strip()
        elif len(text.split()) == 1 and current[0]:
            # "Tenglong (Victor) Gu": a parenthesis inside a name is a nickname.
            current[0] = f"{current[0]} ({current[1].pop()}) {text}"
        else:
            drafts.append([text, []])
    return [name for name, _ in drafts]


def split(apps, schema_editor):
    """Split each joined author into the group and the person, in their place on
    each paper; follows go to the person, and the joined author is removed."""
    Author = apps.get_model("papers", "Author")
    Authorship = apps.get_model("papers", "Authorship")
    AuthorFollow = apps.get_model("papers", "AuthorFollow")
    for joined in Author.objects.filter(name__contains=":"):
        names = split_names(joined.name)
        if len(names) < 2:
            continue
        ids = [_author_id(Author, name) for name in names]
        *groups, person = ids
        for authorship in Authorship.objects.filter(author_id=joined.pk):
            # Later authors move down one by one: a single UPDATE would collide
            # with the (paper, position) constraint on the way.
            later = Authorship.objects.filter(
                paper_id=authorship.paper_id, position__gt=authorship.position
            ).order_by("-position")
            for other in later:
                other.position += len(groups)
                other.save(update_fields=["position"])
            place = authorship.position
            # The person keeps the authorship and with it its affiliations.
            authorship.author_id, authorship.position = person, place + len(groups)
            authorship.save(update_fields=["author_id", "position"])
            Authorship.objects.bulk_create(
                Authorship(paper_id=authorship.paper_id, author_id=pk, position=n)
                for n, pk in enumerate(groups, place)
            )
        kept = AuthorFollow.objects.filter(author_id=person).values("user_id")
        AuthorFollow.objects.filter(author_id=joined.pk, user_id__in=kept).delete()
        AuthorFollow.objects.filter(author_id=joined.pk).update(author_id=person)
        joined.delete()


def _author_id(Author, name):
    key = author_key(name)
    author = Author.objects.filter(key=key).first()
    return (author or Author.objects.create(name=name, key=key)).pk


class Migration(migrations.Migration):

    dependencies = [
        ("papers", "0011_search_vector_inline"),
    ]

    operations = [
        migrations.RunPython(split, migrations.RunPython.noop),
    ]
