"""A saved search's mark becomes a time (papers written up to it were matched)
instead of a paper id, so that a changed paper is matched again."""

from django.db import migrations, models
from django.db.models import Max


def mark_by_time(apps, schema_editor):
    """Each search was matched through a paper id: its mark is the latest
    write among the papers up to that id."""
    SavedSearch = apps.get_model("topics", "SavedSearch")
    Paper = apps.get_model("papers", "Paper")
    for search in SavedSearch.objects.all():
        written = Paper.objects.filter(pk__lte=search.checked_through)
        search.checked_until = written.aggregate(latest=Max("modified_at"))["latest"]
        search.save(update_fields=["checked_until"])


class Migration(migrations.Migration):
    dependencies = [
        ("papers", "0009_reader_models"),
        ("topics", "0011_saved_searches"),
    ]

    operations = [
        migrations.AddField(
            model_name="savedsearch",
            name="checked_until",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(mark_by_time, migrations.RunPython.noop),
        migrations.RemoveField(model_name="savedsearch", name="checked_through"),
    ]
