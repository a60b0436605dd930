"""Search finds a word however its accents are written: B\\'ezier (TeX, as
arXiv's metadata often has it), Bézier and Bezier are one word.

Both databases index each paper's text through `papers_plain_letters`, which
writes TeX's accented and special letters as plain ones (papers.letters, whose
`plain_letters` is the same function in Python), and compare words without
their accents:
- PostgreSQL: the unaccent extension (trusted: a database owner may create it)
  in two text search configurations, momentum_english (stemmed: titles and
  abstracts) and momentum_names (unstemmed: author names), used by the search
  vector's trigger and by every query against it (papers.search). Every
  paper's vector is computed again here (a minute per 100,000 papers), and
  analyzed; the table's size doubles until VACUUM (README, Upgrades).
- SQLite: FTS5's tokenizer removes accents already (migration 0005); its
  triggers now read the text through papers_plain_letters, a Python function
  each connection registers (papers.apps), and the FTS5 tables are filled again.
"""

from django.db import migrations

# --- PostgreSQL --------------------------------------------------------------

# papers.letters' RING_A, SPECIAL_LETTER and ACCENT, in that order, as
# PostgreSQL's regular expressions write them.
SPECIAL = "(ss|ae|AE|oe|OE|o|O|l|L|i|j)"
ACCENT = r"""\\(?:[`'^"~=.]\s*|[uvHckrbdt](?:\s+|(?=\{)))"""
LETTER = r"(?:\{\s*([A-Za-z])\s*\}|([A-Za-z]))"
STEPS = [
    (r"\{\\([aA])\1\}|\\([aA])\2(?![A-Za-z])", r"\1\2"),
    (rf"\{{\\{SPECIAL}\}}|\\{SPECIAL}(?![A-Za-z])", r"\1\2"),
    (rf"\{{{ACCENT}{LETTER}\}}|{ACCENT}{LETTER}", r"\1\2\3\4"),
]


def _literal(text):
    return "'" + text.replace("'", "''") + "'"


def _plain_letters_sql():
    sql = "t"
    for pattern, replacement in STEPS:
        sql = f"regexp_replace({sql}, {_literal(pattern)}, {_literal(replacement)}, 'g')"
    return sql


def _vector(english, names, letters):
    return f"""
CREATE OR REPLACE FUNCTION papers_paper_search_vector_update() RETURNS trigger AS $$
BEGIN
    NEW.search_vector :=
        setweight(to_tsvector('{english}', {letters}(coalesce(NEW.title, ''))), 'A') ||
        setweight(to_tsvector('{names}', {letters}(coalesce(NEW.author_names, ''))), 'B') ||
        setweight(to_tsvector('{english}', {letters}(coalesce(NEW.abstract, ''))), 'C');
    RETURN NEW;
END
$$ LANGUAGE plpgsql;

-- Every paper's vector again, through the trigger; then the planner's
-- statistics of them (bench.scale at 100,000 papers: searches right after this
-- update took 2.7 times as long as after VACUUM ANALYZE; README, Upgrades).
UPDATE papers_paper SET title = title;
ANALYZE papers_paper;
"""


POSTGRESQL = (
    f"""
CREATE EXTENSION IF NOT EXISTS unaccent;
CREATE TEXT SEARCH CONFIGURATION momentum_english (COPY = english);
ALTER TEXT SEARCH CONFIGURATION momentum_english
    ALTER MAPPING FOR hword, hword_part, word WITH unaccent, english_stem;
CREATE TEXT SEARCH CONFIGURATION momentum_names (COPY = simple);
ALTER TEXT SEARCH CONFIGURATION momentum_names
    ALTER MAPPING FOR hword, hword_part, word WITH unaccent, simple;

CREATE FUNCTION papers_plain_letters(t text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT CASE WHEN strpos(t, '\\') = 0 THEN t ELSE {_plain_letters_sql()} END
$$;
"""
    + _vector("momentum_english", "momentum_names", "papers_plain_letters")
)

POSTGRESQL_BACK = (
    _vector("english", "simple", "")
    + """
DROP FUNCTION papers_plain_letters(text);
DROP TEXT SEARCH CONFIGURATION momentum_names;
DROP TEXT SEARCH CONFIGURATION momentum_english;
"""
)

# --- SQLite ------------------------------------------------------------------

TEXT = "papers_paper_fts"
AUTHORS = "papers_paper_fts_authors"


def _fts(letters):
    """Migration 0005's triggers and index, the text read through `letters`."""
    title, abstract, names = (
        f"{letters}({row}.{column})"
        for row, column in (
            ("new", "title"),
            ("new", "abstract"),
            ("new", "author_names"),
        )
    )
    insert = f"""
        INSERT INTO {TEXT} (rowid, title, abstract, author_names)
            VALUES (new.id, {title}, {abstract}, {names});
        INSERT INTO {AUTHORS} (rowid, author_names) VALUES (new.id, {names});"""
    return [
        "DROP TRIGGER papers_paper_fts_insert",
        "DROP TRIGGER papers_paper_fts_update",
        f"""CREATE TRIGGER papers_paper_fts_insert AFTER INSERT ON papers_paper
        BEGIN {insert}
        END""",
        f"""CREATE TRIGGER papers_paper_fts_update
        AFTER UPDATE OF title, abstract, author_names ON papers_paper
        WHEN old.title IS NOT new.title OR old.abstract IS NOT new.abstract
            OR old.author_names IS NOT new.author_names
        BEGIN
            DELETE FROM {TEXT} WHERE rowid = old.id;
            DELETE FROM {AUTHORS} WHERE rowid = old.id;{insert}
        END""",
        f"DELETE FROM {TEXT}",
        f"DELETE FROM {AUTHORS}",
        f"""INSERT INTO {TEXT} (rowid, title, abstract, author_names)
            SELECT id, {letters}(title), {letters}(abstract), {letters}(author_names)
            FROM papers_paper""",
        f"""INSERT INTO {AUTHORS} (rowid, author_names)
            SELECT id, {letters}(author_names) FROM papers_paper""",
    ]


def run(postgresql, sqlite):
    def operation(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(postgresql)
        elif schema_editor.connection.vendor == "sqlite":
            for statement in sqlite:
                schema_editor.execute(statement)

    return operation


class Migration(migrations.Migration):
    dependencies = [("papers", "0013_feedsource_api_resume_at")]

    operations = [
        migrations.RunPython(
            run(POSTGRESQL, _fts("papers_plain_letters")),
            run(POSTGRESQL_BACK, _fts("")),
        ),
    ]
