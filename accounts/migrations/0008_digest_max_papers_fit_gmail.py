"""At most 50 papers a digest (accounts.models.DIGEST_MAX_PAPERS): a reader who
asked for more gets 50, and the rest counted and linked under "More new papers"."""

from django.db import migrations
from django.db import models

MOST = 50


def clamp(apps, schema_editor):
    preferences = apps.get_model("accounts", "DigestPreferences")
    preferences.objects.filter(max_papers__gt=MOST).update(max_papers=MOST)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0007_time_zones_are_places"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="digestpreferences",
            name="digest_max_papers_1_200",
        ),
        # Reversed, the smaller caps stand: they are within the old range.
        migrations.RunPython(clamp, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="digestpreferences",
            constraint=models.CheckConstraint(
                condition=models.Q(("max_papers__gte", 1), ("max_papers__lte", MOST)),
                name="digest_max_papers_in_range",
            ),
        ),
    ]
