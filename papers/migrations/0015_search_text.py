"""Search finds a title as its page shows it: H$^2$SD (shown H²SD, which a
query's NFKC makes H2SD) is the word H2SD, Greek letters are spelled out (the
α typed and the $\\alpha$ of arXiv's TeX are both "alpha", and $\\tau$-Rec is
tau-Rec, as τ-Rec typed is), and the letters no decomposition makes plain (ø,
ł, æ) are (on SQLite, whose tokenizer kept them; PostgreSQL's unaccent wrote
them so already).

Both databases index each paper's text through `papers_search_text`, migration
0014's `papers_plain_letters` and then these steps (papers.letters'
`search_text` is the same function in Python). As in 0014, every paper's
vector is computed again (a minute per 100,000 papers) and analyzed, and
SQLite's FTS5 tables are filled again (README, Upgrades).
"""

import importlib

from django.db import migrations

letters_0014 = importlib.import_module("papers.migrations.0014_search_plain_letters")

# papers.letters.GLUED_SCRIPT, GREEK_MATH and SPELLED as they were written for this
# migration.
GLUED_SCRIPT = r"([A-Za-z])\$[\^_]\{?([0-9]+)\}?\$"
_GREEK = dict(
    zip(
        "αβγδεζηθικλμνξοπρστυφχψωϑϕϖϱ",
        """alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi
        omicron pi rho sigma tau upsilon phi chi psi omega theta phi pi rho""".split(),
        strict=True,
    )
)
_TEX_CAPITALS = "Gamma Delta Theta Lambda Xi Pi Sigma Upsilon Phi Psi Omega"
_TEX_GREEK = "|".join([*dict.fromkeys(_GREEK.values()), *_TEX_CAPITALS.split()])
GREEK_MATH = rf"\$\\(?:var)?({_TEX_GREEK})\$"
SPELLED = (
    _GREEK
    | {letter.upper(): name.capitalize() for letter, name in _GREEK.items()}
    | {"ς": "sigma", "ø": "o", "đ": "d", "ð": "d", "ł": "l", "æ": "ae", "œ": "oe"}
    | {"þ": "th", "\u0131": "i", "Ø": "O", "Đ": "D", "Ð": "D", "Ł": "L", "Æ": "AE"}
    | {"Œ": "OE", "Þ": "TH", "ß": "ss"}
    | {"ά": "alpha", "έ": "epsilon", "ή": "eta", "ί": "iota", "ό": "omicron"}
    | {"ύ": "upsilon", "ώ": "omega", "ϊ": "iota", "ϋ": "upsilon", "ΐ": "iota"}
    | {"ΰ": "upsilon", "Ά": "Alpha", "Έ": "Epsilon", "Ή": "Eta", "Ί": "Iota"}
    | {"Ό": "Omicron", "Ύ": "Upsilon", "Ώ": "Omega", "Ϊ": "Iota", "Ϋ": "Upsilon"}
)


def _spelled_sql(text):
    for letter, spelled in SPELLED.items():
        text = f"replace({text}, {letters_0014._literal(letter)}, {letters_0014._literal(spelled)})"
    return text


POSTGRESQL = (
    f"""
CREATE FUNCTION papers_search_text(t text) RETURNS text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
    t := papers_plain_letters(t);
    IF strpos(t, '$') > 0 THEN
        t := regexp_replace(t, {letters_0014._literal(GLUED_SCRIPT)}, '\\1\\2', 'g');
        t := regexp_replace(t, {letters_0014._literal(GREEK_MATH)}, '\\1', 'g');
    END IF;
    IF octet_length(t) > length(t) THEN  -- not ASCII
        t := {_spelled_sql("t")};
    END IF;
    RETURN t;
END
$$;
"""
    + letters_0014._vector("momentum_english", "momentum_names", "papers_search_text")
)

POSTGRESQL_BACK = (
    letters_0014._vector("momentum_english", "momentum_names", "papers_plain_letters")
    + "DROP FUNCTION papers_search_text(text);"
)


class Migration(migrations.Migration):
    dependencies = [("papers", "0014_search_plain_letters")]

    operations = [
        migrations.RunPython(
            letters_0014.run(POSTGRESQL, letters_0014._fts("papers_search_text")),
            letters_0014.run(POSTGRESQL_BACK, letters_0014._fts("papers_plain_letters")),
        ),
    ]
