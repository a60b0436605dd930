"""PostgreSQL: keep each paper's search vector in its row, not in TOAST.

A vector (about 1.7 KB) made the row pass the 2 KB at which PostgreSQL moves
its largest value out of line, so every search read each candidate's vector
from the TOAST table, twice (the match's recheck and ts_rank): about five
buffers a paper. STORAGE MAIN keeps the vector in the row, and a 4 KB
toast_tuple_target lets a row that size stay whole (a longer abstract is still
compressed first). Rows written from now on are stored so; rows already there
keep their layout until rewritten: `VACUUM FULL papers_paper` (README, Upgrades).
SQLite has no vector column: nothing to do there.
"""

from django.db import migrations

INLINE = """
ALTER TABLE papers_paper SET (toast_tuple_target = 4080);
ALTER TABLE papers_paper ALTER COLUMN search_vector SET STORAGE MAIN;
"""

OUT_OF_LINE = """
ALTER TABLE papers_paper RESET (toast_tuple_target);
ALTER TABLE papers_paper ALTER COLUMN search_vector SET STORAGE EXTENDED;
"""


def run_on_postgresql(sql):
    def operation(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql)

    return operation


class Migration(migrations.Migration):
    dependencies = [("papers", "0010_paper_modified_idx")]

    operations = [
        migrations.RunPython(run_on_postgresql(INLINE), run_on_postgresql(OUT_OF_LINE)),
    ]
