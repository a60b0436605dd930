"""Authors printed after a group and a colon ("Gemma Team: Sherif El Abd, ...")
were stored as one author; ingest now reads the colon as arXiv's own parser
does, as a separator. This splits the authors stored before (papers.identity)."""

from django.db import migrations

from papers.identity import split_group_authors


def split(apps, schema_editor):
    split_group_authors(
        apps.get_model("papers", "Author"),
        apps.get_model("papers", "Authorship"),
        apps.get_model("papers", "AuthorFollow"),
    )


class Migration(migrations.Migration):

    dependencies = [
        ("papers", "0011_search_vector_inline"),
    ]

    operations = [
        migrations.RunPython(split, migrations.RunPython.noop),
    ]
