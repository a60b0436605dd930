"""A deferred digest's retry time gets a field of its own (Digest.retry_at),
before which no sender claims it. It was kept in enqueued_at, set in the
future: a digest deferred so when this runs keeps its pause."""

from django.db import migrations
from django.db import models
from django.db.models import F
from django.utils import timezone


def keep_pauses(apps, schema_editor):
    digest = apps.get_model("notifications", "Digest")
    # Only a deferral put enqueued_at in the future.
    digest.objects.filter(status="pending", enqueued_at__gt=timezone.now()).update(
        retry_at=F("enqueued_at")
    )


class Migration(migrations.Migration):
    dependencies = [
        ("notifications", "0002_digest_recent_index_frequency_choices"),
    ]

    operations = [
        migrations.AddField(
            model_name="digest",
            name="retry_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        # Reversed, the field goes: the tick then waits for enqueued_at, as before.
        migrations.RunPython(keep_pauses, migrations.RunPython.noop),
    ]
