"""Saved searches stored before queries were kept without the spaces around
them (topics.saved_searches.create_search): stripped as a save now keeps
them, so the search page finds them by the query it reads ("Saved as")."""

from django.db import migrations


def strip_queries(apps, schema_editor):
    SavedSearch = apps.get_model("topics", "SavedSearch")
    for search in SavedSearch.objects.only("query").iterator():
        if search.query != search.query.strip():
            search.query = search.query.strip()
            search.save(update_fields=["query"])


class Migration(migrations.Migration):
    dependencies = [
        ("topics", "0021_topic_text_without_page_breaks"),
    ]

    operations = [
        migrations.RunPython(strip_queries, migrations.RunPython.noop),
    ]
